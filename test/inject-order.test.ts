// The session-start candidates (engine/inject.ts) are read from the index in weight order, one
// index walk per scope, instead of sorting every current row. These tests hold the indexed read
// to the order a full scan gives: weights from a sleep pass, weights carried to a new revision,
// project and global merged, another project absent; and an index of the older schema is
// dropped and rebuilt from the files rather than set aside as corrupt.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import type BetterSqlite3 from 'better-sqlite3';
import { trustRank } from '../src/core/types.js';
import { FileStore } from '../src/store/files/file-store.js';
import { AGENT, HUMAN, PROJECT_A, PROJECT_B, engineFor, testClock, tmpDir } from './helpers.js';

const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;

async function fixture() {
  const dir = tmpDir();
  const store = await FileStore.open(dir, { durable: false });
  const clock = testClock('2026-01-01T00:00:00.000Z');
  const a = engineFor(store, PROJECT_A, clock);
  const b = engineFor(store, PROJECT_B, clock);
  const ids: Record<string, string> = {};
  const rem = async (e: typeof a, name: string, extra: Record<string, unknown> = {}) => {
    clock.advance(1000);
    const [r] = await e.apply(
      [{ op: 'remember', type: 'fact', abstract: `The ${name} service owns its queue`, ...extra }],
      name.startsWith('human') ? HUMAN : AGENT,
    );
    ids[name] = r!.id;
  };
  for (const name of ['orders', 'billing', 'search', 'humanauth', 'mail', 'ledger', 'audit'])
    await rem(a, name);
  for (const name of ['cdn', 'humandns']) await rem(a, name, { global: true });
  await rem(b, 'bravo');
  return { dir, store, clock, a, b, ids };
}

/** What a full scan says: every current active row of the scopes, in the documented order. */
async function scanOrder(store: FileStore, scopes: string[]): Promise<string[]> {
  const views = await store.listCurrent(scopes);
  const w = store.cachedWeights();
  return views
    .map((v) => ({ v, w: w.get(v.id) ?? 1 }))
    .sort(
      (x, y) =>
        y.w - x.w ||
        trustRank(y.v.trust) - trustRank(x.v.trust) ||
        (y.v.recorded_at < x.v.recorded_at ? -1 : y.v.recorded_at > x.v.recorded_at ? 1 : 0) ||
        (x.v.id < y.v.id ? -1 : 1),
    )
    .map((x) => x.v.id);
}

const candidates = async (store: FileStore, scopes: string[], now: string, limit: number) =>
  (await store.injectCandidates({ scopes, now, limit, excludeTypes: ['handoff'] })).map(
    (h) => h.head.id,
  );

describe('session-start candidates read in weight order from the index', () => {
  it('equal a full scan, follow sleep weights and new revisions, and never include another project', async () => {
    const { dir, store, clock, a, ids } = await fixture();
    const scopes = [PROJECT_A, 'global'];
    const now = () => clock().toISOString();
    // Usage moves weights against recency: the oldest memory is read and recalled (it rises),
    // the newest project memory is injected and ignored (it falls).
    for (let i = 0; i < 3; i++) {
      clock.advance(60_000);
      await a.recall('orders');
      await a.read(ids.orders!);
    }
    await store.appendUsage([
      { at: now(), kind: 'ignored', ids: [ids.audit!], actor: 'hook', scope: PROJECT_A },
    ]);
    clock.advance(60_000);
    assert.ok((await a.sleep()).changed);

    const expected = await scanOrder(store, scopes);
    assert.equal(expected.length, 9);
    assert.equal(expected[0], ids.orders, 'weight outranks recency');
    assert.equal(expected.at(-1), ids.audit);
    assert.deepEqual(await candidates(store, scopes, now(), 100), expected);
    // A small limit is the scan's head: each scope's walk stops early and the merge keeps order.
    assert.deepEqual(await candidates(store, scopes, now(), 3), expected.slice(0, 3));
    const all = await candidates(store, scopes, now(), 100);
    assert.ok(all.includes(ids.cdn!) && all.includes(ids.ledger!), 'global and project served');
    assert.ok(!all.includes(ids.bravo!), 'another project is never a candidate');

    // The heaviest memory keeps its weight through a new revision (its rows are replaced).
    const top = expected[0]!;
    clock.advance(1000);
    await a.apply([{ op: 'supersede', id: top, abstract: 'A revised abstract' }], AGENT);
    const after = await candidates(store, scopes, now(), 100);
    assert.equal(after[0], top);
    assert.deepEqual(after, await scanOrder(store, scopes));

    // Rebuild replays the same weights into the same order.
    await a.rebuild();
    assert.deepEqual(await candidates(store, scopes, now(), 100), after);
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('an index of the older schema is dropped and rebuilt from the files, not set aside', async () => {
    const { dir, store, clock, ids } = await fixture();
    await store.close();
    const file = path.join(dir, '.index', 'mneme.db');
    const db = new Database(file);
    db.exec(`DROP INDEX rev_inject; DROP INDEX rev_inject_type; ALTER TABLE rev DROP COLUMN w;
      UPDATE meta SET v = '1' WHERE k = 'schema'`);
    db.close();
    const reopened = await FileStore.open(dir, { durable: false });
    const e = engineFor(reopened, PROJECT_A, clock);
    const got = await candidates(reopened, [PROJECT_A, 'global'], clock().toISOString(), 100);
    assert.equal(got.length, 9);
    assert.ok(got.includes(ids.audit!) && !got.includes(ids.bravo!));
    const hit = await e.recall('ledger');
    assert.equal(hit.results[0]?.id, ids.ledger);
    assert.deepEqual(
      fs.readdirSync(path.join(dir, '.index')).filter((f) => f.includes('corrupt')),
      [],
    );
    await reopened.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
