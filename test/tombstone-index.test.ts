// The indexed tombstone lookup (core/normalize.ts, "Indexed lookup") refuses exactly what the
// full scan refuses: over fuzzed sets of rejected values and fuzzed texts (respellings, bodies,
// controls), the matcher built over the tombstones a store's index would return (by exact key,
// or found under their indexed gram with every other gram of theirs held by the text) gives the
// same answer, as a value and as a passage, as the matcher over them all.
// Each run also shows refusals and acceptances happen, so the equality is not vacuous. The
// stores' own indexes are held to the same equivalence by the conformance suite.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  holdsTombstoneGrams,
  normalizeValue,
  pickTombstoneGram,
  tombstoneGram,
  tombstoneGrams,
  tombstoneKey,
  tombstoneMatcher,
  tombstoneProbe,
  TombstoneIndex,
  type Tombstone,
} from '../src/core/normalize.js';
import pg from 'pg';
import { indexTombstones } from '../src/store/postgres/schema.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import {
  reindexTombstones,
  tombstoneCandidatesMany,
  tombstoneLookup,
} from '../src/store/postgres/tombstone-rows.js';
import { AGENT, HUMAN, PROJECT_A, engineFor, testClock } from './helpers.js';
import { pgSkipReason, throwawayStore } from './pg-fixtures.js';
import { checkedText, rejectedValue } from './tombstone-fuzz.js';

/** A remember through `e` that an armed tombstone refuses. */
function refusedRemember(e: ReturnType<typeof engineFor>, abstract: string, why?: string) {
  return assert.rejects(
    e.apply([{ op: 'remember', type: 'fact', abstract }], AGENT),
    (x: Error & { code?: string }) => x.code === 'refused',
    why,
  );
}

const skip = await pgSkipReason();

const SCOPE = 'project:acme-api-1a2b3c';

function tombstone(scope: string, value: string): Tombstone {
  return {
    key: tombstoneKey(scope, value),
    scope,
    kind: 'value',
    value_norm: normalizeValue(value),
    reason: null,
    actor: { kind: 'human' },
    at: '2025-01-01T00:00:00.000Z',
    from_op: 'arm',
    memory: null,
  };
}

/** Each tombstone's indexed gram, as a store arming them in this order picks it. */
function indexGrams(all: readonly Tombstone[]): Map<Tombstone, string> {
  const postings = new Map<string, number>();
  const out = new Map<Tombstone, string>();
  for (const t of all) {
    const g = pickTombstoneGram(tombstoneGrams(t), (x) => postings.get(x) ?? 0);
    postings.set(g, (postings.get(g) ?? 0) + 1);
    out.set(t, g);
  }
  return out;
}

/** What a store's index returns for the probe: by key, or by gram with all its grams held. */
function indexed(all: readonly Tombstone[], values: string[], passages: string[]): Tombstone[] {
  const p = tombstoneProbe(SCOPE, values, passages);
  const keys = new Set(p.keys);
  const grams = new Set(p.grams);
  const by = indexGrams(all);
  return all.filter(
    (t) =>
      t.scope === SCOPE &&
      (keys.has(t.key) || (grams.has(by.get(t)!) && holdsTombstoneGrams(tombstoneGrams(t), grams))),
  );
}

