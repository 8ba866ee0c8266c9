// Postgres search reads its BM25 counts from tables the revisions' triggers keep (migration 9)
// instead of counting rows at every search: those counts must equal a count of the rows after
// every kind of write (remember, supersede, retract, purge, rebuild), per tenant. And the
// rare-term narrowing they drive must not change what a search finds: on a fixture where one
// rare word decides, the narrowed search (left-out words re-scored by their exact BM25) gives
// the same top-k, with the same relevances, as the search that matches every word — while its
// candidate statement really matched the rare word alone.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { rankingModel } from '../src/core/ranking.js';
import { queryTerms } from '../src/core/text.js';
import type { Engine } from '../src/engine/engine.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { HUMAN, engineFor, testClock } from './helpers.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const skip = await pgSkipReason();
if (skip) console.log(`# skipping the Postgres search-count tests: ${skip}`);

const PROJECT = 'counts-0000000c';
const clock = testClock('2026-03-01T10:00:00.000Z');

/** The kept counts that differ from a count of the tenant's rows (empty: they agree). */
async function countDrift(pool: pg.Pool, tenant: string) {
  const terms = await pool.query<{ lexeme: string; kept: number; counted: number }>(
    `WITH counted AS (
       SELECT l.l AS lexeme, count(*)::int AS df
       FROM revisions r, unnest(tsvector_to_array(r.tsv)) AS l(l)
       WHERE r.tenant_id = $1 GROUP BY 1)
     SELECT coalesce(k.lexeme, c.lexeme) AS lexeme, coalesce(k.df, 0) AS kept,
            coalesce(c.df, 0) AS counted
     FROM (SELECT lexeme, df FROM fts_terms WHERE tenant_id = $1) k
     FULL JOIN counted c ON c.lexeme = k.lexeme
     WHERE coalesce(k.df, 0) <> coalesce(c.df, 0)`,
    [tenant],
  );
  const totals = await pool.query<{ kept: string | null; counted: string }>(
    `SELECT (SELECT n_rows || '/' || n_tokens FROM fts_totals WHERE tenant_id = $1) AS kept,
            count(*) || '/' || coalesce(sum(fts_len), 0) AS counted
     FROM revisions WHERE tenant_id = $1`,
    [tenant],
  );
  const t = totals.rows[0]!;
  return { terms: terms.rows, totals: (t.kept ?? '0/0') === t.counted ? null : t };
}

async function keptDf(pool: pg.Pool, tenant: string, lexeme: string): Promise<number> {
  const { rows } = await pool.query<{ df: number }>(
    'SELECT df FROM fts_terms WHERE tenant_id = $1 AND lexeme = $2',
    [tenant, lexeme],
  );
  return rows[0]?.df ?? 0;
}

