// Postgres search reads a query of words from the postings table (migration 13) that statement
// triggers on revisions keep. Two things must hold after every kind of write (remember,
// supersede, forget — a retract that rejects —, purge) and after an upgrade that backfills the
// postings of revisions written before the table existed: the table equals the revisions' token
// texts counted in JS (as core/ranking.ts countTokens counts), and a search over postings finds
// exactly what the GIN path (the token texts, the reference) finds — the same hits, revisions and
// relevances, with what a write retired or purged absent from both.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { rankingModel, type RankingModel } from '../src/core/ranking.js';
import { queryTerms } from '../src/core/text.js';
import type { Engine } from '../src/engine/engine.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import type { Query } from '../src/store/postgres/reads.js';
import { MIGRATIONS, migrate } from '../src/store/postgres/schema.js';
import { search, type CandidatePath } from '../src/store/postgres/search-rows.js';
import { HUMAN, engineFor, testClock } from './helpers.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const skip = await pgSkipReason();
if (skip) console.log(`# skipping the Postgres postings tests: ${skip}`);

const PROJECT = 'postings-000000d';
const clock = testClock('2026-03-01T10:00:00.000Z');
const POSTINGS_VERSION = MIGRATIONS.length;

/** Postings rows that differ from the revisions' token texts counted in JS (empty: they agree). */
async function postingsDrift(pool: pg.Pool, tenant: string): Promise<string[]> {
  const { rows: revs } = await pool.query<{
    id: string;
    rev: number;
    a: string;
    b: string;
    e: string;
    len: number;
  }>(
    `SELECT id, rev, fts_abstract AS a, fts_body AS b, fts_extra AS e, fts_len AS len
     FROM revisions WHERE tenant_id = $1`,
    [tenant],
  );
  const want = new Map<string, string>();
  for (const r of revs) {
    const counts = new Map<string, [number, number, number]>();
    [r.a, r.b, r.e].forEach((text, f) => {
      for (const tok of text === '' ? [] : text.split(' ')) {
        const c = counts.get(tok) ?? [0, 0, 0];
        c[f]!++;
        counts.set(tok, c);
      }
    });
    for (const [tok, c] of counts)
      want.set(`${tok} ${r.id}#${r.rev}`, `${c.join('/')} len ${r.len}`);
  }
  const { rows: have } = await pool.query<{
    lexeme: string;
    id: string;
    rev: number;
    ta: number;
    tb: number;
    te: number;
    len: number;
  }>('SELECT lexeme, id, rev, ta, tb, te, len FROM postings WHERE tenant_id = $1', [tenant]);
  const drift: string[] = [];
  for (const p of have) {
    const key = `${p.lexeme} ${p.id}#${p.rev}`;
    const got = `${p.ta}/${p.tb}/${p.te} len ${p.len}`;
    if (want.get(key) !== got)
      drift.push(`${key}: postings ${got}, text ${want.get(key) ?? 'none'}`);
    want.delete(key);
  }
  for (const [key, v] of want) drift.push(`${key}: postings none, text ${v}`);
  return drift;
}

