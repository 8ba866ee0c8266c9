// Ranked search and nearest on Postgres: the counts BM25 reads (rows, tokens, each term's
// document frequency, kept by migration 9's triggers rather than counted), the rare-term
// narrowing of core/ranking.ts (the embedded index's exactly), candidates from the query terms'
// postings (migration 13; BM25 in SQL choosing the few shipped) or, for a query with a phrase,
// from the tenant's GIN index, with the scope and eligibility predicates inside the statement,
// and their ranking by core/ranking.ts. Every statement has one text whatever the query (terms travel as arrays),
// so each is prepared once per connection.
import type { Eligibility } from '../../core/eligibility.js';
import {
  BM25_B,
  BM25_K1,
  DEFAULT_RANKING,
  bm25Idf,
  countTokens,
  narrowCut,
  narrowingPlan,
  termsThatWeigh,
  rankCandidates,
  type CorpusStats,
  type FieldCounts,
  type LexicalFeatures,
  type RankingModel,
} from '../../core/ranking.js';
import { queryShape, termTokens, uniqueTerms, type QueryTerm } from '../../core/text.js';
import type { SearchHit, SearchRequest } from '../port.js';
import type { Query } from './reads.js';
import {
  HEAD_COLUMNS,
  Params,
  VIEW_COLUMNS,
  ViewHit,
  eligibleSql,
  type HeadRow,
  type ViewRow,
} from './sql.js';

/**
 * Where a search's candidates come from: `postings` (a query of words: its terms' postings,
 * ranked in SQL) or `gin` (the GIN index and the token texts: a query with a phrase always,
 * and the reference the postings are tested against).
 */
export type CandidatePath = 'postings' | 'gin';

export async function search(
  query: Query,
  tenant: string,
  req: SearchRequest,
  via: CandidatePath = 'postings',
): Promise<SearchHit[]> {
  const q = req.eligibility;
  if (q.scopes.length === 0) return [];
  const m = req.model ?? DEFAULT_RANKING;
  const shape = queryShape(req.terms);
  if (shape.terms.length === 0) return [];
  let { tokens, phrase } = shape;
  const counted = await corpus(query, tenant, tokens);
  const stats = counted.stats;
  let df = counted.df;
  if (req.maxTerms !== undefined) {
    // Phrases count as rare here as on the embedded index: their rows do not decide.
    const keep = termsThatWeigh(df, phrase, stats.rows, req.maxTerms, req.feedback);
    if (keep) {
      if (keep.length === 0) return [];
      [tokens, phrase, df] = [
        keep.map((i) => tokens[i]!),
        keep.map((i) => phrase[i]!),
        keep.map((i) => df[i]!),
      ];
    }
  }
  const idf = df.map((d) => bm25Idf(stats.rows, d));
  const want = req.want ?? req.limit;
  // The embedded index's narrowing exactly: phrases count as rare there (never left out).
  const plan = narrowingPlan(
    df.map((d, i) => (phrase[i] ? 0 : d)),
    phrase,
    want,
    m,
    stats.rows,
  );
  // A query of words reads postings (ranked in SQL, the best few shipped); one with a phrase
  // matches through the GIN index and counts in the token texts.
  const words = via === 'postings' && !phrase.some(Boolean);
  let ranked: Scored[] = [];
  for (const kept of plan) {
    const cands = words
      ? await postingsCandidates(query, tenant, tokens, kept, idf, stats, m, req.limit, q)
      : await candidates(
          query,
          tenant,
          kept ? kept.map((i) => tokens[i]!) : tokens,
          tokens,
          q.scopes,
          q,
        );
    ranked = rankCandidates(cands, kept, idf, stats, m, req.limit);
    if (ranked.length >= want) break;
  }
  return withViews(query, tenant, ranked);
}

export async function nearest(
  query: Query,
  tenant: string,
  terms: QueryTerm[],
  scopes: string[],
  limit: number,
): Promise<SearchHit[]> {
  if (scopes.length === 0) return [];
  const live = uniqueTerms(terms).map(termTokens);
  if (live.length === 0) return [];
  const { stats, df } = await corpus(query, tenant, live);
  const idf = df.map((d) => bm25Idf(stats.rows, d));
  const cands = await candidates(query, tenant, live, live, scopes, null);
  return withViews(query, tenant, rankCandidates(cands, null, idf, stats, DEFAULT_RANKING, limit));
}

