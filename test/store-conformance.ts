// The Store-port conformance suite: the behaviour every adapter must show, driven through the
// engine so each rule is checked the way users meet it. Every absence assertion has a presence
// twin in the same fixture. Run by store-files.test.ts (and by every other adapter's test).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../src/store/port.js';
import { AGENT, HUMAN, PROJECT_A, PROJECT_B, engineFor, testClock } from './helpers.js';

export type StoreFactory = () => Promise<{
  store: Store;
  reopen?: () => Promise<Store>;
  cleanup: () => Promise<void>;
}>;

const ids = (r: { results: { id: string }[] }) => r.results.map((x) => x.id);
const abstracts = (r: { results: { abstract: string }[] }) => r.results.map((x) => x.abstract);

export function storeConformance(name: string, factory: StoreFactory): void {
  describe(`Store conformance: ${name}`, () => {
    const fixture = async () => {
      const f = await factory();
      const clock = testClock('2026-03-01T10:00:00.000Z');
      const a = engineFor(f.store, PROJECT_A, clock);
      const b = engineFor(f.store, PROJECT_B, clock);
      return { ...f, clock, a, b };
    };
    const remember = async (
      e: ReturnType<typeof engineFor>,
      abstract: string,
      extra: Record<string, unknown> = {},
    ) => (await e.apply([{ op: 'remember', type: 'fact', abstract, ...extra }], HUMAN))[0]!;

    it('round-trips a memory and chains its journal entry', async () => {
      const f = await fixture();
      try {
        const r = await remember(f.a, 'The deploy script lives in scripts/deploy.sh', {
          body: 'Run it from the repo root.',
          fields: { subject: 'deploy script' },
          tags: ['ops'],
        });
        const got = await f.a.read(r.id);
        assert.equal(got.abstract, 'The deploy script lives in scripts/deploy.sh');
        assert.equal(got.body, 'Run it from the repo root.');
        assert.equal(got.rev, 1);
        assert.equal(got.scope, PROJECT_A);
        assert.equal(got.trust, 'claimed');
        const v = await f.a.verifyJournal();
        assert.equal(v.ok, true);
        assert.equal(v.head.seq, 1);
      } finally {
        await f.cleanup();
      }
    });

    it('other-project memories are never served; own project and global are', async () => {
      const f = await fixture();
      try {
        const mineA = await remember(f.a, 'Deploys go through the staging cluster first');
        const mineB = await remember(f.b, 'Deploys go straight to production on Fridays');
        const glob = await remember(f.a, 'Deploys need a changelog entry', { global: true });
        const goneA = await remember(f.a, 'Deploys to production need a sign-off');
        await f.a.apply([{ op: 'retract', id: goneA.id }], HUMAN);
        const r = await f.a.recall('deploys production staging changelog', { explain: true });
        assert.ok(ids(r).includes(mineA.id), 'own project memory is served');
        assert.ok(ids(r).includes(glob.id), 'global memory is served');
        assert.ok(!ids(r).includes(mineB.id), 'other project memory is not served');
        // The exclusion trace names what this binding can read (its own retracted memory), and
        // never another project's: no id, no count.
        assert.ok(r.excluded!.some((x) => x.id === goneA.id && x.reason === 'retracted'));
        assert.ok(!r.excluded!.some((x) => x.id === mineB.id || x.reason === 'other_scope'));
        const rb = await f.b.recall('deploys production staging');
        assert.ok(ids(rb).includes(mineB.id) && !ids(rb).includes(mineA.id));
        await assert.rejects(f.b.read(mineA.id), /no memory/);
      } finally {
        await f.cleanup();
      }
    });

    it('a superseded value is not served; its successor is', async () => {
      const f = await fixture();
      try {
        const m = await remember(f.a, 'The primary database is MySQL 5.7', {
          fields: { subject: 'primary database' },
        });
        f.clock.advance(60_000);
        await f.a.apply(
          [{ op: 'supersede', id: m.id, abstract: 'The primary database is Postgres 16' }],
          HUMAN,
        );
        f.clock.advance(1);
        const r = await f.a.recall('primary database MySQL Postgres', { explain: true });
        assert.deepEqual(abstracts(r), ['The primary database is Postgres 16']);
        const old = await f.a.recall('MySQL', { explain: true });
        assert.ok(!abstracts(old).includes('The primary database is MySQL 5.7'));
        assert.ok(
          old.excluded!.some((x) => x.id === m.id && x.rev === 1 && x.reason === 'superseded'),
        );
      } finally {
        await f.cleanup();
      }
    });

    it('a retracted memory is not served; its sibling is', async () => {
      const f = await fixture();
      try {
        const gone = await remember(f.a, 'Cache invalidation uses a TTL of 5 minutes');
        const kept = await remember(f.a, 'Cache keys are prefixed with the tenant id');
        await f.a.apply([{ op: 'retract', id: gone.id, reason: 'no longer true' }], HUMAN);
        const r = await f.a.recall('cache', { explain: true });
        assert.deepEqual(ids(r), [kept.id]);
        assert.ok(r.excluded!.some((x) => x.id === gone.id && x.reason === 'retracted'));
      } finally {
        await f.cleanup();
      }
    });

    it('a corrected (rejected) value is not served; the correction is', async () => {
      const f = await fixture();
      try {
        const m = await remember(f.a, 'The API rate limit is 50 requests per second', {
          fields: { subject: 'api rate limit' },
        });
        f.clock.advance(1000);
        await f.a.apply(
          [{ op: 'correct', id: m.id, abstract: 'The API rate limit is 500 requests per second' }],
          HUMAN,
        );
        const r = await f.a.recall('API rate limit requests', { explain: true });
        assert.deepEqual(abstracts(r), ['The API rate limit is 500 requests per second']);
        assert.ok(r.excluded!.some((x) => x.id === m.id && x.rev === 1 && x.reason === 'rejected'));
      } finally {
        await f.cleanup();
      }
    });

    it('not-yet-valid and no-longer-valid memories are not served; valid ones are', async () => {
      const f = await fixture();
      try {
        const future = await remember(f.a, 'Feature flags move to LaunchDarkly', {
          valid_from: '2027-01-01',
        });
        const past = await remember(f.a, 'Feature flags lived in a YAML file', {
          valid_from: '2020-01-01',
          valid_to: '2025-01-01',
        });
        const now = await remember(f.a, 'Feature flags are read at startup');
        const r = await f.a.recall('feature flags', { explain: true });
        assert.deepEqual(ids(r), [now.id]);
        assert.ok(r.excluded!.some((x) => x.id === future.id && x.reason === 'not_yet_valid'));
        assert.ok(r.excluded!.some((x) => x.id === past.id && x.reason === 'expired'));
        const then = await f.a.recall('feature flags', { asOf: '2022-06-01' });
        assert.deepEqual(ids(then), [past.id]);
      } finally {
        await f.cleanup();
      }
    });

    it('--as-of and --known-at walk back a supersede chain', async () => {
      const f = await fixture();
      try {
        f.clock.set('2026-01-10T00:00:00.000Z');
        const m = await remember(f.a, 'Team lead is Ana', {
          fields: { subject: 'team lead' },
          valid_from: '2024-01-01',
        });
        f.clock.set('2026-02-10T00:00:00.000Z');
        await f.a.apply(
          [{ op: 'supersede', id: m.id, abstract: 'Team lead is Bruno', valid_from: '2025-01-01' }],
          HUMAN,
        );
        f.clock.set('2026-03-10T00:00:00.000Z');
        await f.a.apply(
          [{ op: 'supersede', id: m.id, abstract: 'Team lead is Chen', valid_from: '2026-03-01' }],
          HUMAN,
        );
        f.clock.set('2026-04-01T00:00:00.000Z');
        const at = async (o: { asOf?: string; knownAt?: string }) =>
          abstracts(await f.a.recall('team lead', o));
        assert.deepEqual(await at({}), ['Team lead is Chen']);
        assert.deepEqual(await at({ asOf: '2024-06-01' }), ['Team lead is Ana']);
        assert.deepEqual(await at({ asOf: '2025-06-01' }), ['Team lead is Bruno']);
        assert.deepEqual(await at({ asOf: '2023-06-01' }), []);
        // What the store believed on 2026-01-20 (before Bruno was recorded): Ana, still valid.
        assert.deepEqual(await at({ knownAt: '2026-01-20' }), ['Team lead is Ana']);
        assert.deepEqual(await at({ knownAt: '2026-02-20' }), ['Team lead is Bruno']);
        assert.deepEqual(await at({ knownAt: '2026-02-20', asOf: '2024-06-01' }), [
          'Team lead is Ana',
        ]);
        assert.deepEqual(await at({ knownAt: '2025-12-01' }), []);
      } finally {
        await f.cleanup();
      }
    });

    it('known-at before a correction returns the belief of the time; after it, the fix', async () => {
      const f = await fixture();
      try {
        f.clock.set('2026-01-01T00:00:00.000Z');
        const m = await remember(f.a, 'Builds run on Node 18', {
          fields: { subject: 'build node version' },
          valid_from: '2025-01-01',
        });
        f.clock.set('2026-02-01T00:00:00.000Z');
        await f.a.apply([{ op: 'correct', id: m.id, abstract: 'Builds run on Node 20' }], HUMAN);
        f.clock.set('2026-03-01T00:00:00.000Z');
        assert.deepEqual(abstracts(await f.a.recall('builds node', { knownAt: '2026-01-15' })), [
          'Builds run on Node 18',
        ]);
        assert.deepEqual(abstracts(await f.a.recall('builds node', { knownAt: '2026-02-15' })), [
          'Builds run on Node 20',
        ]);
        assert.deepEqual(abstracts(await f.a.recall('builds node', { asOf: '2025-06-01' })), [
          'Builds run on Node 20',
        ]);
      } finally {
        await f.cleanup();
      }
    });

    it('idempotency keys replay the same request and refuse a different one', async () => {
      const f = await fixture();
      try {
        const op = {
          op: 'remember' as const,
          type: 'fact',
          abstract: 'Logs ship to Loki',
          idempotency_key: 'k-1',
        };
        const [first] = await f.a.apply([op], AGENT);
        const [again] = await f.a.apply([op], AGENT);
        assert.equal(again!.id, first!.id);
        assert.equal(again!.replayed, true);
        await assert.rejects(
          f.a.apply([{ ...op, abstract: 'Logs ship to Elastic' }], AGENT),
          (e: Error & { code?: string }) => e.code === 'conflict',
        );
        assert.equal((await f.a.recall('logs ship')).results.length, 1);
      } finally {
        await f.cleanup();
      }
    });

    it('a stale expected_rev is a conflict and changes nothing; the right one applies', async () => {
      const f = await fixture();
      try {
        const m = await remember(f.a, 'Retries use exponential backoff', {
          fields: { subject: 'retries' },
        });
        f.clock.advance(1000);
        await f.a.apply(
          [
            {
              op: 'supersede',
              id: m.id,
              expected_rev: 1,
              abstract: 'Retries use jittered backoff',
            },
          ],
          HUMAN,
        );
        f.clock.advance(1000);
        await assert.rejects(
          f.a.apply(
            [{ op: 'supersede', id: m.id, expected_rev: 1, abstract: 'Retries are disabled' }],
            HUMAN,
          ),
          (e: Error & { code?: string }) => e.code === 'conflict' && /rev 2/.test(e.message),
        );
        assert.deepEqual(abstracts(await f.a.recall('retries backoff disabled')), [
          'Retries use jittered backoff',
        ]);
        const log = await f.a.log({ op: 'refuse' });
        assert.equal(log.length, 1, 'the refusal is journaled');
      } finally {
        await f.cleanup();
      }
    });

    it('the same subject in two projects never collides', async () => {
      const f = await fixture();
      try {
        const a = await remember(f.a, 'Auth uses sessions', { fields: { subject: 'auth' } });
        const b = await remember(f.b, 'Auth uses JWT', { fields: { subject: 'auth' } });
        assert.notEqual(a.id, b.id);
        assert.deepEqual(abstracts(await f.a.recall('auth')), ['Auth uses sessions']);
        assert.deepEqual(abstracts(await f.b.recall('auth')), ['Auth uses JWT']);
        await assert.rejects(
          remember(f.a, 'Auth uses magic links', { fields: { subject: 'auth' } }),
          /already exists/,
        );
      } finally {
        await f.cleanup();
      }
    });

    it('finds stemmed, accented and CJK text', async () => {
      const f = await fixture();
      try {
        const a = await remember(f.a, 'The café menu service is flaky on Mondays');
        const b = await remember(f.a, '数据库迁移在周五进行');
        const c = await remember(f.a, 'Indexing jobs are batched nightly');
        assert.deepEqual(ids(await f.a.recall('cafe')), [a.id]);
        assert.deepEqual(ids(await f.a.recall('数据库')), [b.id]);
        assert.deepEqual(ids(await f.a.recall('index job batch')), [c.id]);
      } finally {
        await f.cleanup();
      }
    });

    it('history keeps every revision verbatim with both time axes', async () => {
      const f = await fixture();
      try {
        f.clock.set('2026-01-01T00:00:00.000Z');
        const m = await remember(f.a, 'Release train is weekly', {
          fields: { subject: 'release train' },
        });
        f.clock.set('2026-02-01T00:00:00.000Z');
        await f.a.apply(
          [{ op: 'supersede', id: m.id, abstract: 'Release train is biweekly' }],
          HUMAN,
        );
        f.clock.set('2026-03-01T00:00:00.000Z');
        await f.a.apply([{ op: 'retract', id: m.id, reason: 'no more trains' }], HUMAN);
        const h = await f.a.history(m.id);
        assert.deepEqual(
          h.revisions.map((r) => [r.rev, r.status, r.abstract]),
          [
            [1, 'superseded', 'Release train is weekly'],
            [2, 'retracted', 'Release train is biweekly'],
            [3, 'retracted', 'Release train is biweekly'],
          ],
        );
        assert.equal(h.revisions[0]!.valid_to, '2026-02-01T00:00:00.000Z');
        assert.equal(h.revisions[0]!.retired_at, '2026-02-01T00:00:00.000Z');
        assert.equal(h.revisions[1]!.retired_at, '2026-03-01T00:00:00.000Z');
        assert.deepEqual(ids(await f.a.recall('release train')), []);
        assert.deepEqual(abstracts(await f.a.recall('release train', { knownAt: '2026-02-15' })), [
          'Release train is biweekly',
        ]);
      } finally {
        await f.cleanup();
      }
    });

    it('listCurrent returns live memories of the given scopes only', async () => {
      const f = await fixture();
      try {
        const live = await remember(f.a, 'Queue is RabbitMQ');
        const dead = await remember(f.a, 'Queue was SQS');
        await remember(f.b, 'Queue is Kafka');
        await f.a.apply([{ op: 'retract', id: dead.id }], HUMAN);
        const cur = await f.store.listCurrent([PROJECT_A, 'global']);
        assert.deepEqual(
          cur.map((v) => v.id),
          [live.id],
        );
        const all = await f.store.listCurrent([PROJECT_A], { includeEnded: true });
        assert.deepEqual(all.map((v) => v.id).sort(), [live.id, dead.id].sort());
      } finally {
        await f.cleanup();
      }
    });

    it('rebuild loses nothing: recall is identical before and after', async () => {
      const f = await fixture();
      try {
        const m = await remember(f.a, 'Payments use Stripe', { fields: { subject: 'payments' } });
        await remember(f.a, 'Payments retries happen in a worker');
        await remember(f.b, 'Payments use Adyen');
        f.clock.advance(1000);
        await f.a.apply(
          [{ op: 'supersede', id: m.id, abstract: 'Payments use Stripe and PayPal' }],
          HUMAN,
        );
        const before = await f.a.recall('payments stripe worker', {
          explain: true,
          logUsage: false,
        });
        await f.store.rebuild();
        const after = await f.a.recall('payments stripe worker', {
          explain: true,
          logUsage: false,
        });
        assert.ok(before.results.length >= 2);
        assert.deepEqual(after, before);
        assert.equal((await f.a.verifyJournal()).ok, true);
      } finally {
        await f.cleanup();
      }
    });
  });
}