describe('Postgres postings', { skip: skip ?? false }, () => {
  let db: ThrowawayDb;
  let pool: pg.Pool;
  let store: PostgresStore;
  let engine: Engine;
  /** The candidate statements run, by name. */
  const ran: string[] = [];
  /** Rows the postings statement shipped, per run. */
  const shipped: number[] = [];
  let query: Query;

  before(async () => {
    db = await throwawayDb(['acme']);
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    query = async (text, values, name) => {
      if (name?.startsWith('mneme_search_eligible')) ran.push(name);
      const r = await pool.query({ text, values, name });
      if (name?.startsWith('mneme_search_eligible_postings')) shipped.push(r.rows.length);
      return r;
    };
    store = PostgresStore.forTenant(pool, { tenant: 'acme' });
    engine = engineFor(store, PROJECT, clock);
  });

  after(async () => {
    await store?.close();
    await pool?.end();
    await db?.drop();
  });

  /** Both paths' hits for a query, as [id, rev, relevance] (relevance rounded). */
  async function both(text: string, limit = 5, model?: RankingModel) {
    const eligibility = {
      scopes: engine.scopes,
      asOf: clock().toISOString(),
      knownAt: null,
      minTrust: 'untrusted' as const,
      includeQuarantined: false,
    };
    const run = async (via: CandidatePath) => {
      ran.length = 0;
      const hits = await search(
        query,
        'acme',
        { terms: queryTerms(text), eligibility, limit, want: limit, model },
        via,
      );
      return {
        hits: hits.map((h) => [h.view.id, h.view.rev, Math.round(h.relevance * 1e9) / 1e9]),
        ran: [...ran],
      };
    };
    const postings = await run('postings');
    const gin = await run('gin');
    assert.ok(
      postings.ran.length > 0 &&
        postings.ran.every((n) => n.startsWith('mneme_search_eligible_postings')),
      `the postings path ran the postings statement: ${postings.ran.join(', ')}`,
    );
    assert.ok(
      gin.ran.every((n) => n === 'mneme_search_eligible'),
      'the reference ran the GIN one',
    );
    return { postings: postings.hits, gin: gin.hits, ran: postings.ran };
  }

  const QUERIES = [
    'deploy pipeline',
    'release notes staging',
    'zephyr',
    'cache warms noon',
    'build production pipeline zephyr',
    'quokka deploy',
  ];

  async function assertSameAsGin(what: string) {
    const texts = new Set<string>();
    for (const q of QUERIES) {
      const r = await both(q);
      assert.deepEqual(r.postings, r.gin, `${what}: "${q}"`);
      r.ran.forEach((n) => texts.add(n));
    }
    // Each of the statement's shapes ran: one term, two joined, more grouped.
    assert.deepEqual(
      [...texts].sort(),
      [
        'mneme_search_eligible_postings',
        'mneme_search_eligible_postings_1',
        'mneme_search_eligible_postings_2',
      ],
      `${what}: the statements run`,
    );
    // Narrowed (the common words left out, then re-scored): still the reference's hits.
    const narrow = rankingModel({ narrowBudgets: [3, Infinity] });
    const r = await both('deploy pipeline zephyr', 3, narrow);
    assert.deepEqual(r.postings, r.gin, `${what}: narrowed`);
  }

  it('keeps postings equal to the token texts and searches as the GIN path does, after every kind of write', async () => {
    const ops = Array.from({ length: 30 }, (_, i) => ({
      op: 'remember' as const,
      type: 'fact',
      abstract: `Deploy note ${i} about the release pipeline${i % 7 === 0 ? ' zephyr' : ''}`,
      body: `We deploy the build ${i % 2 ? 'to staging' : 'to production'} with the pipeline pipeline`,
      tags: i % 3 ? [] : ['release'],
    }));
    const written = await engine.apply(ops, HUMAN);
    assert.deepEqual(await postingsDrift(pool, 'acme'), [], 'after remember');
    await assertSameAsGin('after remember');

    // Supersede: the new revision is found, the old one is not (on both paths).
    clock.advance(60_000);
    const target = written[7]!;
    await engine.apply(
      [{ op: 'supersede', id: target.id, abstract: 'Zephyr deploy note, revised', body: 'quokka' }],
      HUMAN,
    );
    clock.advance(60_000);
    await engine.apply(
      [{ op: 'retract', id: written[14]!.id, reason: 'wrong', reject: true }],
      HUMAN,
    );
    assert.deepEqual(await postingsDrift(pool, 'acme'), [], 'after supersede and forget');
    await assertSameAsGin('after supersede and forget');
    const q = await both('quokka deploy');
    assert.deepEqual(q.postings[0]?.slice(0, 2), [target.id, 2], 'the new revision is found');
    assert.ok(
      !q.postings.some(([id, rev]) => id === target.id && rev === 1),
      'the superseded revision is not',
    );
    const z = await both('zephyr', 10);
    assert.ok(
      !z.postings.some(([id]) => id === written[14]!.id),
      'a forgotten memory is not found',
    );
    assert.ok(
      z.postings.some(([id]) => id === written[0]!.id),
      'its neighbour still is',
    );

    // Purge: the purged text leaves the postings with its revisions' text.
    clock.advance(60_000);
    await engine.purge({ id: target.id, reason: 'test purge' }, HUMAN);
    assert.deepEqual(await postingsDrift(pool, 'acme'), [], 'after purge');
    const { rows } = await pool.query(
      "SELECT 1 FROM postings WHERE tenant_id = 'acme' AND lexeme = 'quokka'",
    );
    assert.equal(rows.length, 0, 'the purged word has no posting left');
    assert.deepEqual((await both('quokka')).postings, [], 'nor is it found');
    await assertSameAsGin('after purge');
  });

  it('ships only the best of more matches than it ships, chosen as core ranks them', async () => {
    // 120 rows hold "ibex" twice in the body, 5 once in the abstract (weighed 4: the best).
    // Only a ranking in SQL with core's field weights ships the 5 among its cut of 100.
    const ops = [
      ...Array.from({ length: 120 }, (_, i) => ({
        op: 'remember' as const,
        type: 'fact',
        abstract: `Herd log ${i}`,
        body: `the ibex crossed the ridge, an ibex again`,
      })),
      ...Array.from({ length: 5 }, (_, i) => ({
        op: 'remember' as const,
        type: 'fact',
        abstract: `Ibex sighting ${i}`,
        body: 'on the ridge',
      })),
    ];
    const written = await engine.apply(ops, HUMAN);
    const best = new Set(written.slice(120).map((w) => w.id));
    shipped.length = 0;
    const r = await both('ibex', 5);
    assert.deepEqual(r.postings, r.gin);
    assert.deepEqual(
      new Set(r.postings.map(([id]) => id)),
      best,
      'the abstract matches rank first',
    );
    assert.ok(
      shipped.length > 0 && shipped.every((n) => n <= 100),
      `the postings statement shipped at most the cut (${shipped.join(', ')} rows), not all 125`,
    );
  });

  it('looks beyond a pool of ineligible best matches for the eligible ones', async () => {
    // A cut of 2 (limit 1) keeps a pool of 8: the 8 best "yak" rows are retracted, the 2
    // eligible ones rank below them.
    const model = rankingModel({ narrowCandidates: 2 });
    const best = await engine.apply(
      Array.from({ length: 8 }, (_, i) => ({
        op: 'remember' as const,
        type: 'fact',
        abstract: `Yak yak shearing ${i}`,
      })),
      HUMAN,
    );
    const rest = await engine.apply(
      Array.from({ length: 2 }, (_, i) => ({
        op: 'remember' as const,
        type: 'fact',
        abstract: `Shearing season ${i}`,
        body: 'one yak among many long words of a body that is long',
      })),
      HUMAN,
    );
    let r = await both('yak', 1, model);
    assert.deepEqual(r.postings, r.gin);
    assert.ok(
      best.some((b) => b.id === r.postings[0]?.[0]),
      'before: a best match is found',
    );
    clock.advance(60_000);
    await engine.apply(
      best.map((b) => ({ op: 'retract' as const, id: b.id, reason: 'wrong' })),
      HUMAN,
    );
    shipped.length = 0;
    r = await both('yak', 1, model);
    assert.deepEqual(r.postings, r.gin);
    assert.ok(
      rest.some((b) => b.id === r.postings[0]?.[0]),
      `an eligible match beyond the pool is found: ${JSON.stringify(r.postings)}`,
    );
    assert.deepEqual(shipped, [0, 2], 'the full pool yielded none; the unbounded run found both');
  });

  it('backfills the postings of revisions written before the migration, and then searches the same', async () => {
    // The database as the previous version left it: no postings, no triggers.
    await pool.query(`DROP TABLE postings; DROP FUNCTION mneme_postings() CASCADE;
      DROP FUNCTION mneme_tokens(text, text, text);
      DELETE FROM schema_migrations WHERE version = ${POSTINGS_VERSION}`);
    const before = await engine.apply(
      [
        { op: 'remember', type: 'fact', abstract: 'Wombat pipeline owns staging', body: 'wombat' },
        { op: 'remember', type: 'fact', abstract: 'Wombat cache notes', body: 'the cache' },
      ],
      HUMAN,
    );
    clock.advance(60_000);
    await engine.apply(
      [{ op: 'supersede', id: before[1]!.id, abstract: 'Wombat cache notes, revised' }],
      HUMAN,
    );
    const reference = await both('wombat cache').catch((e: Error) => e);
    assert.ok(reference instanceof Error, 'without the table the postings path cannot run');

    assert.deepEqual(await migrate(pool), [POSTINGS_VERSION], 'the upgrade applies migration 13');
    assert.deepEqual(await postingsDrift(pool, 'acme'), [], 'every revision has its postings');
    const w = await both('wombat cache');
    assert.deepEqual(w.postings, w.gin);
    assert.deepEqual(
      w.postings.map(([id, rev]) => `${id}#${rev}`).sort(),
      [`${before[0]!.id}#1`, `${before[1]!.id}#2`].sort(),
      'the revisions written before the upgrade are found; the superseded one is not',
    );
    await assertSameAsGin('after the upgrade');

    // And the triggers are back: a write after the upgrade keeps them equal.
    await engine.apply([{ op: 'remember', type: 'fact', abstract: 'Wombat zephyr' }], HUMAN);
    assert.deepEqual(await postingsDrift(pool, 'acme'), [], 'after a write on the upgraded store');
    await assertSameAsGin('after a write on the upgraded store');
  });
});
