// Readable project names come from the engine, on both stores: a write through a binding made
// from a remote records the remote as its project's name; every project is listed by name with
// its count, another project under its own name; a binding made from a bare id never renames.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SchemaRegistry } from '../src/core/schema.js';
import { scopeFromRemote } from '../src/core/scope.js';
import { Engine } from '../src/engine/engine.js';
import { FileStore } from '../src/store/files/file-store.js';
import type { Store } from '../src/store/port.js';
import { HUMAN, tmpDir } from './helpers.js';
import { pgSkipReason, throwawayStore } from './pg-fixtures.js';

const pgSkip = await pgSkipReason();

const engineOn = (store: Store, project: string | null, identity: string | null) =>
  new Engine({
    store,
    clock: () => new Date('2026-06-01T00:00:00Z'),
    registry: new SchemaRegistry(),
    binding: { project, identity },
    surface: 'human',
  });

async function scenario(store: Store) {
  const shop = scopeFromRemote('git@github.com:acme/shop.git');
  const billing = scopeFromRemote('https://github.com/acme/billing');
  const remember = (e: Engine, abstract: string) =>
    e.apply([{ op: 'remember', type: 'fact', abstract }], HUMAN);
  await remember(engineOn(store, shop.scope, shop.identity), 'Shop: orders ship from Lyon');
  await remember(engineOn(store, shop.scope, shop.identity), 'Shop: refunds take 5 days');
  await remember(engineOn(store, billing.scope, billing.identity), 'Billing: invoices per tenant');
  // A binding from the bare id (identity = the id) writes but names nothing.
  await remember(engineOn(store, billing.scope, billing.scope), 'Billing: VAT is 20%');
  await remember(engineOn(store, null, null), 'Global: commit messages say why');

  const list = await engineOn(store, null, null).everyProject().projects();
  assert.deepEqual(list, [
    { scope: billing.scope, name: billing.identity, named: true, memories: 2 },
    { scope: shop.scope, name: shop.identity, named: true, memories: 2 },
  ]);
  assert.equal(shop.identity, 'github.com/acme/shop');
  // A project nobody named yet is listed by its slug, not as its opaque id.
  const other = scopeFromRemote('git@github.com:acme/other.git');
  await remember(engineOn(store, other.scope, other.scope), 'Other: unnamed');
  const again = await engineOn(store, null, null).everyProject().projects();
  assert.deepEqual(
    again.find((p) => p.scope === other.scope),
    { scope: other.scope, name: 'acme-other', named: false, memories: 1 },
  );
  // The agent surface has no view across projects.
  const agent = new Engine({
    store,
    clock: () => new Date(),
    registry: new SchemaRegistry(),
    binding: { project: shop.scope, identity: shop.identity },
    surface: 'agent',
  });
  assert.throws(() => agent.everyProject(), /for a person/);
}

describe('project names', () => {
  it('files: recorded on write, listed by name with counts', async () => {
    const store = await FileStore.open(tmpDir('mneme-names-'), { durable: false });
    try {
      await scenario(store);
    } finally {
      await store.close();
    }
  });
  it('postgres: the same', { skip: pgSkip ?? false }, async () => {
    const t = await throwawayStore();
    try {
      await scenario(t.store);
    } finally {
      await t.cleanup();
    }
  });
});
