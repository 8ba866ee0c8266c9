// pgvector is optional: the adapter detects it on open. Where the server lacks it this file skips
// with the reason; lexical recall is covered by the conformance suite either way.
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { detectVector } from '../src/store/postgres/postgres-store.js';
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

after(async () => f?.cleanup());
