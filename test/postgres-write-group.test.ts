// The Postgres write group (postgres-store.ts runGroup): writers that queued while a write
// transaction ran share the next one. What a grouped write costs in round trips, counted through
// the real pg client (every Client#query is one): the transaction's start, lock and head in one,
// each plain remember's two reads (its subject, its tombstones), ONE statement writing the rows
// of all of them (their commits are deferred, commit-rows.ts flushDeferred), and the COMMIT: the
// write statements do not grow with the group. Paired with: every one of them lands as its own
// journaled commit in one verified chain; a later writer of the group reads what an earlier
// deferred one wrote (the same subject is unchanged, the same key replayed, without running the
// group again); a deferred row the database refuses runs the group again guarded, and that
// writer gets the refusal it gets alone. And a writer that fails after it wrote, in a group run
// without savepoints: the group's transaction rolls back and runs again with a savepoint per
// writer, so the failing writer's write is not kept and it gets its own error, while the others
// are answered once, with what the database holds.
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

  /** Runs `n` remembers (abstract i) queued behind a held transaction: one group. */
  async function group(
    e: ReturnType<typeof engineFor>,
    ops: Parameters<ReturnType<typeof engineFor>['apply']>[0],
  ): Promise<{ results: PromiseSettledResult<{ id: string; seq: number | null }>[] }> {
    const { release, done } = await hold(store);
    const writes = ops.map((op) => e.apply([op], AGENT).then((r) => r[0]!));
    count();
    try {
      release();
      await done;
      return { results: await Promise.allSettled(writes) };
    } finally {
      uncount();
    }
  }

  const values = <T>(rs: PromiseSettledResult<T>[]) =>
    rs.map((r) => {
      assert.equal(r.status, 'fulfilled', String((r as PromiseRejectedResult).reason));
      return (r as PromiseFulfilledResult<T>).value;
    });

  it('a group of N plain remembers: its rows written in one statement whatever N, no savepoint; all land in one chain', async () => {
    const e = engineFor(store, PROJECT, wallClock);
    // Warm: the tenant's first write (and its after-commit check) is behind us, and the
    // store's in-memory tombstone indexes, built off the write path after two writes at one
    // tombstone version (postgres-store.ts tombstoneCandidates), are built.
    await e.apply([{ op: 'remember', type: 'fact', abstract: 'The group warm-up note' }], AGENT);
    await e.apply([{ op: 'remember', type: 'fact', abstract: 'The second warm-up note' }], AGENT);
    await store.settleTombstoneIndexes();
    for (const n of [2, 8]) {
      const startSeq = (await store.status()).journalHead.seq;
      sent.length = 0;
      const { results } = await group(
        e,
        [...Array(n)].map((_, i) => ({
          op: 'remember',
          type: 'fact',
          abstract: `Group of ${n}: note ${i} about the ledger`,
        })),
      );
      // The holder's COMMIT, then the group's transaction: its start (BEGIN, lock and head in
      // one), each writer's two reads (its subject, its tombstones), ONE statement writing every
      // writer's rows, and COMMIT. Must not: a write statement per writer, or a savepoint.
      const listing = JSON.stringify(sent, null, 1);
      const writes = sent.filter((s) => /^WITH (x|m|j) AS|INSERT INTO|UPDATE /.test(s));
      assert.equal(writes.length, 1, listing);
      assert.ok(writes[0]!.startsWith('WITH x AS'), listing);
      assert.equal(sent.filter((s) => s.startsWith('SAVEPOINT')).length, 0, listing);
      assert.equal(sent.filter((s) => s.startsWith('BEGIN')).length, 1, listing);
      assert.equal(sent.length, 1 + 1 + 2 * n + 1 + 1, listing);
      // Does: each its own journaled commit, in order, in one verified chain, each kept.
      const got = values(results);
      assert.deepEqual(
        got.map((r) => r.seq),
        got.map((_, i) => startSeq + 1 + i),
      );
      const v = await store.verifyJournal();
      assert.equal(v.ok, true, v.firstBad?.problem);
      const current = await store.listCurrent([PROJECT]);
      for (const r of got)
        assert.ok(
          current.some((c) => c.id === r.id),
          `${r.id} was kept`,
        );
      const entries = await store.journal({ afterSeq: startSeq });
      assert.deepEqual(
        entries.map((x) => [x.seq, x.op, x.target?.id]),
        got.map((r) => [r.seq, 'remember', r.id]),
      );
    }
  });

  it('in one group, a later writer sees what a deferred earlier one wrote: the same subject is unchanged, the same key replayed', async () => {
    const e = engineFor(store, PROJECT, wallClock);
    const startSeq = (await store.status()).journalHead.seq;
    sent.length = 0;
    const same = {
      op: 'remember' as const,
      type: 'fact',
      abstract: 'Receipts are archived by the yak job',
    };
    const keyed = {
      op: 'remember' as const,
      type: 'fact',
      abstract: 'Refunds are settled by the gnu job',
      idempotency_key: 'refund-once',
    };
    const { results } = await group(e, [same, keyed, same, keyed]);
    const [a, b, a2, b2] = values(results) as {
      id: string;
      seq: number | null;
      unchanged?: boolean;
      replayed?: boolean;
    }[];
    // As if each had been written alone: the repeat finds the first (no second memory).
    assert.equal(a2!.id, a!.id);
    assert.equal(a2!.unchanged, true);
    assert.equal(b2!.id, b!.id);
    assert.equal(b2!.replayed, true);
    assert.equal(b2!.seq, b!.seq);
    assert.deepEqual([a!.seq, b!.seq], [startSeq + 1, startSeq + 2]);
    // Must not: the group run again (a repeat that missed a deferred row, refused at the flush),
    // or a second memory of either (the deferred rows were written before those reads).
    assert.equal(sent.filter((s) => s.startsWith('BEGIN')).length, 1, JSON.stringify(sent));
    assert.equal(sent.filter((s) => s.startsWith('SAVEPOINT')).length, 0, JSON.stringify(sent));
    const current = await store.listCurrent([PROJECT]);
    assert.equal(current.filter((c) => c.abstract === same.abstract).length, 1);
    assert.equal(current.filter((c) => c.abstract === keyed.abstract).length, 1);
    assert.equal((await store.status()).journalHead.seq, startSeq + 2);
    assert.equal((await store.verifyJournal()).ok, true);
  });

  it('a deferred commit the database refuses: the group runs again guarded, that writer gets the refusal it gets alone, the others land', async () => {
    const e = engineFor(store, PROJECT, wallClock);
    const taken = 'Backups are verified by the ibis job';
    // A live subject no read of the engine sees (a memories row with no revision row): only
    // the INSERT finds it taken. Alone, the write is refused as that conflict.
    const elsewhere = engineFor(store, 'web-00000002', wallClock);
    const [w] = await elsewhere.apply([{ op: 'remember', type: 'fact', abstract: taken }], AGENT);
    const { rows } = await store.pool.query<{ slug: string }>(
      'SELECT slug FROM memories WHERE tenant_id = $1 AND id = $2',
      ['acme', w!.id],
    );
    await store.pool.query(
      `INSERT INTO memories(tenant_id, id, scope, type, slug, current_rev, status)
       VALUES ('acme', 'mem-bare-row-holding-the-subject', $1, 'fact', $2, 1, 'active')`,
      [PROJECT, rows[0]!.slug],
    );
    let alone: unknown;
    try {
      await e.apply([{ op: 'remember', type: 'fact', abstract: taken }], AGENT);
    } catch (err) {
      alone = err;
    }
    assert.ok(alone, 'refused alone');
    const startSeq = (await store.status()).journalHead.seq;
    sent.length = 0;
    const { results } = await group(e, [
      { op: 'remember', type: 'fact', abstract: 'Audits are filed by the kiwi job' },
      { op: 'remember', type: 'fact', abstract: taken },
      { op: 'remember', type: 'fact', abstract: 'Alerts are paged by the emu job' },
    ]);
    const [ok1, refused, ok2] = results;
    assert.equal(refused!.status, 'rejected');
    const err = (refused as PromiseRejectedResult).reason as { code: string; message: string };
    assert.equal(err.code, (alone as { code: string }).code);
    assert.equal(err.message, (alone as { message: string }).message);
    // Ran twice: bare (one statement for the three, refused), then each in its savepoint.
    assert.equal(sent.filter((s) => s.startsWith('WITH x AS')).length, 1, JSON.stringify(sent));
    assert.ok(sent.some((s) => s.startsWith('SAVEPOINT')));
    const [w1, w2] = values([ok1!, ok2!]);
    // Does: the others are kept, the refusal journaled between them, one verified chain.
    const entries = await store.journal({ afterSeq: startSeq });
    assert.deepEqual(
      entries.map((x) => x.op),
      ['remember', 'refuse', 'remember'],
    );
    assert.deepEqual([w1!.seq, w2!.seq], [startSeq + 1, startSeq + 3]);
    const current = await store.listCurrent([PROJECT]);
    assert.ok(current.some((c) => c.id === w1!.id));
    assert.ok(current.some((c) => c.id === w2!.id));
    assert.equal((await store.verifyJournal()).ok, true);
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