test('property: the indexed lookup refuses exactly what the full scan refuses', () => {
  let refused = 0;
  let accepted = 0;
  let narrowed = 0;
  fc.assert(
    fc.property(
      fc
        .uniqueArray(rejectedValue, { minLength: 1, maxLength: 40 })
        .chain((values) =>
          fc.tuple(
            fc.constant(values),
            fc.array(checkedText(values), { minLength: 1, maxLength: 20 }),
          ),
        ),
      ([values, texts]) => {
        const all = values.map((v) => tombstone(SCOPE, v));
        const full = tombstoneMatcher(all, SCOPE);
        // The in-memory index (the Postgres store's at an unchanged version) answers the same.
        const index = new TombstoneIndex(SCOPE);
        for (const t of all) index.add(t);
        for (const text of texts) {
          const probe = tombstoneProbe(SCOPE, [text], [text]);
          const m = tombstoneMatcher(index.candidates(probe), SCOPE);
          assert.equal(m.value(text)?.key ?? null, full.value(text)?.key ?? null, `index ${text}`);
          assert.equal(
            m.passage(text)?.key ?? null,
            full.passage(text)?.key ?? null,
            `index passage ${text}`,
          );
          const asValue = tombstoneMatcher(indexed(all, [text], []), SCOPE).value(text);
          assert.equal(asValue?.key ?? null, full.value(text)?.key ?? null, `value ${text}`);
          const asPassage = tombstoneMatcher(indexed(all, [], [text]), SCOPE).passage(text);
          assert.equal(asPassage?.key ?? null, full.passage(text)?.key ?? null, `passage ${text}`);
          if (full.value(text) || full.passage(text)) refused++;
          else accepted++;
          if (indexed(all, [text], [text]).length < all.length) narrowed++;
        }
      },
    ),
    { numRuns: 300 },
  );
  assert.ok(refused > 100, `refusals happen (${refused})`);
  assert.ok(accepted > 100, `acceptances happen (${accepted})`);
  assert.ok(narrowed > 100, `the index leaves tombstones out (${narrowed})`);
});

test('the lookup reads the tombstones a text could match, not the others', () => {
  const all = [
    'the staging database password rotates every 90 days',
    'deploy on fridays',
    'billing worker timeout 30',
  ].map((v) => tombstone(SCOPE, v));
  const got = indexed(all, ['The 5tag1ng data base passw0rd rotates every 90 days'], []);
  assert.deepEqual(
    got.map((t) => t.value_norm),
    ['the staging database password rotates every 90 days'],
  );
  assert.equal(
    tombstoneMatcher(got, SCOPE).value('The 5tag1ng data base passw0rd rotates every 90 days'),
    got[0],
  );
  // A value without content words is looked up by every text (it has no gram: indexed under
  // ''), and a purged one.
  assert.deepEqual(tombstoneGrams(tombstone(SCOPE, 'we should do it')), []);
  assert.deepEqual(tombstoneGrams({ ...all[0]!, kind: 'purged', value_norm: '' }), []);
  assert.equal(
    pickTombstoneGram([], () => 0),
    '',
  );
  assert.ok(tombstoneGrams(all[1]!).length > 1);
  assert.equal(tombstoneGram(tombstone(SCOPE, 'we should do it')), '');
});

test('values that share grams: only those whose every gram the text holds are read', () => {
  // 300 values sharing their first two words, the third each its own; and 300 sharing a word.
  // Three consonants spelling i (none a stemmer strips or a look-alike folds: no s, y, l).
  const C = 'bcdfghjkmnpqrtvwxz';
  const letters = (i: number) =>
    C[Math.floor(i / 324) % 18]! + C[Math.floor(i / 18) % 18]! + C[i % 18]!;
  const values = [
    ...Array.from({ length: 300 }, (_, i) => `billing worker zor${letters(i)}`),
    ...Array.from({ length: 300 }, (_, i) => `deployment kel${letters(i)}mix`),
  ];
  const all = values.map((v) => tombstone(SCOPE, v));
  // Each gram indexes few tombstones (the index picks the emptiest gram of each).
  const counts = new Map<string, number>();
  for (const g of indexGrams(all).values()) counts.set(g, (counts.get(g) ?? 0) + 1);
  assert.ok(Math.max(...counts.values()) <= 3, `longest list ${Math.max(...counts.values())}`);
  const full = tombstoneMatcher(all, SCOPE);
  const cases: [string, string | null][] = [
    ['The billing worker retries after a deployment', null],
    ['billing worker zorbdf', 'billing worker zorbdf'],
    ['B1lling w0rker z0rbdf!', 'billing worker zorbdf'],
    ['Deployment: kelbdfmix.', 'deployment kelbdfmix'],
    ['Deployment: kelbdfmax.', null],
  ];
  for (const [text, want] of cases) {
    const got = indexed(all, [text], [text]);
    assert.ok(got.length <= 3, `${text}: ${got.length} candidates`);
    const m = tombstoneMatcher(got, SCOPE);
    const hit = m.value(text) ?? m.passage(text);
    assert.equal(hit?.value_norm ?? null, want, text);
    assert.equal(hit?.key ?? null, (full.value(text) ?? full.passage(text))?.key ?? null, text);
  }
});

