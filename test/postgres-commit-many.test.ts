// The Postgres store's batched commit (commitMany) and what one write transaction remembers
// between its commits: N commits in one transaction chain and verify; a refusal in the middle
// keeps its slot and the others commit; a failing statement rolls every one back and throws;
// a tombstone armed inside the transaction is seen by the next read of the same transaction.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newMemoryId } from '../src/core/ids.js';
import type { JournalBody } from '../src/core/journal.js';
import type { Tombstone } from '../src/core/normalize.js';
import type { Revision, RevisionView } from '../src/core/types.js';
import type { CommitRequest } from '../src/store/port.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { HUMAN, PROJECT_A, engineFor, testClock } from './helpers.js';
import { pgSkipReason, throwawayStore } from './pg-fixtures.js';

const skip = await pgSkipReason();
if (skip) console.log(`# skipping the Postgres commitMany tests: ${skip}`);

const AT = '2026-03-01T10:00:00.000Z';

const body = (op: string, target: Revision | null): JournalBody => ({
  at: AT,
  actor: HUMAN,
  op,
  target: target ? { id: target.id, scope: target.scope } : null,
  before: null,
  after: target ? { rev: target.rev, hash: 'test' } : null,
  reason: null,
  idem: null,
  req: null,
});

/** The stored fields of a revision view (what a commit request carries). */
function revisionOf(v: RevisionView): Revision {
  const {
    state: _s,
    valid_to_eff: _v,
    retired_at: _r,
    retire_kind: _k,
    lineage_end_at: _e,
    lineage_end: _l,
    current: _c,
    retired_by: _b,
    ...rev
  } = v;
  return rev;
}

