// pgvector is optional: the adapter detects it on open. Where the server lacks it this file skips
// with the reason; lexical recall is covered by the conformance suite either way.
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { hashEmbedder } from '../src/core/embed.js';
import { SchemaRegistry } from '../src/core/schema.js';
import { Engine } from '../src/engine/engine.js';
import { detectVector } from '../src/store/postgres/postgres-store.js';
import { HUMAN, PROJECT_A, testClock } from './helpers.js';
import { pgSkipReason, throwawayStore } from './pg-fixtures.js';

const down = await pgSkipReason();
const f = down ? null : await throwawayStore();
const hasVector = f ? await detectVector(f.store.pool) : false;
const skip =
  down ??
  (hasVector
    ? false
    : 'the pgvector extension is not installed on this server (e.g. apt install postgresql-15-pgvector); recall is lexical only');
if (skip) console.log(`# skipping the pgvector path: ${skip}`);

it('detects pgvector on open and can enable it', { skip }, async () => {
  assert.equal(f!.store.vectorAvailable, true);
  await f!.store.pool.query('CREATE EXTENSION IF NOT EXISTS vector');
  const { rows } = await f!.store.pool.query("SELECT '[1,2,3]'::vector <-> '[1,2,4]'::vector AS d");
  assert.equal(Number(rows[0].d), 1);
});

it('reports the absence of pgvector where the server lacks it', { skip: down ?? hasVector }, () => {
  assert.equal(f!.store.vectorAvailable, false);
});

it(
  'the vector arm is not wired to Postgres: recall refuses with what to do, writes still work',
  { skip: down ?? false },
  async () => {
    const e = new Engine({
      store: f!.store,
      clock: testClock(),
      registry: new SchemaRegistry(),
      binding: { project: PROJECT_A, identity: PROJECT_A },
      surface: 'human',
      embedder: hashEmbedder(),
    });
    const [w] = await e.apply(
      [{ op: 'remember', type: 'fact', abstract: 'Postgres holds this' }],
      HUMAN,
    );
    assert.ok(w!.id, 'the write is not affected');
    await assert.rejects(e.recall('postgres'), (err: { code?: string; hint?: string }) => {
      assert.equal(err.code, 'refused');
      assert.match(err.hint!, /unset MNEME_EMBEDDER/);
      return true;
    });
    const status = await e.status();
    assert.equal(status.vector.on, true);
    assert.match((status.vector as { error: string }).error, /postgres store has no vector arm/);
  },
);

after(async () => f?.cleanup());