/** A pool as the statement modules' query function. */
function rowsOf(pool: pg.Pool) {
  return <R extends pg.QueryResultRow>(sql: string, params: unknown[] = []) =>
    pool.query<R>(sql, params);
}

/** A throwaway Postgres store, one raw connection to its database, and an engine on PROJECT_A. */
async function onPgStore(
  fn: (x: {
    f: Awaited<ReturnType<typeof throwawayStore>>;
    pool: pg.Pool;
    e: ReturnType<typeof engineFor>;
  }) => Promise<void>,
): Promise<void> {
  const f = await throwawayStore();
  const pool = new pg.Pool({ connectionString: f.db.url, max: 1 });
  try {
    await fn({ f, pool, e: engineFor(f.store, PROJECT_A, testClock('2026-03-01T10:00:00.000Z')) });
  } finally {
    await pool.end();
    await f.cleanup();
  }
}

test(
  'Postgres: tombstones armed before the lookup index existed are indexed by its migration step',
  { skip: skip ?? false },
  async () => {
    await onPgStore(async ({ pool, e }) => {
      const v = 'the staging database password rotates every 90 days';
      // The index rows themselves (the store would answer from its memory once warm).
      const rowsLookup = async (probe: { keys: string[]; grams: string[] }) =>
        (await tombstoneCandidatesMany(rowsOf(pool), 'acme', [{ scope: PROJECT_A, probe }]))[0]!;
      await e.apply([{ op: 'arm', value: v, scope: PROJECT_A }], HUMAN);
      // By gram only (its exact key would find it without the index).
      const byGram = { keys: [], grams: tombstoneProbe(PROJECT_A, [v]).grams };
      // The rows as a mneme without the index left them: armed, not indexed.
      await pool.query('DELETE FROM tombstone_grams');
      assert.deepEqual(await rowsLookup(byGram), [], 'the lookup reads the index');
      // What migration 10 runs after creating the table (its gram, no grams kept beside it:
      // still found, only less narrowly).
      await indexTombstones(pool);
      const again = await rowsLookup(byGram);
      assert.deepEqual(
        again.map((t) => t.value_norm),
        [v],
        'the migration indexed the tombstone armed before it',
      );
      // What migration 12 runs: every armed tombstone indexed again, with all its grams.
      await reindexTombstones(pool);
      const { rows } = await pool.query<{ n: string; grams: string[] }>(
        'SELECT count(*) OVER () AS n, grams FROM tombstone_grams',
      );
      assert.equal(rows.length, 1);
      assert.deepEqual(rows[0]!.grams, tombstoneGrams(tombstone(PROJECT_A, v)));
      assert.deepEqual(
        (await rowsLookup(byGram)).map((t) => t.value_norm),
        [v],
        'the migration indexed it again',
      );
      assert.deepEqual(
        await rowsLookup(tombstoneProbe(PROJECT_A, ['staging database'])),
        [],
        'a text holding only some of its grams does not read it',
      );
      const respelled = 'Stag1ng data base passw0rd rotates every 90 days';
      await refusedRemember(e, respelled);
      const other = 'the staging database password rotates every 30 days';
      const [ok] = await e.apply([{ op: 'remember', type: 'fact', abstract: other }], AGENT);
      assert.ok(ok!.id);
    });
  },
);

