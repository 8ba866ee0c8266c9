// A Postgres connection the server drops while a write transaction waits between two statements
// (an operator's pg_terminate_backend, a restart, a failover) must not take the process down:
// node-postgres emits the error on the checked-out client, and a client without a listener
// throws it out of the event loop. The write that held it fails and says so; nothing of it is
// kept; the next write gets a new connection and lands in a chain that verifies.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { AGENT, engineFor } from './helpers.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const skip = await pgSkipReason();
if (skip) console.log(`# skipping the Postgres connection-loss tests: ${skip}`);

const PROJECT = 'api-00000001';

describe(
  'Postgres: a connection dropped inside a write transaction',
  { skip: skip ?? false },
  () => {
    let db: ThrowawayDb;
    let store: PostgresStore;
    let admin: pg.Client;
    before(async () => {
      db = await throwawayDb(['acme']);
      store = await PostgresStore.open(db.url, { tenant: 'acme' });
      admin = new pg.Client({ connectionString: db.url });
      await admin.connect();
    });
    after(async () => {
      await admin?.end();
      await store?.close();
      await db?.drop();
    });

    it('fails the write that held it, without crashing the process; the next write lands', async () => {
      const e = engineFor(store, PROJECT, () => new Date());
      const [first] = await e.apply(
        [{ op: 'remember', type: 'fact', abstract: 'Written before the drop' }],
        AGENT,
      );
      const headBefore = (await store.status()).journalHead.seq;
      let terminated = 0;
      const held = store.withWriteLock(async () => {
        // The transaction's connection is idle in its transaction while this function waits.
        const { rows } = await admin.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'",
        );
        for (const r of rows)
          if ((await admin.query('SELECT pg_terminate_backend($1) AS ok', [r.pid])).rows[0].ok)
            terminated++;
        // Long enough for the termination to reach the client between two statements.
        await new Promise((r) => setTimeout(r, 300));
      });
      await assert.rejects(
        held,
        (x: Error & { hint?: string }) =>
          /connection to the Postgres database was lost/.test(x.message) &&
          /nothing of its transaction was kept/.test(x.message) &&
          /retry/.test(x.hint ?? ''),
        'the transaction whose connection was dropped fails, saying what happened and what to do',
      );
      assert.equal(terminated, 1, 'exactly the write transaction was terminated');
      // Does: the store works on; nothing of the failed transaction is in the journal.
      assert.equal((await store.status()).journalHead.seq, headBefore);
      const [next] = await e.apply(
        [{ op: 'remember', type: 'fact', abstract: 'Written after the drop' }],
        AGENT,
      );
      assert.equal(next!.seq, headBefore + 1);
      const v = await store.verifyJournal();
      assert.equal(v.ok, true, v.firstBad?.problem);
      const ids = (await store.listCurrent([PROJECT])).map((r) => r.id).sort();
      assert.deepEqual(ids, [first!.id, next!.id].sort());
    });
  },
);
