// `mneme bench serve --keep` then `--reuse-db`: a kept database is reused without seeding, in
// the open loop (`--rate`) as in the closed one, with the after-run checks (every acknowledged
// write present, journals verify, no foreign results) still made; a database seeded for another
// run (another size), or one no --keep run left, is refused with what to do instead.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { runServe, type ServeConfig } from '../bench/src/serve.js';
import { ADMIN_URL, pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const skip = await pgSkipReason();
if (skip) console.log(`# skipping the bench serve reuse tests: ${skip}`);

const base: ServeConfig = {
  admin: ADMIN_URL,
  instances: 1,
  tenants: 1,
  memories: 24,
  clients: 2,
  durationS: 1,
  seedBatch: 12,
  keep: true,
};
const quiet = () => {};

describe('bench serve --keep / --reuse-db / --rate', { skip: skip ?? false }, () => {
  const made: string[] = [];
  let bare: ThrowawayDb | undefined;
  after(async () => {
    const c = new pg.Client({ connectionString: ADMIN_URL });
    await c.connect();
    for (const name of made) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
    await bare?.drop();
  });

  it('reuses a kept database without seeding, open loop, with the after-run checks', async () => {
    const first = await runServe(base, quiet);
    assert.ok(first.database, 'a --keep run names its database');
    made.push(first.database);
    assert.equal(first.config.loop, 'closed');
    assert.equal(first.config.reused_db, null);
    assert.ok(first.ops.recall.count > 0);

    const again = await runServe(
      { ...base, keep: false, reuseDb: first.database, rate: 40 },
      quiet,
    );
    assert.equal(again.database, first.database);
    assert.deepEqual(again.config.reused_db, { database: first.database, runs_before: 1 });
    assert.equal(again.config.loop, 'open');
    assert.equal(again.config.rate_per_s, 40);
    assert.equal(again.seed_s, null, 'nothing seeded');
    assert.ok(again.open_loop && again.open_loop.max_in_flight >= 1);
    const sent = Object.values(again.ops).reduce((a, o) => a + o.count, 0);
    assert.ok(sent > 5, `the open loop sent requests (${sent})`);
    assert.equal(again.metrics.errors, 0, again.error_samples.join('; '));
    assert.equal(again.metrics.lost_writes, 0);
    assert.equal(again.metrics.foreign_results, 0);
    assert.equal(again.metrics.journals_ok, 1);
    // The targets are found in the reused tenant: its names were read back from the database.
    assert.ok((again.metrics['recall_hit@5'] ?? 0) > 0);

    // Still there (a reused database is never dropped), and a run of another size is refused.
    await assert.rejects(
      runServe({ ...base, memories: 12, reuseDb: first.database }, quiet),
      /seeded for another run \(.*memories_per_tenant 24, this run 12/,
    );
  });

  it('refuses a database that no --keep run left', async () => {
    bare = await throwawayDb();
    const name = new URL(bare.url).pathname.slice(1);
    await assert.rejects(
      runServe({ ...base, reuseDb: name }, quiet),
      /not a database a bench serve --keep run left/,
    );
    await assert.rejects(
      runServe({ ...base, reuseDb: 'x; DROP' }, quiet),
      /is not a database name/,
    );
  });
});