test(
  'Postgres: a lookup reads the index rows under the write’s grams, not every tombstone of the scope, with or without table statistics',
  { skip: skip ?? false },
  async () => {
    await onPgStore(async ({ f, pool, e }) => {
      // 600 values sharing words (as in the test above), armed before any ANALYZE: a planner
      // that knows nothing of the table must not turn the lookup into a scan of them.
      const C = 'bcdfghjkmnpqrtvwxz';
      const letters = (i: number) =>
        C[Math.floor(i / 324) % 18]! + C[Math.floor(i / 18) % 18]! + C[i % 18]!;
      const values = [
        ...Array.from({ length: 300 }, (_, i) => `billing worker zor${letters(i)}`),
        ...Array.from({ length: 300 }, (_, i) => `deployment kel${letters(i)}mix`),
      ];
      for (let i = 0; i < values.length; i += 300)
        await e.apply(
          values
            .slice(i, i + 300)
            .map((value) => ({ op: 'arm' as const, value, scope: PROJECT_A })),
          HUMAN,
        );
      const all = await f.store.tombstones([PROJECT_A]);
      assert.equal(all.length, 600);
      const text = 'B1lling w0rker z0rbdf! and a deployment of kelbdfmix';
      const body = `${text}. The billing worker retries after a deployment, every night.`;
      const asks = [PROJECT_A, 'global'].map((scope) => ({
        scope,
        probe: tombstoneProbe(scope, [text], [body]),
      }));
      const check = async (when: string) => {
        // What this transaction's scans read of the table (a sequential scan's rows, an index
        // scan's heap fetches, whether a filter then keeps them or not).
        const c = await pool.connect();
        let read = -1;
        let descents = -1;
        const query = async <R extends pg.QueryResultRow>(sql: string, params: unknown[] = []) => {
          await c.query('BEGIN');
          try {
            // The counters may still hold an earlier transaction's counts (not yet flushed): the
            // difference across the statement is what it did.
            const counters = async () => {
              const { rows } = await c.query<{ n: string; scans: string }>(
                `SELECT seq_tup_read + coalesce(idx_tup_fetch, 0) AS n,
                        coalesce(idx_scan, 0) AS scans
                 FROM pg_stat_xact_user_tables WHERE relname = 'tombstone_grams'`,
              );
              return { n: Number(rows[0]!.n), scans: Number(rows[0]!.scans) };
            };
            const before = await counters();
            const got = await c.query<R>(sql, params);
            const after = await counters();
            read = after.n - before.n;
            descents = after.scans - before.scans;
            return got;
          } finally {
            await c.query('ROLLBACK');
          }
        };
        const [found, global] = await tombstoneCandidatesMany(query, 'acme', asks).finally(() =>
          c.release(),
        );
        assert.ok(read >= 2 && read <= 30, `${when}: ${read} index rows read of 600`);
        assert.deepEqual(global, [], `${when}: no tombstone in global`);
        // One descent per gram into the scope that holds tombstones; global, which holds none,
        // costs one (its emptiness), not one per gram (each as deep as the index the project's
        // rows fill).
        const grams = asks[0]!.probe.grams.length;
        assert.ok(
          descents >= grams && descents <= grams + 4,
          `${when}: ${descents} index descents for ${grams} grams in each of 2 scopes`,
        );
        // The candidates refuse what the full scan refuses.
        const full = tombstoneMatcher(all, PROJECT_A);
        const m = tombstoneMatcher(found!, PROJECT_A);
        assert.equal(m.value(text)?.key ?? null, full.value(text)?.key ?? null, when);
        const hit = m.passage(body);
        assert.ok(hit, `${when}: the body repeats a rejected value`);
        assert.equal(hit.key, full.passage(body)?.key, when);
        assert.ok(
          found!.some((t) => t.value_norm === 'billing worker zorbdf') &&
            found!.some((t) => t.value_norm === 'deployment kelbdfmix'),
          `${when}: both restated values are read`,
        );
      };
      await check('before ANALYZE');
      await pool.query('ANALYZE tombstone_grams');
      await check('after ANALYZE');
    });
  },
);

