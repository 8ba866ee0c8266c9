// Ranked search and nearest on Postgres: the counts BM25 reads (rows, tokens, each term's
// document frequency, kept by migration 9's triggers rather than counted), the rare-term
// narrowing of core/ranking.ts (the embedded index's exactly), candidates from the tenant's
// GIN index with the scope and eligibility predicates inside the statement, and their ranking
// by core/ranking.ts. Every statement has one text whatever the query (terms travel as arrays),
// so each is prepared once per connection.
import type { Eligibility } from '../../core/eligibility.js';
import {
  DEFAULT_RANKING,
  bm25Idf,
  countTokens,
  narrowingPlan,
  termsThatWeigh,
  rankCandidates,
  type CorpusStats,
  type FieldCounts,
  type LexicalFeatures,
} from '../../core/ranking.js';
import { queryShape, termTokens, uniqueTerms, type QueryTerm } from '../../core/text.js';
import type { SearchHit, SearchRequest } from '../port.js';
import type { Query } from './reads.js';
import { Params, VIEW_COLUMNS, eligibleSql, toView, type ViewRow } from './sql.js';

export async function search(
  query: Query,
  tenant: string,
  req: SearchRequest,
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
    const keep = termsThatWeigh(df, phrase, stats.rows, req.maxTerms);
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
  let ranked: Scored[] = [];
  for (const kept of plan) {
    const match = kept ? kept.map((i) => tokens[i]!) : tokens;
    const cands = await candidates(query, tenant, match, tokens, q.scopes, q);
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
    features: {
      length: row.len,
      tf: all.map((tok): FieldCounts => [
        countTokens(row.a, tok),
        countTokens(row.b, tok),
        countTokens(row.e, tok),
      ]),
    },
  }));
}

/** The ranked candidates as hits: their revisions read in one statement, in rank order. */
async function withViews(query: Query, tenant: string, ranked: Scored[]): Promise<SearchHit[]> {
  if (ranked.length === 0) return [];
  const { rows } = await query<ViewRow & { id: string; rev: number }>(
    `SELECT ${VIEW_COLUMNS}, r.id, r.rev FROM revisions r
     JOIN unnest($2::text[], $3::int[]) AS k(id, rev) ON r.id = k.id AND r.rev = k.rev
     WHERE r.tenant_id = $1`,
    [tenant, ranked.map((c) => c.id), ranked.map((c) => c.rev)],
    'mneme_search_views',
  );
  const views = new Map(rows.map((row) => [`${row.id}#${row.rev}`, toView(row)]));
  return ranked.flatMap((c) => {
    const view = views.get(`${c.id}#${c.rev}`);
    return view ? [{ head: view, view, relevance: c.score, weight: c.weight }] : [];
  });
}
