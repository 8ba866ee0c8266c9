// The Postgres write group (postgres-store.ts runGroup): writers that queued while a write
// transaction ran share the next one. What a grouped write costs in round trips, counted through
// the real pg client (every Client#query is one): the transaction's start, lock and head in one,
// each plain remember its own three (its subject, its tombstones, its commit: no savepoint), and
// the COMMIT. Paired with: every one of them lands as its own journaled commit in one verified
// chain. And a writer that fails after it wrote, in a group run without savepoints: the group's
// transaction rolls back and runs again with a savepoint per writer, so the failing writer's
// write is not kept and it gets its own error, while the others are answered once, with what
// the database holds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { AGENT, engineFor } from './helpers.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const skip = await pgSkipReason();
if (skip) console.log(`# skipping the Postgres write group tests: ${skip}`);

const PROJECT = 'api-00000001';
const wallClock = () => new Date();

/** Every statement this process sends through pg while counting. */
const sent: string[] = [];
const clientQuery = pg.Client.prototype.query;
function count(): void {
  pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
    const c = a[0] as string | { text?: string; name?: string };
    const text = typeof c === 'string' ? c : (c.text ?? c.name ?? '?');
    sent.push(text.replace(/\s+/g, ' ').trim().slice(0, 70));
    return (clientQuery as (...x: unknown[]) => unknown).apply(this, a);
  } as typeof pg.Client.prototype.query;
}
function uncount(): void {
  pg.Client.prototype.query = clientQuery;
}

/**
 * Holds the store's write transaction until `release` is called, so writers queued meanwhile
 * form the next group; resolves once the transaction holds the lock.
 */
async function hold(store: PostgresStore): Promise<{ release: () => void; done: Promise<void> }> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started!: () => void;
  const inside = new Promise<void>((r) => (started = r));
  const done = store.withWriteLock(async () => {
    started();
    await gate;
  });
  await inside;
  return { release, done };
}

describe('Postgres: the write group', { skip: skip ?? false }, () => {
  let db: ThrowawayDb;
  let store: PostgresStore;
  before(async () => {
    db = await throwawayDb(['acme']);
    store = await PostgresStore.open(db.url, { tenant: 'acme', poolSize: 4 });
  });
  after(async () => {
    uncount();
    await store?.close();
    await db?.drop();
  });

  it('a group of plain remembers: one round trip to start, three per writer, no savepoint; all land in one chain', async () => {
    const e = engineFor(store, PROJECT, wallClock);
    // Warm: the tenant's first write (and its after-commit check) is behind us, and the
    // store's in-memory tombstone indexes, built off the write path after two writes at one
    // tombstone version (postgres-store.ts tombstoneCandidates), are built.
    await e.apply([{ op: 'remember', type: 'fact', abstract: 'The group warm-up note' }], AGENT);
    await e.apply([{ op: 'remember', type: 'fact', abstract: 'The second warm-up note' }], AGENT);
    await store.settleTombstoneIndexes();
    const startSeq = (await store.status()).journalHead.seq;
    const { release, done } = await hold(store);
    const n = 5;
    const writes = [...Array(n)].map((_, i) =>
      e.apply(
        [{ op: 'remember', type: 'fact', abstract: `Group note ${i} about the ledger` }],
        AGENT,
      ),
    );
    count();
    let results;
    try {
      release();
      await done;
      results = (await Promise.all(writes)).map((r) => r[0]!);
    } finally {
      uncount();
    }
    // The holder's COMMIT, then the group's transaction.
    const listing = JSON.stringify(sent, null, 1);
    assert.equal(sent.filter((s) => s.startsWith('SAVEPOINT')).length, 0, listing);
    assert.equal(sent.filter((s) => s.startsWith('BEGIN')).length, 1, listing);
    assert.equal(sent.length, 1 + 1 + 3 * n + 1, listing);
    // Does: each its own journaled commit, in order, in one verified chain, each kept.
    assert.deepEqual(
      results.map((r) => r.seq),
      results.map((_, i) => startSeq + 1 + i),
    );
    const v = await store.verifyJournal();
    assert.equal(v.ok, true, v.firstBad?.problem);
    const current = await store.listCurrent([PROJECT]);
    for (const r of results)
      assert.ok(
        current.some((c) => c.id === r.id),
        `${r.id} was kept`,
      );
  });

  it('a writer that fails after writing: its write is undone alone, the others are answered once with what was kept', async () => {
    const e = engineFor(store, PROJECT, wallClock);
    const before = await store.listCurrent([PROJECT]);
    const startSeq = (await store.status()).journalHead.seq;
    const { release, done } = await hold(store);
    const runs = { a: 0, bad: 0, c: 0 };
    const remember = (abstract: string) =>
      e.apply([{ op: 'remember', type: 'fact', abstract }], AGENT).then((r) => r[0]!);
    const a = store.withWriteLock(async () => {
      runs.a++;
      return remember('Writer a keeps the invoices');
    });
    const bad = store.withWriteLock(async () => {
      runs.bad++;
      await remember('Writer b writes and then fails');
      throw new Error('writer b failed after its write');
    });
    const c = store.withWriteLock(async () => {
      runs.c++;
      return remember('Writer c keeps the receipts');
    });
    release();
    await done;
    const [ra, rb, rc] = await Promise.allSettled([a, bad, c]);
    // Must not: the failing writer's write is kept, or its failure is anything but its own.
    assert.equal(rb!.status, 'rejected');
    assert.match(String((rb as PromiseRejectedResult).reason), /writer b failed after its write/);
    // Does: the others are answered, with the ids and seqs the database holds.
    assert.equal(ra!.status, 'fulfilled');
    assert.equal(rc!.status, 'fulfilled');
    const [wa, wc] = [ra, rc].map(
      (r) => (r as PromiseFulfilledResult<{ id: string; seq: number }>).value,
    );
    // a and b ran without savepoints and b's failure rolled them back; then the three, guarded.
    assert.deepEqual(runs, { a: 2, bad: 2, c: 1 });
    const after = await store.listCurrent([PROJECT]);
    const added = after.filter((x) => !before.some((b) => b.id === x.id));
    assert.deepEqual(added.map((x) => x.abstract).sort(), [
      'Writer a keeps the invoices',
      'Writer c keeps the receipts',
    ]);
    assert.deepEqual(added.map((x) => x.id).sort(), [wa!.id, wc!.id].sort());
    assert.deepEqual([wa!.seq, wc!.seq], [startSeq + 1, startSeq + 2]);
    const v = await store.verifyJournal();
    assert.equal(v.ok, true, v.firstBad?.problem);
    assert.equal((await store.status()).journalHead.seq, startSeq + 2);
  });
});