describe('Postgres store: commitMany', { skip: skip ?? false }, () => {
  let store: PostgresStore;
  let cleanup: () => Promise<void>;
  let template: Revision;
  let n = 0;
  /** A new lineage's first revision, shaped like one the engine wrote. */
  const fresh = (extra: Partial<Revision> = {}): Revision => {
    n++;
    return {
      ...template,
      id: newMemoryId(new Date(Date.parse(AT) + n)),
      rev: 1,
      slug: `batch-${n}`,
      abstract: `batched memory number ${n}`,
      ...extra,
    };
  };
  const remember = (r: Revision): CommitRequest => ({ body: body('remember', r), revision: r });
  const revs = async (id: string) => ((await store.getLineage(id)) ?? []).map((v) => v.rev);

  before(async () => {
    ({ store, cleanup } = await throwawayStore());
    const engine = engineFor(store, PROJECT_A, testClock(AT));
    const [r] = await engine.apply(
      [{ op: 'remember', type: 'fact', abstract: 'The template memory', body: 'its body' }],
      HUMAN,
    );
    template = revisionOf((await store.getLineage(r!.id))!.at(-1)!);
  });
  after(async () => cleanup?.());

  it('commits N requests in one transaction; the chain verifies and each is readable', async () => {
    const head = (await store.status()).journalHead.seq;
    const batch = Array.from({ length: 6 }, () => fresh());
    const out = await store.commitMany(batch.map(remember));
    assert.equal(out.length, 6);
    assert.deepEqual(
      out.map((o) => (o.ok ? o.entry.seq : null)),
      [1, 2, 3, 4, 5, 6].map((k) => head + k),
    );
    for (const r of batch) assert.deepEqual(await revs(r.id), [1]);
    // A second revision of one of them, in a later batch, re-derives its predecessor.
    const second: Revision = { ...batch[0]!, rev: 2, op: 'supersede', abstract: 'revised' };
    const [o] = await store.commitMany([remember(second)]);
    assert.equal(o!.ok, true);
    const lineage = (await store.getLineage(batch[0]!.id))!;
    assert.deepEqual(
      lineage.map((v) => [v.rev, v.current]),
      [
        [1, false],
        [2, true],
      ],
    );
    assert.equal((await store.verifyJournal()).ok, true);
    assert.equal((await store.status()).journalHead.seq, head + 7);
  });

  it('a refusal in the middle keeps its slot; the commits around it are written', async () => {
    const head = (await store.status()).journalHead.seq;
    const [a, b] = [fresh(), fresh()];
    // rev 3 of a lineage at rev 1: the optimistic check refuses it.
    const stale: Revision = { ...template, rev: 3, op: 'supersede', abstract: 'too far ahead' };
    const out = await store.commitMany([remember(a), remember(stale), remember(b)]);
    assert.deepEqual(
      out.map((o) => o.ok),
      [true, false, true],
    );
    const refused = out[1]!;
    assert.equal(refused.ok ? null : refused.error.code, 'conflict');
    assert.match(refused.ok ? '' : refused.error.message, /stale revision/);
    assert.deepEqual(await revs(a.id), [1]);
    assert.deepEqual(await revs(b.id), [1]);
    assert.deepEqual(await revs(template.id), [1]);
    // The seqs stay contiguous: the refused request journaled nothing.
    assert.deepEqual(
      out.filter((o) => o.ok).map((o) => (o.ok ? o.entry.seq : 0)),
      [head + 1, head + 2],
    );
    assert.equal((await store.verifyJournal()).ok, true);
  });

  it('a failing statement rolls back every commit of the batch and throws', async () => {
    const head = (await store.status()).journalHead.seq;
    const [a, c] = [fresh(), fresh()];
    // Postgres text cannot hold a NUL: the row insert fails (not a refusal).
    const broken = fresh({ scope: `${PROJECT_A}\u0000x` });
    await assert.rejects(store.commitMany([remember(a), remember(broken), remember(c)]), (e) => {
      assert.equal((e as { code?: string }).code, 'internal');
      return true;
    });
    assert.equal((await store.status()).journalHead.seq, head);
    assert.deepEqual(await revs(a.id), []);
    assert.deepEqual(await revs(c.id), []);
    assert.equal((await store.verifyJournal()).ok, true);
    // The same requests without the broken one commit.
    const out = await store.commitMany([remember(a), remember(c)]);
    assert.deepEqual(
      out.map((o) => o.ok),
      [true, true],
    );
    assert.deepEqual(await revs(a.id), [1]);
    assert.equal((await store.status()).journalHead.seq, head + 2);
  });

  it('a tombstone armed in a transaction is seen by its next read; a lift too', async () => {
    const stone: Tombstone = {
      key: 'batch-stone',
      scope: PROJECT_A,
      kind: 'value',
      value_norm: 'a rejected value',
      reason: 'wrong',
      actor: HUMAN,
      at: AT,
      from_op: 'forget',
      memory: null,
    };
    const seen = await store.withWriteLock(async () => {
      const keys = async () => (await store.tombstones([PROJECT_A])).map((t) => t.key);
      const before = await keys();
      await store.commit({ body: body('arm', null), revision: null, tombstone: { arm: stone } });
      const armed = await keys();
      await store.commit({
        body: body('lift', null),
        revision: null,
        tombstone: { lift: { key: stone.key, scope: PROJECT_A } },
      });
      return { before, armed, lifted: await keys() };
    });
    assert.deepEqual(seen, { before: [], armed: ['batch-stone'], lifted: [] });
    assert.equal((await store.verifyJournal()).ok, true);
  });

  it('commits after a refused one in the same transaction chain onto the right head', async () => {
    const head = (await store.status()).journalHead.seq;
    const dup = fresh();
    const entries = await store.withWriteLock(async () => {
      const first = await store.commit(remember(dup));
      // The same id again: the memories row's key refuses it (a conflict), rolled back.
      await assert.rejects(store.commit(remember({ ...dup, slug: 'other' })), /concurrently/);
      const next = await store.commit(remember(fresh()));
      return [first.seq, next.seq];
    });
    assert.deepEqual(entries, [head + 1, head + 2]);
    assert.equal((await store.verifyJournal()).ok, true);
  });

  it('writers that queue together share a transaction; one that throws is rolled back alone', async () => {
    const head = (await store.status()).journalHead.seq;
    const batch = Array.from({ length: 5 }, () => fresh());
    const settled = await Promise.allSettled(
      batch.map((r, i) =>
        store.withWriteLock(async () => {
          const entry = await store.commit(remember(r));
          if (i === 2) throw new Error('writer 3 gives up');
          return entry.seq;
        }),
      ),
    );
    assert.deepEqual(
      settled.map((s) => s.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    );
    assert.match(String((settled[2] as PromiseRejectedResult).reason), /writer 3 gives up/);
    assert.deepEqual(
      settled.filter((s) => s.status === 'fulfilled').map((s) => s.value),
      [head + 1, head + 2, head + 3, head + 4],
    );
    // Answered only after COMMIT: another connection sees each acknowledged write.
    const other = PostgresStore.forTenant(store.pool, { tenant: store.tenant });
    for (const [i, r] of batch.entries())
      assert.deepEqual(
        ((await other.getLineage(r.id)) ?? []).map((v) => v.rev),
        i === 2 ? [] : [1],
      );
    assert.equal((await store.verifyJournal()).ok, true);
  });

  it('a transaction aborted by a swallowed failing statement is reported failed, not committed', async () => {
    const head = (await store.status()).journalHead.seq;
    const lost = fresh();
    // The open transaction's connection (private): a statement fails on it and the error is
    // swallowed, as a writer catching a read's failure would.
    const inTx = () =>
      (
        store as unknown as { tx: { getStore(): { query(q: string): Promise<unknown> } } }
      ).tx.getStore();
    await assert.rejects(
      store.withWriteLock(async () => {
        await store.commit(remember(lost));
        await inTx()
          .query('SELECT 1/0')
          .catch(() => {});
        return 'acknowledged';
      }),
      /rolled back: a statement inside it failed/,
    );
    assert.deepEqual(await revs(lost.id), []);
    assert.equal((await store.status()).journalHead.seq, head);
    // The same write without the failing statement commits.
    const seq = await store.withWriteLock(async () => (await store.commit(remember(lost))).seq);
    assert.equal(seq, head + 1);
    assert.deepEqual(await revs(lost.id), [1]);
  });

  it('a commit made without a savepoint refuses a taken key or slug and writes nothing', async () => {
    const head = (await store.status()).journalHead.seq;
    const a = fresh();
    const [sameKey, sameSlug] = [fresh(), fresh({ slug: a.slug })];
    const keyed = (r: Revision): CommitRequest => ({
      body: { ...body('remember', r), idem: 'key-1' },
      revision: r,
    });
    const got = await store.withWriteLock(async () => {
      const first = await store.commit(keyed(a));
      // The head is held now: these two take the path without a savepoint.
      const e1 = await store.commit(keyed(sameKey)).catch((e: Error) => e);
      const e2 = await store.commit(remember(sameSlug)).catch((e: Error) => e);
      const next = await store.commit(remember(fresh()));
      return { seqs: [first.seq, next.seq], e1, e2 };
    });
    assert.match(String(got.e1), /idempotency key/);
    assert.match(String(got.e2), /already holds that subject/);
    assert.deepEqual(got.seqs, [head + 1, head + 2]);
    assert.deepEqual(await revs(a.id), [1]);
    assert.deepEqual(await revs(sameKey.id), []);
    assert.deepEqual(await revs(sameSlug.id), []);
    assert.equal((await store.verifyJournal()).ok, true);
  });
});