test(
  'Postgres: a long body’s lookup is planned by what it reads, not compiled by JIT for its length',
  { skip: skip ?? false },
  async () => {
    await onPgStore(async ({ pool, e }) => {
      const v = 'the staging database password rotates every 90 days';
      await e.apply([{ op: 'arm', value: v, scope: PROJECT_A }], HUMAN);
      // 2 000 words of distinct syllables (about 15 000 grams), the rejected value among them.
      const C = 'bcdfghjkmnpqrtvwxz';
      const word = (i: number) =>
        `${C[i % 18]}a${C[Math.floor(i / 18) % 18]}o${C[Math.floor(i / 324) % 18]}u`;
      const words = Array.from({ length: 2000 }, (_, i) => word(i * 7));
      const body = [...words.slice(0, 1000), `Per ops: ${v}.`, ...words.slice(1000)].join(' ');
      const asks = [PROJECT_A, 'global'].map((scope) => ({
        scope,
        probe: tombstoneProbe(scope, ['Rotation'], [body]),
      }));
      assert.ok(asks[0]!.probe.grams.length > 10_000, `${asks[0]!.probe.grams.length} grams`);
      let asked: { sql: string; params: unknown[] } | null = null;
      const query = <R extends pg.QueryResultRow>(sql: string, params: unknown[] = []) => {
        asked = { sql, params };
        return pool.query<R>(sql, params);
      };
      const [found, global] = await tombstoneCandidatesMany(query, 'acme', asks);
      assert.deepEqual(
        found!.map((t) => t.value_norm),
        [v],
        'the value inside the body is read',
      );
      assert.equal(tombstoneMatcher(found!, PROJECT_A).passage(body)?.value_norm, v);
      assert.deepEqual(global, []);
      // What the planner made of it: below the cost at which Postgres compiles a statement
      // (costed by the array's length it was 20× over, and compiling took most of a second).
      const { sql, params } = asked!;
      const { rows } = await pool.query<{ 'QUERY PLAN': [{ Plan: { 'Total Cost': number } }] }>(
        `EXPLAIN (FORMAT JSON) ${sql}`,
        params,
      );
      const cost = rows[0]!['QUERY PLAN'][0].Plan['Total Cost'];
      const { rows: jit } = await pool.query<{ c: string }>(
        "SELECT current_setting('jit_above_cost') AS c",
      );
      assert.ok(cost < Number(jit[0]!.c), `estimated cost ${cost}, jit_above_cost ${jit[0]!.c}`);
    });
  },
);

/** 600 values of the shape above: 300 sharing two words, 300 sharing one. */
function sharedValues(): string[] {
  const C = 'bcdfghjkmnpqrtvwxz';
  const letters = (i: number) =>
    C[Math.floor(i / 324) % 18]! + C[Math.floor(i / 18) % 18]! + C[i % 18]!;
  return Array.from({ length: 300 }, (_, i) => [
    `billing worker zor${letters(i)}`,
    `deployment kel${letters(i)}mix`,
  ]).flat();
}

/** What one statement read of tombstone_grams (rows, descents), run in its own transaction. */
async function counted<T>(
  pool: pg.Pool,
  fn: (query: ReturnType<typeof rowsOf>) => Promise<T>,
): Promise<{ got: T; rows: number; descents: number }> {
  const c = await pool.connect();
  try {
    const counters = async () => {
      const { rows } = await c.query<{ n: string; scans: string }>(
        `SELECT seq_tup_read + coalesce(idx_tup_fetch, 0) AS n, coalesce(idx_scan, 0) AS scans
         FROM pg_stat_xact_user_tables WHERE relname = 'tombstone_grams'`,
      );
      return { n: Number(rows[0]!.n), scans: Number(rows[0]!.scans) };
    };
    await c.query('BEGIN');
    const before = await counters();
    const got = await fn(<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []) =>
      c.query<R>(sql, params),
    );
    const after = await counters();
    await c.query('ROLLBACK');
    return { got, rows: after.n - before.n, descents: after.scans - before.scans };
  } finally {
    c.release();
  }
}