describe('Postgres search counts and narrowing', { skip: skip ?? false }, () => {
  let db: ThrowawayDb;
  let pool: pg.Pool;
  /** The match ($2) of every candidate statement the stores ran, in order. */
  const matches: string[][] = [];
  let acme: PostgresStore;
  let beta: PostgresStore;
  let ea: Engine;
  let eb: Engine;

  before(async () => {
    db = await throwawayDb(['acme', 'beta']);
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    // The real pool, its statements recorded: which words the candidate statement matched.
    const query = pool.query.bind(pool) as (...a: unknown[]) => Promise<unknown>;
    (pool as unknown as { query: unknown }).query = (...a: unknown[]) => {
      const c = a[0] as { name?: string; values?: unknown[] };
      if (typeof c === 'object' && c.name?.startsWith('mneme_search_eligible'))
        matches.push(c.values![1] as string[]);
      return query(...a);
    };
    acme = PostgresStore.forTenant(pool, { tenant: 'acme' });
    beta = PostgresStore.forTenant(pool, { tenant: 'beta' });
    ea = engineFor(acme, PROJECT, clock);
    eb = engineFor(beta, PROJECT, clock);
  });

  after(async () => {
    await acme?.close();
    await beta?.close();
    await pool?.end();
    await db?.drop();
  });

  it('keeps each tenant’s document frequencies and totals equal to a count of its rows', async () => {
    const ops = Array.from({ length: 40 }, (_, i) => ({
      op: 'remember' as const,
      type: 'fact',
      abstract: `Deploy note ${i} about the release pipeline`,
      body: `We deploy the build ${i % 2 ? 'to staging' : 'to production'} with the pipeline`,
    }));
    await ea.apply(ops, HUMAN);
    await eb.apply(ops.slice(0, 10), HUMAN);
    assert.equal(await keptDf(pool, 'acme', 'pipelin'), 40, 'the counts are kept at commit');
    assert.equal(await keptDf(pool, 'beta', 'pipelin'), 10, 'per tenant');

    const [rare] = await ea.apply(
      [{ op: 'remember', type: 'fact', abstract: 'Quokka cache warms at noon', body: 'quokka' }],
      HUMAN,
    );
    assert.equal(await keptDf(pool, 'acme', 'quokka'), 1);
    assert.equal(await keptDf(pool, 'beta', 'quokka'), 0, 'another tenant’s word is not counted');
    const [first] = (await ea.recall('deploy note 3', { limit: 1, logUsage: false })).results;
    clock.advance(60_000);
    await ea.apply([{ op: 'supersede', id: first!.id, abstract: 'Deploy note, revised' }], HUMAN);
    const [second] = (await ea.recall('deploy note 5', { limit: 1, logUsage: false })).results;
    clock.advance(60_000);
    await ea.apply([{ op: 'retract', id: second!.id, reason: 'wrong' }], HUMAN);
    assert.deepEqual(await countDrift(pool, 'acme'), { terms: [], totals: null });

    // A purge rewrites the purged revisions' text: the rare word leaves the counts with it.
    clock.advance(60_000);
    await ea.purge({ id: rare!.id, reason: 'test purge' }, HUMAN);
    assert.equal(await keptDf(pool, 'acme', 'quokka'), 0, 'purged text is no longer counted');
    await acme.rebuild();
    for (const t of ['acme', 'beta'])
      assert.deepEqual(await countDrift(pool, t), { terms: [], totals: null }, t);
  });

  it('finds the same top-k with rare-term narrowing as without it, where a rare word decides', async () => {
    await eb.apply(
      [
        { abstract: 'Zephyr rollout for the release pipeline', body: 'deploy zephyr to staging' },
        { abstract: 'Zephyr pins the build cache', body: 'the zephyr build' },
        { abstract: 'Zephyr alerts', body: 'zephyr pages the on-call' },
        { abstract: 'Zephyr release notes and deploy pipeline', body: 'deploy pipeline zephyr' },
      ].map((m) => ({ op: 'remember' as const, type: 'fact', ...m })),
      HUMAN,
    );
    const terms = queryTerms('deploy pipeline zephyr');
    const eligibility = {
      scopes: eb.scopes,
      asOf: clock().toISOString(),
      knownAt: null,
      minTrust: 'untrusted' as const,
      includeQuarantined: false,
    };
    const search = async (model: ReturnType<typeof rankingModel>) => {
      matches.length = 0;
      const hits = await beta.search({ terms, eligibility, limit: 3, want: 3, model });
      return { hits, matched: [...matches] };
    };
    // Budgets of 5: "deploy" and "pipeline" (12 rows each) are left out, "zephyr" (4) kept.
    const narrowed = await search(rankingModel({ leftOut: 'bm25', narrowBudgets: [5, Infinity] }));
    const full = await search(rankingModel({ leftOut: 'bm25', narrowBudgets: [Infinity] }));
    assert.deepEqual(
      narrowed.matched,
      [['zephyr']],
      'the narrowed statement matched the rare word',
    );
    assert.deepEqual(full.matched, [['deploi', 'pipelin', 'zephyr']], 'the full one every word');
    assert.equal(full.hits.length, 3);
    assert.ok(
      full.hits.every((h) => /zephyr/i.test(h.view.abstract)),
      'the rare word decides',
    );
    assert.deepEqual(
      narrowed.hits.map((h) => [h.view.id, h.view.rev]),
      full.hits.map((h) => [h.view.id, h.view.rev]),
    );
    for (const [i, h] of narrowed.hits.entries())
      assert.ok(Math.abs(h.relevance - full.hits[i]!.relevance) < 1e-9, `relevance ${i}`);
  });
});
