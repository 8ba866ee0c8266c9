// The parts of the Store port the conformance suite does not reach yet, on Postgres: tombstones
// armed and lifted with the journal entry that did it, proposals created then decided, and the
// usage log (state, not cache) read back in order and since a time.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { JournalBody } from '../src/core/journal.js';
import type { Tombstone } from '../src/core/normalize.js';
import type { Proposal } from '../src/core/proposal.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { HUMAN, PROJECT_A, PROJECT_B, engineFor, testClock } from './helpers.js';
import { pgSkipReason, throwawayStore } from './pg-fixtures.js';

const skip = await pgSkipReason();
if (skip) console.log(`# skipping the Postgres port tests: ${skip}`);

const body = (op: string, at: string): JournalBody => ({
  at,
  actor: HUMAN,
  op,
  target: null,
  before: null,
  after: null,
  reason: null,
  idem: null,
  req: null,
});

const stone = (scope: string, key: string): Tombstone => ({
  key,
  scope,
  kind: 'value',
  value_norm: `value ${key}`,
  reason: 'wrong',
  actor: HUMAN,
  at: '2026-03-01T00:00:00.000Z',
  from_op: 'forget',
  memory: null,
});

describe('Postgres store: tombstones, proposals, usage', { skip: skip ?? false }, () => {
  let store: PostgresStore;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ store, cleanup } = await throwawayStore());
  });
  after(async () => cleanup?.());

  it('a tombstone is armed and lifted by journaled commits; other scopes never see it', async () => {
    await store.withWriteLock(async () => {
      await store.commit({
        body: body('forget', '2026-03-01T00:00:00.000Z'),
        revision: null,
        tombstone: { arm: stone(PROJECT_A, 'k1') },
      });
      await store.commit({
        body: body('forget', '2026-03-01T00:00:01.000Z'),
        revision: null,
        tombstone: { arm: stone(PROJECT_A, 'k2') },
      });
      await store.commit({
        body: body('forget', '2026-03-01T00:00:02.000Z'),
        revision: null,
        tombstone: { arm: stone(PROJECT_B, 'k1') },
      });
    });
    assert.deepEqual((await store.tombstones([PROJECT_A])).map((t) => t.key).sort(), ['k1', 'k2']);
    await store.withWriteLock(() =>
      store.commit({
        body: body('lift', '2026-03-02T00:00:00.000Z'),
        revision: null,
        tombstone: { lift: { key: 'k1', scope: PROJECT_A } },
      }),
    );
    assert.deepEqual(
      (await store.tombstones([PROJECT_A])).map((t) => t.key),
      ['k2'],
    );
    assert.deepEqual(
      (await store.tombstones([PROJECT_B])).map((t) => t.key),
      ['k1'],
    );
    const lifted = await store.journal({ op: 'lift' });
    assert.deepEqual(lifted[0]!.data, { tombstone: { lift: { key: 'k1', scope: PROJECT_A } } });
    assert.equal((await store.verifyJournal()).ok, true);
  });

  it('a proposal is created then decided; queries filter by state, scope and id', async () => {
    const p: Proposal = {
      id: 'prop_01J0000000000000000000000A',
      kind: 'merge',
      scope: PROJECT_A,
      targets: [],
      summary: 'merge two notes',
      draft: null,
      evidence: [],
      diff: '',
      created_by: HUMAN,
      created_at: '2026-03-03T00:00:00.000Z',
      state: 'pending',
      decided_by: null,
      decided_at: null,
      reason: null,
    };
    await store.withWriteLock(() =>
      store.commit({ body: body('propose', p.created_at), revision: null, proposal: p }),
    );
    assert.deepEqual(
      (await store.proposals({ state: 'pending', scopes: [PROJECT_A] })).map((x) => x.id),
      [p.id],
    );
    assert.deepEqual(await store.proposals({ scopes: [PROJECT_B] }), []);
    const decided = {
      ...p,
      state: 'accepted' as const,
      decided_by: HUMAN,
      decided_at: '2026-03-04T00:00:00.000Z',
    };
    await store.withWriteLock(() =>
      store.commit({ body: body('accept', decided.decided_at), revision: null, proposal: decided }),
    );
    assert.deepEqual(await store.proposals({ state: 'pending' }), []);
    assert.deepEqual(await store.proposals({ id: p.id }), [decided]);
  });

  it('usage events come back oldest first, and since a time', async () => {
    await store.appendUsage([
      { at: '2026-03-05T00:00:02.000Z', kind: 'read', ids: ['mem_b'], actor: 'human' },
      {
        at: '2026-03-05T00:00:01.000Z',
        kind: 'recall',
        ids: ['mem_a'],
        actor: 'agent',
        query: 'q',
      },
    ]);
    await store.appendUsage([]);
    const all = await store.usage();
    assert.deepEqual(
      all.map((e) => e.kind),
      ['recall', 'read'],
    );
    assert.deepEqual(
      (await store.usage({ since: '2026-03-05T00:00:01.000Z' })).map((e) => e.kind),
      ['read'],
    );
  });

  it('rebuild re-derives lineage states and search columns from the revision rows', async () => {
    const clock = testClock('2026-04-01T00:00:00.000Z');
    const e = engineFor(store, PROJECT_A, clock);
    const [m] = await e.apply(
      [
        {
          op: 'remember',
          type: 'fact',
          abstract: 'Builds use Gradle',
          fields: { subject: 'build' },
        },
      ],
      HUMAN,
    );
    clock.advance(1000);
    await e.apply([{ op: 'correct', id: m!.id, abstract: 'Builds use Bazel' }], HUMAN);
    const before = await e.recall('builds gradle bazel', { explain: true, logUsage: false });
    assert.deepEqual(
      before.results.map((r) => r.abstract),
      ['Builds use Bazel'],
    );
    // Damage every derived column (a stand-in for a bug or a hand edit of the derived data).
    await store.pool.query(
      `UPDATE revisions SET state = 'active', retired_at = NULL, retire_kind = NULL,
         is_current = true, fts_abstract = '', fts_extra = '', fts_body = '' WHERE id = $1`,
      [m!.id],
    );
    const broken = await e.recall('builds gradle bazel', { logUsage: false });
    assert.deepEqual(broken.results, []);
    const report = await store.rebuild();
    assert.ok(report.memories >= 1 && report.problems.length === 0);
    assert.deepEqual(
      await e.recall('builds gradle bazel', { explain: true, logUsage: false }),
      before,
    );
  });
});