test(
  'Postgres: at an unchanged tombstone version a lookup reads no index row, after 60 arms as after 600; at a moved one it reads the rows',
  { skip: skip ?? false },
  async () => {
    await onPgStore(async ({ pool, e }) => {
      const values = sharedValues();
      const text = 'B1lling w0rker z0rbbf! and a deployment of kelbbfmix';
      const body = `${text}. The billing worker retries after a deployment, every night.`;
      const asks = [PROJECT_A, 'global'].map((scope) => ({
        scope,
        probe: tombstoneProbe(scope, [text], [body]),
      }));
      const reads: Record<string, { rows: number; descents: number }> = {};
      for (const [from, to] of [
        [0, 60],
        [60, 600],
      ] as const) {
        await e.apply(
          values.slice(from, to).map((value) => ({ op: 'arm' as const, value, scope: PROJECT_A })),
          HUMAN,
        );
        // At a version the caller does not hold: the rows, as tombstoneCandidatesMany reads them.
        const moved = await counted(pool, (q) => tombstoneLookup(q, 'acme', asks, null));
        assert.ok(moved.got.found, `${to}: read at a moved version`);
        assert.ok(moved.rows >= 2, `${to}: ${moved.rows} index rows read at a moved version`);
        assert.ok(
          moved.got.found[0]!.some((t) => t.value_norm === 'billing worker zorbbf'),
          `${to}: the restated value is read`,
        );
        // At the version it holds: no index row, no descent into them, nothing shipped.
        const same = await counted(pool, (q) =>
          tombstoneLookup(q, 'acme', asks, moved.got.version),
        );
        assert.equal(same.got.found, null, `${to}: answered as unchanged`);
        assert.equal(same.got.version, moved.got.version);
        reads[to] = { rows: same.rows, descents: same.descents };
      }
      assert.deepEqual(reads, { 60: { rows: 0, descents: 0 }, 600: { rows: 0, descents: 0 } });
    });
  },
);

test(
  'Postgres: a warm store answers lookups from its memory at an unchanged version, the same candidates; an arm or lift by another instance is read at the next write',
  { skip: skip ?? false },
  async () => {
    await onPgStore(async ({ f, pool, e }) => {
      const values = sharedValues();
      await e.apply(
        values.map((value) => ({ op: 'arm' as const, value, scope: PROJECT_A })),
        HUMAN,
      );
      const text = 'B1lling w0rker z0rbdf! and a deployment of kelbdfmix';
      const body = `${text}. The billing worker retries after a deployment, every night.`;
      const probe = tombstoneProbe(PROJECT_A, [text], [body]);
      const fromRows = async () =>
        (await tombstoneCandidatesMany(rowsOf(pool), 'acme', [{ scope: PROJECT_A, probe }]))[0]!;
      const want = (await fromRows()).map((t) => t.key);
      assert.ok(want.length >= 2, `${want.length} candidates`);
      // Two writes at the same version (each looks up the value's scope and global) start the
      // index builds; then they answer.
      for (let i = 0; i < 2; i++) {
        const [w] = await e.apply(
          [{ op: 'remember', type: 'fact', abstract: `billing worker zorbdg retries ${i}` }],
          AGENT,
        );
        assert.ok(w!.id, 'a text restating none is accepted');
      }
      await f.store.settleTombstoneIndexes();
      // With the index rows gone (the version unchanged: tombstone_events untouched), the rows
      // find nothing but the store still finds the same candidates, in the same order.
      await pool.query('DELETE FROM tombstone_grams');
      assert.deepEqual(await fromRows(), [], 'the rows are gone');
      assert.deepEqual(
        (await f.store.tombstoneCandidates(PROJECT_A, probe)).map((t) => t.key),
        want,
        'answered from memory',
      );
      const respelled = 'B1lling w0rker z0rbdf';
      await refusedRemember(e, respelled, 'a respelling is refused from memory');
      const [ok] = await e.apply(
        [{ op: 'remember', type: 'fact', abstract: 'billing worker zorbdg retries again' }],
        AGENT,
      );
      assert.ok(ok!.id, 'a text restating none is accepted from memory');
      // Another instance arms a value: the version moves, so the next write reads the rows
      // (and the new tombstone's own row, the only one left) and is refused.
      const two = await PostgresStore.open(f.db.url, { tenant: 'acme' });
      try {
        const e2 = engineFor(two, PROJECT_A, testClock('2026-03-01T11:00:00.000Z'));
        const fresh = 'the staging database password rotates every 90 days';
        await e2.apply([{ op: 'arm', value: fresh, scope: PROJECT_A }], HUMAN);
        await refusedRemember(
          e,
          'Stag1ng data base passw0rd rotates every 90 days',
          'armed by the other instance: refused at the next write',
        );
        await e2.apply(
          [{ op: 'lift', key: tombstoneKey(PROJECT_A, fresh), scope: PROJECT_A }],
          HUMAN,
        );
        const [again] = await e.apply(
          [
            {
              op: 'remember',
              type: 'fact',
              abstract: 'Stag1ng data base passw0rd rotates every 90 days',
            },
          ],
          AGENT,
        );
        assert.ok(again!.id, 'lifted by the other instance: accepted at the next write');
        // Armed again there; two writes at that version bring the index up to it from the
        // events since (the arm and lift above, this arm); with the rows gone again, the
        // respelling is refused from memory and the others are still found.
        await e2.apply([{ op: 'arm', value: fresh, scope: PROJECT_A }], HUMAN);
        for (const filler of ['basically', 'really'])
          await refusedRemember(
            e,
            `${filler} the stag1ng data base passw0rd rotates every 90 days`,
          );
        await f.store.settleTombstoneIndexes();
        await pool.query('DELETE FROM tombstone_grams');
        await refusedRemember(
          e,
          'the stag1ng database passw0rd rotates every 90 days',
          'armed again by the other instance: refused from the index brought up to date',
        );
        assert.deepEqual(
          (await f.store.tombstoneCandidates(PROJECT_A, probe)).map((t) => t.key),
          want,
          'the earlier ones are still found from memory',
        );
        const [other] = await e.apply(
          [
            {
              op: 'remember',
              type: 'fact',
              abstract: 'the staging database password rotates every 30 days',
            },
          ],
          AGENT,
        );
        assert.ok(other!.id, 'a text restating none is still accepted');
      } finally {
        await two.close();
      }
      // In one apply, an arm then a write restating it: the transaction's own event moves the
      // version, so the write is checked against the rows, the new one among them.
      await assert.rejects(
        e.apply(
          [
            { op: 'arm', value: 'queue drains before the billing cutover', scope: PROJECT_A },
            { op: 'remember', type: 'fact', abstract: 'Queue drains before the b1lling cutover' },
          ],
          HUMAN,
        ),
        (x: Error & { code?: string }) => x.code === 'refused',
        'armed earlier in the same transaction: refused',
      );
    });
  },
);