/**
 * What BM25 reads of the tenant's rows (every revision, as the embedded index counts them):
 * rows, tokens, and each term's document frequency — a word's from fts_terms, a phrase's (or a
 * token the text search parser would split) counted through the index.
 */
export const CORPUS = `SELECT coalesce(c.n_rows, 0)::int AS n, coalesce(c.n_tokens, 0)::float8 AS tokens,
  ARRAY(SELECT CASE WHEN numnode(x.q) = 1
      THEN coalesce((SELECT f.df FROM fts_terms f WHERE f.tenant_id = $1
                     AND f.lexeme = (tsvector_to_array(to_tsvector('simple', x.t)))[1]), 0)
      ELSE (SELECT count(*)::int FROM revisions r WHERE r.tenant_id = $1 AND r.tsv @@ x.q) END
    FROM (SELECT u.t, u.i, phraseto_tsquery('simple', u.t) AS q
          FROM unnest($2::text[]) WITH ORDINALITY AS u(t, i)) x
    ORDER BY x.i) AS df
FROM (SELECT 1) one LEFT JOIN fts_totals c ON c.tenant_id = $1`;

async function corpus(
  query: Query,
  tenant: string,
  terms: readonly string[][],
): Promise<{ stats: CorpusStats; df: number[] }> {
  const { rows } = await query<{ n: number; tokens: number; df: number[] }>(
    CORPUS,
    [tenant, terms.map((t) => t.join(' '))],
    'mneme_search_corpus',
  );
  const r = rows[0]!;
  return { stats: { rows: r.n, tokens: Number(r.tokens) }, df: r.df };
}

type Candidate = { id: string; rev: number; weight: number; features: LexicalFeatures };
type Scored = Candidate & { score: number };

/** The candidate statement's text, with or without the eligibility predicate. */
const CANDIDATES = new Map<boolean, string>();

export function candidatesSql(eligible: boolean): string {
  let text = CANDIDATES.get(eligible);
  if (text === undefined) {
    // $1 tenant, $2 the match (one phrase per term), $3 scopes; then the eligibility's
    // (placeholders only: the text is the same for every eligibility).
    const p = new Params();
    ['tenant', 'match', 'scopes'].forEach((x) => p.add(x));
    const predicate = eligible
      ? `AND ${eligibleSql({ scopes: [], asOf: '', knownAt: null, minTrust: 'untrusted', includeQuarantined: false }, p)}`
      : '';
    // The token texts, not the tsvector's positions: counting in them is what the embedded
    // index does (and unnesting every candidate's tsvector in SQL cost ten times the scan).
    text = `SELECT r.id, r.rev, r.fts_len AS len, w.w, r.fts_abstract AS a, r.fts_body AS b,
       r.fts_extra AS e
     FROM revisions r LEFT JOIN weights w ON w.tenant_id = r.tenant_id AND w.id = r.id
     WHERE r.tenant_id = $1
       AND r.tsv @@ (SELECT mneme_tsquery_or(phraseto_tsquery('simple', x)) FROM unnest($2::text[]) x)
       AND r.scope = ANY($3::text[]) ${predicate}`;
    CANDIDATES.set(eligible, text);
  }
  return text;
}

/**
 * Every row in the scopes matching any of `match` (eligible ones only, when `eligibility` is
 * given), with the counts BM25 reads: its length and, per term of `all`, its occurrences in
 * each field's index tokens (abstract, body, extra).
 */
async function candidates(
  query: Query,
  tenant: string,
  match: readonly string[][],
  all: readonly string[][],
  scopes: string[],
  eligibility: Eligibility | null,
): Promise<Candidate[]> {
  const p = new Params();
  p.add(tenant);
  p.add(match.map((t) => t.join(' ')));
  p.add(scopes);
  if (eligibility) eligibleSql(eligibility, p);
  const { rows } = await query<{
    id: string;
    rev: number;
    len: number;
    w: number | null;
    a: string;
    b: string;
    e: string;
  }>(
    candidatesSql(eligibility !== null),
    p.values,
    eligibility ? 'mneme_search_eligible' : 'mneme_search_nearest',
  );
  return rows.map((row) => ({
    id: row.id,
    rev: row.rev,
    weight: row.w ?? 1,
    features: { length: row.len, tf: all.map((tok) => fieldCounts(row, tok)) },
  }));
}

