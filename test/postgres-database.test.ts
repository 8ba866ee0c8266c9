// The server's view of a shared database: a token resolves to its tenant's store; an unknown token
// resolves to nothing; two tenants' stores over one pool stay apart.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Database } from '../src/store/postgres/database.js';
import { createToken } from '../src/store/postgres/tenants.js';
import { HUMAN, engineFor, testClock } from './helpers.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const skip = await pgSkipReason();
if (skip) console.log(`# skipping the shared-database tests: ${skip}`);

describe('Postgres shared database (server wiring)', { skip: skip ?? false }, () => {
  let tdb: ThrowawayDb;
  let db: Database;
  before(async () => {
    tdb = await throwawayDb(['acme', 'globex']);
    db = await openDatabase(tdb.url, { poolSize: 4 });
  });
  after(async () => {
    await db?.close();
    await tdb?.drop();
  });

  it('every connection of a pool mneme opens runs with JIT off; a plain connection keeps the server default', async () => {
    const { openPool } = await import('../src/store/postgres/pool.js');
    const pg = (await import('pg')).default;
    const ours = openPool(tdb.url, 2);
    const plain = new pg.Pool({ connectionString: tdb.url, max: 1 });
    try {
      // Two clients held at once: the setting is on each connection, not on one by chance.
      const [c1, c2] = await Promise.all([ours.connect(), ours.connect()]);
      for (const c of [c1, c2]) assert.equal((await c.query('SHOW jit')).rows[0].jit, 'off');
      c1.release();
      c2.release();
      const server = (await plain.query("SELECT reset_val FROM pg_settings WHERE name = 'jit'"))
        .rows[0].reset_val;
      assert.equal((await plain.query('SHOW jit')).rows[0].jit, server);
      assert.equal((await db.pool.query('SHOW jit')).rows[0].jit, 'off', 'the server database too');
    } finally {
      await ours.end();
      await plain.end();
    }
  });

  it('a token opens its own tenant only; an unknown token opens nothing', async () => {
    const tokA = await createToken(db.pool, { tenant: 'acme', projects: null });
    const tokB = await createToken(db.pool, { tenant: 'globex', projects: ['api-00000001'] });
    const grantA = (await db.resolveToken(tokA))!;
    const grantB = (await db.resolveToken(tokB))!;
    assert.ok('tenant' in grantA && 'tenant' in grantB);
    // The grant, and how its request runs knowing what the token check read (PostgresStore.knowing).
    const { within: withinA, ...a0 } = grantA;
    const { within: withinB, ...b0 } = grantB;
    assert.deepEqual(a0, { tenant: 'acme', projects: null });
    assert.deepEqual(b0, { tenant: 'globex', projects: ['api-00000001'] });
    assert.equal(typeof withinA, 'function');
    assert.equal(typeof withinB, 'function');
    assert.equal(await db.resolveToken('mnm_not-a-real-token'), null);

    const clock = testClock('2026-03-01T10:00:00.000Z');
    const a = engineFor(await db.storeFor(grantA.tenant), 'api-00000001', clock);
    const b = engineFor(await db.storeFor(grantB.tenant), 'api-00000001', clock);
    assert.equal(await db.storeFor('acme'), await db.storeFor('acme'), 'one store per tenant');
    const [ma] = await a.apply(
      [{ op: 'remember', type: 'fact', abstract: 'Shared pool note' }],
      HUMAN,
    );
    assert.deepEqual(
      (await a.recall('shared pool note')).results.map((r) => r.id),
      [ma!.id],
    );
    assert.deepEqual((await b.recall('shared pool note')).results, []);
    await assert.rejects(db.storeFor('initech'), /no tenant/);
  });
});