test(
  'Postgres: a tombstone version that went back (a restore) is read whole: what it no longer holds is not refused from memory',
  { skip: skip ?? false },
  async () => {
    await onPgStore(async ({ f, pool, e }) => {
      const kept = 'the staging database password rotates every 90 days';
      const gone = 'billing worker timeout is thirty seconds';
      await e.apply([{ op: 'arm', value: kept, scope: PROJECT_A }], HUMAN);
      await e.apply([{ op: 'arm', value: gone, scope: PROJECT_A }], HUMAN);
      const warm = async (tag: string) => {
        for (let i = 0; i < 2; i++)
          await e.apply([{ op: 'remember', type: 'fact', abstract: `${tag} note ${i}` }], AGENT);
        await f.store.settleTombstoneIndexes();
      };
      await warm('warm');
      await refusedRemember(e, 'B1lling worker timeout is thirty seconds', 'armed: refused');
      // As a restore from before the second arm leaves it: its event and row gone, the version
      // back at the first arm's.
      await pool.query(
        `DELETE FROM tombstone_events WHERE seq = (SELECT max(seq) FROM tombstone_events)`,
      );
      await warm('after the restore');
      await pool.query('DELETE FROM tombstone_grams');
      const [ok] = await e.apply(
        [{ op: 'remember', type: 'fact', abstract: 'B1lling worker timeout is thirty seconds' }],
        AGENT,
      );
      assert.ok(ok!.id, 'no longer armed: accepted, from the index read again');
      await refusedRemember(
        e,
        'Stag1ng data base passw0rd rotates every 90 days',
        'still armed: refused from memory (the rows are gone)',
      );
    });
  },
);