/** A term's occurrences in a row's token texts (abstract, body, extra), as core counts them. */
const fieldCounts = (
  row: { a: string; b: string; e: string },
  tok: readonly string[],
): FieldCounts => [countTokens(row.a, tok), countTokens(row.b, tok), countTokens(row.e, tok)];

/**
 * The postings a ranked statement keeps for its eligibility probes, in cuts: enough that a
 * store where most matches are eligible needs one statement, few enough that it sorts only the
 * best few hundred of a common word's thousands.
 */
const POOL_FACTOR = 4;

/**
 * The most terms a postings statement scans one by one (two full outer joined by revision); a
 * query of more groups all its postings by revision instead (a chain of three joins, with the
 * planner's misestimates, cost more than the grouping).
 */
const MAX_JOINED = 2;

/** The postings statement's texts, by the candidate query's number of terms (see postingsSql). */
const POSTINGS_SQL = new Map<number, string>();

/** The statement's name for a candidate query of `terms` terms (one name per text). */
export const postingsName = (terms: number): string =>
  terms <= MAX_JOINED
    ? `mneme_search_eligible_postings_${terms}`
    : 'mneme_search_eligible_postings';

/**
 * The postings statement for a candidate query of `terms` terms: one text for each count up to
 * MAX_JOINED, one for every count beyond (terms and parameters travel as values).
 */
export function postingsSql(terms: number): string {
  const k = terms <= MAX_JOINED ? terms : 0;
  let text = POSTINGS_SQL.get(k);
  if (text === undefined) {
    const p = new Params();
    const [tenant, match, idf, weights, bm25, scopes, n, pool] = [
      'tenant',
      'match',
      'idf',
      'weights',
      'bm25',
      'scopes',
      'n',
      'pool',
    ].map((x) => p.add(x));
    const bm = `(${bm25}::float8[])`;
    const w = `(${weights}::float8[])`;
    const predicate = eligibleSql(
      { scopes: [], asOf: '', knownAt: null, minTrust: 'untrusted', includeQuarantined: false },
      p,
    );
    // s: every posting of the matched terms scored by BM25 over them (core/ranking.ts bm25Term
    // in its order of operations; bm is [k1 + 1, k1, 1 − b, b, average length]; a revision's
    // terms summed in the query's order, as there), best first, the best `pool` of them (null:
    // all; a top-N sort, not a sort of every match). Up to MAX_JOINED terms, each term's
    // postings are one index scan and two scans are full outer joined by revision (hashing
    // one side); beyond, all postings are grouped by revision, which builds a group per
    // matching revision (up to twice the join's time for two common words). Materialized, so
    // the eligibility below runs on its rows in that order and stops at the n-th eligible one
    // (the LIMIT 1 keeps the probe a nested loop by primary key). `pooled`: how many s held (a
    // pool that was full and yielded fewer than n is run again unbounded).
    // Then, for those n only, the token texts the eligibility probe read with the row, in which
    // core counts every term (left-out ones included) as the GIN path does: a posting probe
    // per shipped row and term cost more than the counting (and no more rows are shipped).
    const score = (idfOf: string) =>
      `${idfOf} * ((f.x * ${bm}[1]) / (f.x + ${bm}[2] * (${bm}[3] + (${bm}[4] * p.len) / ${bm}[5])))`;
    const x = `CROSS JOIN LATERAL (SELECT p.ta * ${w}[1] + p.tb * ${w}[2] + p.te * ${w}[3] AS x) f`;
    // The postings of the candidate query's i-th term (from 1), scored: one index scan.
    const scan = (
      i: number,
    ) => `(SELECT p.id, p.rev, p.len, ${score(`(${idf}::float8[])[${i}]`)} AS s
    FROM postings p ${x}
    WHERE p.tenant_id = ${tenant} AND p.lexeme = (${match}::text[])[${i}]) t${i}`;
    const scored =
      k === 1
        ? `SELECT t1.id, t1.rev, t1.len, t1.s AS score FROM ${scan(1)}`
        : k === 2
          ? `SELECT id, rev, coalesce(t1.len, t2.len) AS len,
    coalesce(t1.s, 0::float8) + coalesce(t2.s, 0::float8) AS score
  FROM ${scan(1)}
  FULL JOIN ${scan(2)} USING (id, rev)`
          : `SELECT p.id, p.rev, p.len, sum(${score('q.idf')}) AS score
  FROM unnest(${match}::text[], ${idf}::float8[]) AS q(lexeme, idf)
  JOIN postings p ON p.tenant_id = ${tenant} AND p.lexeme = q.lexeme
  ${x}
  GROUP BY p.id, p.rev, p.len`;
    text = `WITH s AS MATERIALIZED (
  SELECT j.id, j.rev, j.len, j.score FROM (${scored}) j
  ORDER BY j.score DESC, j.id, j.rev
  LIMIT ${pool}::int)
SELECT e.id, e.rev, e.len, w.w, (SELECT count(*) FROM s)::int AS pooled, e.a, e.b, e.e
FROM (SELECT s.id, s.rev, s.len, ok.a, ok.b, ok.e FROM s
      CROSS JOIN LATERAL (SELECT r.fts_abstract AS a, r.fts_body AS b, r.fts_extra AS e
        FROM revisions r
        WHERE r.tenant_id = ${tenant} AND r.id = s.id AND r.rev = s.rev
          AND r.scope = ANY(${scopes}::text[]) AND ${predicate} LIMIT 1) ok
      LIMIT ${n}::int) e
LEFT JOIN weights w ON w.tenant_id = ${tenant} AND w.id = e.id`;
    POSTINGS_SQL.set(k, text);
  }
  return text;
}

