// Several instances (each its own pool, as separate server processes would have) writing one
// tenant at once: the journal stays one valid hash chain, no write is lost, idempotency keys
// replay across instances, and of two racing writes to one subject exactly one wins.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { AGENT, HUMAN, engineFor } from './helpers.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const skip = await pgSkipReason();
if (skip) console.log(`# skipping the Postgres multi-instance tests: ${skip}`);

const PROJECT = 'api-00000001';
const wallClock = () => new Date();

describe('Postgres: two instances on one tenant', { skip: skip ?? false }, () => {
  let db: ThrowawayDb;
  let one: PostgresStore;
  let two: PostgresStore;
  before(async () => {
    db = await throwawayDb(['acme']);
    one = await PostgresStore.open(db.url, { tenant: 'acme', poolSize: 4 });
    two = await PostgresStore.open(db.url, { tenant: 'acme', poolSize: 4 });
  });
  after(async () => {
    await one?.close();
    await two?.close();
    await db?.drop();
  });

  it('a tombstone armed or lifted on one instance holds at the other’s next recall; unchanged, it is not re-read', async () => {
    const reader = engineFor(one, PROJECT, wallClock);
    const writer = engineFor(two, PROJECT, wallClock);
    // Global values a project reader sees, until its project rejects them (rejected-here.ts).
    const [kept] = await writer.apply(
      [
        {
          op: 'remember',
          type: 'fact',
          abstract: 'Lagoon builds publish to the amber bucket',
          global: true,
        },
      ],
      AGENT,
    );
    const [later] = await writer.apply(
      [
        {
          op: 'remember',
          type: 'fact',
          abstract: 'Lagoon builds sign with the cobalt key',
          global: true,
        },
      ],
      AGENT,
    );
    // One armed before the reader's first recall, so its tombstone list is not empty.
    await writer.apply(
      [
        {
          op: 'arm',
          scope: PROJECT,
          value: 'Lagoon builds publish to the amber bucket',
          reason: 'moved',
        },
      ],
      HUMAN,
    );
    // What instance one's pool answers for the tombstone read, and the lists its store answers.
    const answered: number[] = [];
    const lists: unknown[] = [];
    const poolQuery = one.pool.query.bind(one.pool) as (...a: unknown[]) => Promise<pg.QueryResult>;
    const storeTombstones = one.tombstones.bind(one);
    one.pool.query = ((...a: unknown[]) => {
      const got = poolQuery(...a);
      if ((a[0] as { name?: string }).name === 'mneme_tombstones_since')
        void got.then((r) => answered.push(r.rows.length));
      return got;
    }) as typeof one.pool.query;
    one.tombstones = async (scopes) => {
      const l = await storeTombstones(scopes);
      lists.push(l);
      return l;
    };
    const served = async () => {
      answered.length = 0;
      lists.length = 0;
      const r = await reader.recall('lagoon builds amber bucket cobalt key', { logUsage: false });
      assert.equal(answered.length, 1, 'one tombstone read per recall');
      return { ids: r.results.map((x) => x.id), rows: answered[0]!, list: lists[0] };
    };
    try {
      const first = await served();
      assert.deepEqual(first.ids, [later!.id], 'the rejected value is withheld, the other served');
      assert.ok(first.rows >= 1);
      // Nothing changed: the version alone comes back (one row, no tombstone), the same list is
      // answered, and the value it rejects is still withheld.
      const again = await served();
      assert.deepEqual(again.ids, [later!.id]);
      assert.equal(again.rows, 1, 'only the version row');
      assert.equal(again.list, first.list, 'the same list: the matchers built from it are kept');
      // Armed on instance two: withheld at instance one's very next recall.
      await writer.apply(
        [
          {
            op: 'arm',
            scope: PROJECT,
            value: 'lagoon builds SIGN with the cobalt key',
            reason: 'rotated',
          },
        ],
        HUMAN,
      );
      const armed = await served();
      assert.deepEqual(armed.ids, [], 'both values withheld');
      assert.notEqual(armed.list, first.list);
      // Lifted on instance two: served again at the next recall.
      const t = (await two.tombstones([PROJECT])).find((x) => /amber/.test(x.value_norm));
      await writer.apply([{ op: 'lift', key: t!.key, scope: PROJECT }], HUMAN);
      const lifted = await served();
      assert.deepEqual(lifted.ids, [kept!.id]);
    } finally {
      one.pool.query = poolQuery as typeof one.pool.query;
      one.tombstones = storeTombstones;
    }
  });

  it('in a request that knew an older tombstone version, a tombstone this instance arms is seen at once', async () => {
    const e1 = engineFor(one, PROJECT, wallClock);
    // Known: version 0, older than any list read since, so the lists read are answered as they are.
    await one.knowing({ tombstones: '0', knowledge: true }, async () => {
      const before = await one.tombstones([PROJECT, 'global']);
      assert.equal(
        await one.tombstones([PROJECT, 'global']),
        before,
        'answered from what was read',
      );
      await e1.apply(
        [{ op: 'arm', scope: PROJECT, value: 'Harbor jobs drain at noon', reason: 'wrong' }],
        HUMAN,
      );
      const after = await one.tombstones([PROJECT, 'global']);
      assert.equal(after.length, before.length + 1, 'read again after this instance armed one');
      assert.ok(after.some((t) => t.value_norm === 'harbor jobs drain at noon'));
    });
  });

  it('a tombstone version that went back (a restore) is read again, never answered from a later list', async () => {
    const writer = engineFor(two, PROJECT, wallClock);
    const version = async () =>
      (
        await one.pool.query<{ v: string }>(
          `SELECT coalesce(max(seq), 0)::text AS v FROM tombstone_events WHERE tenant_id = 'acme'`,
        )
      ).rows[0]!.v;
    const has = (l: readonly { value_norm: string }[]) =>
      l.some((t) => t.value_norm === 'dock builds run on the slate runner');
    await writer.apply(
      [{ op: 'arm', scope: PROJECT, value: 'Dock builds run on the slate runner', reason: 'no' }],
      HUMAN,
    );
    const armedAt = await version();
    const t = (await two.tombstones([PROJECT])).find((x) => has([x]));
    await writer.apply([{ op: 'lift', key: t!.key, scope: PROJECT }], HUMAN);
    const liftedAt = await version();
    // Does: at the lifted version the list is read and kept without it.
    const lifted = await one.knowing({ tombstones: liftedAt, knowledge: false }, () =>
      one.tombstones([PROJECT, 'global']),
    );
    assert.equal(has(lifted), false, 'lifted: not in the list');
    // A restore from a backup taken before the lift: its event is gone, the version went back.
    await one.pool.query(`DELETE FROM tombstone_events WHERE tenant_id = 'acme' AND seq = $1`, [
      liftedAt,
    ]);
    assert.equal(await version(), armedAt);
    // Must not: the list kept at the later version answered for the earlier one.
    const restored = await one.knowing({ tombstones: armedAt, knowledge: false }, () =>
      one.tombstones([PROJECT, 'global']),
    );
    assert.equal(has(restored), true, 'armed again after the restore: read again');
  });

  it('2×30 concurrent writes keep one chain and lose nothing', async () => {
    const before = (await one.verifyJournal()).entries;
    const e1 = engineFor(one, PROJECT, wallClock);
    const e2 = engineFor(two, PROJECT, wallClock);
    const writes = [];
    for (let i = 0; i < 30; i++) {
      for (const [tag, e] of [
        ['one', e1],
        ['two', e2],
      ] as const) {
        writes.push(
          e.apply(
            [{ op: 'remember', type: 'fact', abstract: `instance ${tag} note ${i} on queues` }],
            AGENT,
          ),
        );
      }
    }
    const results = (await Promise.all(writes)).map((r) => r[0]!);
    assert.equal(new Set(results.map((r) => r.id)).size, 60);
    assert.equal(new Set(results.map((r) => r.seq)).size, 60, 'every write has its own seq');
    for (const s of [one, two]) {
      const v = await s.verifyJournal();
      assert.equal(v.ok, true, v.firstBad?.problem);
      assert.equal(v.entries, before + 60);
    }
    const current = await two.listCurrent([PROJECT]);
    for (const r of results)
      assert.ok(
        current.some((v) => v.id === r.id),
        `${r.id} was kept`,
      );
  });

  it('an idempotency key replays across instances and refuses a different request', async () => {
    const e1 = engineFor(one, PROJECT, wallClock);
    const e2 = engineFor(two, PROJECT, wallClock);
    const op = {
      op: 'remember' as const,
      type: 'fact',
      abstract: 'Alerts page the on-call rotation',
      idempotency_key: 'alerts-1',
    };
    const [a, b] = await Promise.all([e1.apply([op], AGENT), e2.apply([op], AGENT)]);
    assert.equal(a![0]!.id, b![0]!.id);
    assert.equal([a![0]!.replayed, b![0]!.replayed].filter(Boolean).length, 1);
    const [again] = await e2.apply([op], AGENT);
    assert.equal(again!.replayed, true);
    await assert.rejects(
      e1.apply([{ ...op, abstract: 'Alerts go to email' }], AGENT),
      (e: Error & { code?: string }) => e.code === 'conflict',
    );
    const r = await e1.recall('alerts on-call email', { logUsage: false });
    assert.deepEqual(
      r.results.map((x) => x.abstract),
      ['Alerts page the on-call rotation'],
    );
  });

  it('two instances writing one subject at once: exactly one wins', async () => {
    const e1 = engineFor(one, PROJECT, wallClock);
    const e2 = engineFor(two, PROJECT, wallClock);
    for (let i = 0; i < 5; i++) {
      const subject = `primary region ${i}`;
      const settled = await Promise.allSettled([
        e1.apply(
          [
            {
              op: 'remember',
              type: 'fact',
              abstract: `Region ${i} is eu-west`,
              fields: { subject },
            },
          ],
          HUMAN,
        ),
        e2.apply(
          [
            {
              op: 'remember',
              type: 'fact',
              abstract: `Region ${i} is us-east`,
              fields: { subject },
            },
          ],
          HUMAN,
        ),
      ]);
      const won = settled.filter((s) => s.status === 'fulfilled');
      const lost = settled.filter((s) => s.status === 'rejected');
      assert.equal(won.length, 1, `one write of subject ${i} wins`);
      assert.equal(lost.length, 1);
      assert.equal((lost[0]!.reason as { code?: string }).code, 'conflict');
      const winner = (won[0] as PromiseFulfilledResult<{ id: string }[]>).value[0]!;
      const live = await one.listCurrent([PROJECT]);
      assert.equal(live.filter((v) => v.fields.subject === subject).length, 1);
      assert.ok(live.some((v) => v.id === winner.id));
    }
  });

  it('two instances superseding one revision at once: exactly one wins', async () => {
    const e1 = engineFor(one, PROJECT, wallClock);
    const e2 = engineFor(two, PROJECT, wallClock);
    const [m] = await e1.apply(
      [{ op: 'remember', type: 'fact', abstract: 'Cache TTL is 60s', fields: { subject: 'ttl' } }],
      HUMAN,
    );
    const settled = await Promise.allSettled([
      e1.apply(
        [{ op: 'correct', id: m!.id, expected_rev: 1, abstract: 'Cache TTL is 30s' }],
        HUMAN,
      ),
      e2.apply(
        [{ op: 'correct', id: m!.id, expected_rev: 1, abstract: 'Cache TTL is 90s' }],
        HUMAN,
      ),
    ]);
    assert.equal(settled.filter((s) => s.status === 'fulfilled').length, 1);
    const lineage = (await two.getLineage(m!.id))!;
    assert.deepEqual(
      lineage.map((v) => v.rev),
      [1, 2],
    );
    assert.equal((await one.verifyJournal()).ok, true);
  });

  it('a burst from both instances: grouped writers all land, rejected values and stale revisions still refuse', async () => {
    const e1 = engineFor(one, PROJECT, wallClock);
    const e2 = engineFor(two, PROJECT, wallClock);
    const startSeq = (await one.status()).journalHead.seq;
    // Armed before the burst: one in the project (by a person's forget), one in global (checked
    // for a project write in the same statement as the project's own lookup).
    const [gone] = await e1.apply(
      [{ op: 'remember', type: 'fact', abstract: 'The burst queue holds 64 jobs' }],
      HUMAN,
    );
    await e1.apply([{ op: 'retract', id: gone!.id, reject: true, reason: 'wrong' }], HUMAN);
    await e2.apply(
      [{ op: 'arm', scope: 'global', value: 'The burst token lives 9 days', reason: 'leaked' }],
      HUMAN,
    );
    const [target] = await e1.apply(
      [
        {
          op: 'remember',
          type: 'fact',
          abstract: 'Burst retries are 3',
          fields: { subject: 'br' },
        },
      ],
      HUMAN,
    );
    const acked: { id: string; rev: number; seq: number }[] = [];
    const refused: string[] = [];
    const write = (e: typeof e1, op: Record<string, unknown>) =>
      e.apply([op as never], AGENT).then(
        (r) => void acked.push({ id: r[0]!.id, rev: r[0]!.rev, seq: r[0]!.seq! }),
        (err: { code?: string; message: string }) => void refused.push(`${err.code}`),
      );
    const burst: Promise<void>[] = [];
    for (let i = 0; i < 24; i++) {
      const e = i % 2 ? e2 : e1;
      burst.push(write(e, { op: 'remember', type: 'fact', abstract: `burst note ${i} on queues` }));
      if (i === 5)
        burst.push(
          write(e, { op: 'remember', type: 'fact', abstract: 'the burst queue holds 64 jobs!' }),
        );
      if (i === 9)
        burst.push(
          write(e, { op: 'remember', type: 'fact', abstract: 'The Burst token lives 9 days' }),
        );
      if (i === 12 || i === 13)
        burst.push(
          write(e, {
            op: 'supersede',
            id: target!.id,
            expected_rev: 1,
            abstract: `Burst retries are ${i}`,
          }),
        );
    }
    await Promise.all(burst);
    // Does: the 24 notes and one of the two supersedes land, each acknowledged write is stored.
    assert.equal(acked.length, 25, `acknowledged: ${acked.length}, refused: ${refused.join(',')}`);
    // Must not: the two rejected values, and the second supersede of rev 1.
    assert.deepEqual(refused.sort(), ['conflict', 'refused', 'refused']);
    for (const a of acked) {
      const lineage = await two.getLineage(a.id);
      assert.ok(
        lineage?.some((v) => v.rev === a.rev),
        `${a.id} rev ${a.rev} is stored`,
      );
    }
    assert.deepEqual(
      (await one.getLineage(target!.id))!.map((v) => v.rev),
      [1, 2],
    );
    // One chain: every acknowledged seq distinct, the journal gapless and verified on both.
    assert.equal(new Set(acked.map((a) => a.seq)).size, acked.length);
    const entries = await one.journal({});
    const seqs = entries.map((e) => e.seq).filter((q) => q > startSeq);
    assert.equal(new Set(seqs).size, seqs.length, 'no duplicate sequence numbers');
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => startSeq + 1 + i),
      'no gap in the chain',
    );
    for (const s of [one, two]) assert.equal((await s.verifyJournal()).ok, true);
  });

  it('commit outside the write lock is refused; a failed lock body rolls back', async () => {
    await assert.rejects(
      one.commit({
        body: {
          at: new Date().toISOString(),
          actor: HUMAN,
          op: 'refuse',
          target: null,
          before: null,
          after: null,
          reason: null,
          idem: null,
          req: null,
        },
        revision: null,
      }),
      /without the store lock/,
    );
    const head = (await one.status()).journalHead.seq;
    await assert.rejects(
      one.withWriteLock(async () => {
        await one.commit({
          body: {
            at: new Date().toISOString(),
            actor: HUMAN,
            op: 'refuse',
            target: null,
            before: null,
            after: null,
            reason: 'rolled back',
            idem: null,
            req: null,
          },
          revision: null,
        });
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal((await two.status()).journalHead.seq, head);
    assert.equal((await two.verifyJournal()).ok, true);
  });
});