/**
 * The best eligible candidates of a query of words, from its terms' postings: scored in SQL by
 * BM25 over the candidate query's terms (`kept`, or all), the first narrowCut of them shipped
 * with their token texts, every term counted in them as on the other path, for rankCandidates
 * to rank exactly as there (the SQL score only chooses which few to ship; the cut has room
 * beyond the limit for rounding).
 */
async function postingsCandidates(
  query: Query,
  tenant: string,
  tokens: readonly string[][],
  kept: readonly number[] | null,
  idf: readonly number[],
  stats: CorpusStats,
  m: RankingModel,
  limit: number,
  eligibility: Eligibility,
): Promise<Candidate[]> {
  const which = kept ?? tokens.map((_, i) => i);
  const avg = stats.tokens / Math.max(1, stats.rows);
  const p = new Params();
  p.add(tenant);
  p.add(which.map((i) => tokens[i]![0]!));
  p.add(which.map((i) => idf[i]!));
  p.add([m.abstractWeight, m.bodyWeight, m.extraWeight]);
  p.add([BM25_K1 + 1, BM25_K1, 1 - BM25_B, BM25_B, avg]);
  p.add(eligibility.scopes);
  const n = narrowCut(limit, m);
  p.add(n);
  const pool = p.add(n * POOL_FACTOR);
  eligibleSql(eligibility, p);
  type Row = {
    id: string;
    rev: number;
    len: number;
    w: number | null;
    pooled: number;
    a: string;
    b: string;
    e: string;
  };
  const run = () =>
    query<Row>(
      postingsSql(which.length),
      p.values,
      // One name per text (a prepared statement's name is bound to its text).
      postingsName(which.length),
    );
  let { rows } = await run();
  // Fewer eligible than the cut among a full pool: the eligible best may lie beyond it.
  if (rows.length < n && (rows.length === 0 || rows[0]!.pooled === n * POOL_FACTOR)) {
    p.values[Number(pool.slice(1)) - 1] = null;
    ({ rows } = await run());
  }
  return rows.map((row) => ({
    id: row.id,
    rev: row.rev,
    weight: row.w ?? 1,
    features: { length: row.len, tf: tokens.map((tok) => fieldCounts(row, tok)) },
  }));
}

/**
 * The ranked candidates as hits: their revisions read in one statement, in rank order; each
 * document is parsed only if its view is read (ranking reads the head columns).
 */
async function withViews(query: Query, tenant: string, ranked: Scored[]): Promise<SearchHit[]> {
  if (ranked.length === 0) return [];
  const { rows } = await query<ViewRow & HeadRow>(
    `SELECT ${VIEW_COLUMNS}, ${HEAD_COLUMNS} FROM revisions r
     JOIN unnest($2::text[], $3::int[]) AS k(id, rev) ON r.id = k.id AND r.rev = k.rev
     WHERE r.tenant_id = $1`,
    [tenant, ranked.map((c) => c.id), ranked.map((c) => c.rev)],
    'mneme_search_views',
  );
  const byKey = new Map(rows.map((row) => [`${row.id}#${row.rev}`, row]));
  return ranked.flatMap((c) => {
    const row = byKey.get(`${c.id}#${c.rev}`);
    return row ? [new ViewHit(row, c.score, c.weight)] : [];
  });
}
