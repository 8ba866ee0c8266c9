// The Postgres adapter's reads, each one statement over one tenant's rows: lineages, the live
// memory of a slug, idempotency keys, ranked search and nearest (candidates and the counts the
// ranking model of core/ranking.ts reads, the eligibility predicate inside the query), current memories, the journal, tombstones,
// proposals, usage, and the counts `status` reports. Each takes the store's query function.
import type pg from 'pg';
import { EMPTY_HEAD, type JournalEntry } from '../../core/journal.js';
import type { Tombstone, TombstoneProbe } from '../../core/normalize.js';
import type { Proposal } from '../../core/proposal.js';
import type { Eligibility } from '../../core/eligibility.js';
import {
  DEFAULT_RANKING,
  bm25Idf,
  narrowingPlan,
  rankCandidates,
  type CorpusStats,
  type FieldCounts,
  type LexicalFeatures,
} from '../../core/ranking.js';
import { queryShape, termTokens, uniqueTerms, type QueryTerm } from '../../core/text.js';
import type { RevisionView } from '../../core/types.js';
import type {
  JournalQuery,
  ProposalQuery,
  SearchHit,
  SearchRequest,
  StoreStatus,
  UsageEvent,
} from '../port.js';
import {
  Params,
  VIEW_COLUMNS,
  eligibleSql,
  termQuery,
  toView,
  tsQuery,
  type ViewRow,
} from './sql.js';

/** A statement run by the store: in its write transaction when there is one, errors mapped. */
export type Query = <R extends pg.QueryResultRow>(
  text: string,
  values?: unknown[],
) => Promise<pg.QueryResult<R>>;

export async function getLineage(
  query: Query,
  tenant: string,
  id: string,
): Promise<RevisionView[] | null> {
  const { rows } = await query<ViewRow>(
    `SELECT ${VIEW_COLUMNS} FROM revisions r WHERE r.tenant_id = $1 AND r.id = $2 ORDER BY r.rev`,
    [tenant, id],
  );
  return rows.length === 0 ? null : rows.map(toView);
}

export async function findLiveBySlug(
  query: Query,
  tenant: string,
  scope: string,
  type: string,
  slug: string,
): Promise<RevisionView | null> {
  // Through the memories table's unique live-slug index: one row, whatever the store's size
  // and whether or not the planner has statistics.
  const { rows } = await query<ViewRow>(
    `SELECT ${VIEW_COLUMNS} FROM memories m
     JOIN revisions r ON r.tenant_id = m.tenant_id AND r.id = m.id AND r.rev = m.current_rev
     WHERE m.tenant_id = $1 AND m.scope = $2 AND m.type = $3 AND m.slug = $4
       AND m.status = 'active'`,
    [tenant, scope, type, slug],
  );
  return rows[0] ? toView(rows[0]) : null;
}

export async function findIdempotent(
  query: Query,
  tenant: string,
  key: string,
): Promise<JournalEntry | null> {
  const { rows } = await query<{ entry: string }>(
    'SELECT entry FROM journal WHERE tenant_id = $1 AND idem = $2 ORDER BY seq DESC LIMIT 1',
    [tenant, key],
  );
  return rows[0] ? (JSON.parse(rows[0].entry) as JournalEntry) : null;
}

export async function search(
  query: Query,
  tenant: string,
  req: SearchRequest,
): Promise<SearchHit[]> {
  const q = req.eligibility;
  if (q.scopes.length === 0) return [];
  const m = req.model ?? DEFAULT_RANKING;
  const { terms, tokens, phrase } = queryShape(req.terms);
  if (terms.length === 0) return [];
  const { stats, df } = await corpus(query, tenant, terms);
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
    const match = kept ? kept.map((i) => terms[i]!) : terms;
    const cands = await candidates(query, tenant, match, tokens, q.scopes, q);
    ranked = rankCandidates(cands, kept, idf, stats, m, req.limit);
    if (ranked.length >= want) break;
  }
  return withViews(query, tenant, ranked);
}

/** What BM25 reads of the tenant's rows: rows, tokens, and each term's document frequency. */
async function corpus(
  query: Query,
  tenant: string,
  terms: readonly QueryTerm[],
): Promise<{ stats: CorpusStats; df: number[] }> {
  const p = new Params();
  const t = p.add(tenant);
  const dfs = terms.map(
    (term) =>
      `(SELECT count(*) FROM revisions WHERE tenant_id = ${t} AND tsv @@ ${termQuery(term, p)})::int`,
  );
  const { rows } = await query<{ n: number; tokens: number; df: number[] }>(
    `SELECT c.n, c.tokens, ARRAY[${dfs.join(', ')}]::int[] AS df
     FROM (SELECT count(*)::int AS n, coalesce(sum(fts_len), 0)::float8 AS tokens
           FROM revisions WHERE tenant_id = ${t}) c`,
    p.values,
  );
  const r = rows[0]!;
  return { stats: { rows: r.n, tokens: Number(r.tokens) }, df: r.df };
}

type Candidate = { id: string; rev: number; weight: number; features: LexicalFeatures };
type Scored = Candidate & { score: number };

/**
 * Every row in the scopes matching any of `match` (eligible ones only, when `eligibility` is
 * given), with the counts BM25 reads: its length and, per term of `all`, its occurrences in
 * each field (from the tsvector's positions and weights: A abstract, C body, B extra).
 */
async function candidates(
  query: Query,
  tenant: string,
  match: readonly QueryTerm[],
  all: readonly string[][],
  scopes: string[],
  eligibility: Eligibility | null,
): Promise<Candidate[]> {
  const p = new Params();
  const t = p.add(tenant);
  const tq = tsQuery(match, p)!;
  const inScopes = p.add(scopes);
  const lexemes = p.add([...new Set(all.flat())]);
  const eligible = eligibility ? `AND ${eligibleSql(eligibility, p)}` : '';
  const { rows } = await query<{
    id: string;
    rev: number;
    len: number;
    w: number | null;
    f: [string, number[], string[]][] | null;
  }>(
    `SELECT r.id, r.rev, r.fts_len AS len, w.w,
       (SELECT json_agg(json_build_array(u.lexeme, u.positions, u.weights))
        FROM unnest(r.tsv) u WHERE u.lexeme = ANY(${lexemes}::text[])) AS f
     FROM revisions r LEFT JOIN weights w ON w.tenant_id = r.tenant_id AND w.id = r.id
     WHERE r.tenant_id = ${t} AND r.tsv @@ (${tq}) AND r.scope = ANY(${inScopes}::text[])
       ${eligible}`,
    p.values,
  );
  return rows.map((row) => {
    const at = new Map<string, { pos: number[]; field: number[] }>();
    for (const [lexeme, pos, weights] of row.f ?? [])
      at.set(lexeme, { pos, field: weights.map((x) => FIELD_OF_WEIGHT[x] ?? 1) });
    return {
      id: row.id,
      rev: row.rev,
      weight: row.w ?? 1,
      features: { length: row.len, tf: all.map((tok) => fieldCounts(tok, at)) },
    };
  });
}

/** setweight classes of the tsvector (migration 4): A abstract, B extra, C body. */
const FIELD_OF_WEIGHT: Record<string, number> = { A: 0, B: 2, C: 1, D: 1 };

/** A term's occurrences per field: a word's positions, or a phrase's runs within one field. */
function fieldCounts(
  tokens: readonly string[],
  at: Map<string, { pos: number[]; field: number[] }>,
): FieldCounts {
  const counts: [number, number, number] = [0, 0, 0];
  const first = at.get(tokens[0]!);
  if (!first) return counts;
  const rest = tokens.slice(1).map((tok) => at.get(tok));
  if (rest.some((x) => !x)) return counts;
  first.pos.forEach((p0, i) => {
    const field = first.field[i]!;
    const whole = rest.every((x, k) => {
      const j = x!.pos.indexOf(p0 + k + 1);
      return j >= 0 && x!.field[j] === field;
    });
    if (whole) counts[field as 0 | 1 | 2]++;
  });
  return counts;
}

/** The ranked candidates as hits: their revisions read in one statement, in rank order. */
async function withViews(query: Query, tenant: string, ranked: Scored[]): Promise<SearchHit[]> {
  if (ranked.length === 0) return [];
  const { rows } = await query<ViewRow & { id: string; rev: number }>(
    `SELECT ${VIEW_COLUMNS}, r.id, r.rev FROM revisions r
     JOIN unnest($2::text[], $3::int[]) AS k(id, rev) ON r.id = k.id AND r.rev = k.rev
     WHERE r.tenant_id = $1`,
    [tenant, ranked.map((c) => c.id), ranked.map((c) => c.rev)],
  );
  const views = new Map(rows.map((row) => [`${row.id}#${row.rev}`, toView(row)]));
  return ranked.flatMap((c) => {
    const view = views.get(`${c.id}#${c.rev}`);
    return view ? [{ head: view, view, relevance: c.score, weight: c.weight }] : [];
  });
}

export async function nearest(
  query: Query,
  tenant: string,
  terms: QueryTerm[],
  scopes: string[],
  limit: number,
): Promise<SearchHit[]> {
  if (scopes.length === 0) return [];
  const live = uniqueTerms(terms);
  if (live.length === 0) return [];
  const { stats, df } = await corpus(query, tenant, live);
  const idf = df.map((d) => bm25Idf(stats.rows, d));
  const cands = await candidates(query, tenant, live, live.map(termTokens), scopes, null);
  return withViews(query, tenant, rankCandidates(cands, null, idf, stats, DEFAULT_RANKING, limit));
}

export async function listCurrent(
  query: Query,
  tenant: string,
  scopes: string[],
  opts: { includeEnded?: boolean } = {},
): Promise<RevisionView[]> {
  if (scopes.length === 0) return [];
  const { rows } = await query<ViewRow>(
    `SELECT ${VIEW_COLUMNS} FROM revisions r
     WHERE r.tenant_id = $1 AND r.is_current AND r.scope = ANY($2::text[])
       ${opts.includeEnded ? '' : "AND r.status = 'active'"}
     ORDER BY r.id`,
    [tenant, scopes],
  );
  return rows.map(toView);
}

export async function journal(
  query: Query,
  tenant: string,
  q: JournalQuery,
): Promise<JournalEntry[]> {
  const p = new Params();
  const where = [`tenant_id = ${p.add(tenant)}`];
  if (q.afterSeq !== undefined) where.push(`seq > ${p.add(q.afterSeq)}`);
  if (q.id) where.push(`target_id = ${p.add(q.id)}`);
  if (q.actorKind) where.push(`actor_kind = ${p.add(q.actorKind)}`);
  if (q.op) where.push(`op = ${p.add(q.op)}`);
  const limit = q.limit !== undefined ? `LIMIT ${p.add(q.limit)}` : '';
  const { rows } = await query<{ entry: string }>(
    `SELECT entry FROM journal WHERE ${where.join(' AND ')}
     ORDER BY seq ${q.reverse ? 'DESC' : 'ASC'} ${limit}`,
    p.values,
  );
  return rows.map((r) => JSON.parse(r.entry) as JournalEntry);
}

export async function tombstones(
  query: Query,
  tenant: string,
  scopes: string[],
): Promise<Tombstone[]> {
  if (scopes.length === 0) return [];
  const { rows } = await query<{ event: string; doc: string }>(
    `SELECT DISTINCT ON (scope, key) event, doc FROM tombstone_events
     WHERE tenant_id = $1 AND scope = ANY($2::text[])
     ORDER BY scope, key, seq DESC`,
    [tenant, scopes],
  );
  return rows.filter((r) => r.event === 'arm').map((r) => JSON.parse(r.doc) as Tombstone);
}

/** The armed tombstones of `scope` the probe finds (by key, or by gram in tombstone_grams). */
export async function tombstoneCandidates(
  query: Query,
  tenant: string,
  scope: string,
  probe: TombstoneProbe,
): Promise<Tombstone[]> {
  // Index lookups only, one per gram and one per key found (LATERAL, collation "C" as the
  // columns have it, so the planner cannot turn either into a scan of the tenant's tombstones):
  // the latest event of each key, in the order `tombstones` lists them.
  const { rows } = await query<{ event: string; doc: string }>(
    `WITH k AS (
       SELECT g.key FROM unnest($3::text[]) AS q(gram), LATERAL (
         SELECT key FROM tombstone_grams
         WHERE tenant_id = $1 AND scope = $2 AND gram = q.gram COLLATE "C") g
       UNION
       SELECT unnest($4::text[]) COLLATE "C"
     )
     SELECT e.event, e.doc FROM k, LATERAL (
       SELECT event, doc FROM tombstone_events
       WHERE tenant_id = $1 AND scope = $2 AND key = k.key
       ORDER BY seq DESC LIMIT 1) e
     ORDER BY k.key COLLATE "C"`,
    [tenant, scope, probe.grams, probe.keys],
  );
  return rows.filter((r) => r.event === 'arm').map((r) => JSON.parse(r.doc) as Tombstone);
}

export async function proposals(
  query: Query,
  tenant: string,
  q: ProposalQuery,
): Promise<Proposal[]> {
  const p = new Params();
  const where = [`tenant_id = ${p.add(tenant)}`];
  if (q.state) where.push(`state = ${p.add(q.state)}`);
  if (q.scopes) where.push(`scope = ANY(${p.add(q.scopes)}::text[])`);
  if (q.id) where.push(`id = ${p.add(q.id)}`);
  const { rows } = await query<{ doc: string }>(
    `SELECT doc FROM proposals WHERE ${where.join(' AND ')} ORDER BY created_at, id`,
    p.values,
  );
  return rows.map((r) => JSON.parse(r.doc) as Proposal);
}

export async function usage(
  query: Query,
  tenant: string,
  opts: { since?: string } = {},
): Promise<UsageEvent[]> {
  const { rows } = await query<{ doc: string }>(
    `SELECT doc FROM usage_events WHERE tenant_id = $1 AND ($2::text IS NULL OR at > $2)
     ORDER BY at, seq`,
    [tenant, opts.since ?? null],
  );
  return rows.map((r) => JSON.parse(r.doc) as UsageEvent);
}

export async function appendUsage(
  query: Query,
  tenant: string,
  events: UsageEvent[],
): Promise<void> {
  if (events.length === 0) return;
  await query(
    `INSERT INTO usage_events(tenant_id, at, kind, doc)
     SELECT $1, u.at, u.kind, u.doc FROM unnest($2::text[], $3::text[], $4::text[])
       WITH ORDINALITY AS u(at, kind, doc, n) ORDER BY u.n`,
    [
      tenant,
      events.map((e) => e.at),
      events.map((e) => e.kind),
      events.map((e) => JSON.stringify(e)),
    ],
  );
}

export async function count(
  query: Query,
  tenant: string,
  table: 'journal' | 'usage_events',
): Promise<number> {
  const { rows } = await query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1`,
    [tenant],
  );
  return rows[0]?.n ?? 0;
}

export async function status(
  query: Query,
  tenant: string,
  location: string,
  scopes?: string[],
): Promise<StoreStatus> {
  // $2 is the scopes counted, or NULL for the whole tenant.
  const t = [tenant, scopes ?? null];
  const inScopes = '($2::text[] IS NULL OR scope = ANY($2::text[]))';
  const { rows } = await query<{ memories: number; active: number; revisions: number }>(
    `SELECT
       (SELECT count(*)::int FROM memories WHERE tenant_id = $1 AND ${inScopes}) AS memories,
       (SELECT count(*)::int FROM memories
         WHERE tenant_id = $1 AND status = 'active' AND ${inScopes}) AS active,
       (SELECT count(*)::int FROM revisions WHERE tenant_id = $1 AND ${inScopes}) AS revisions`,
    t,
  );
  const group = async (col: 'scope' | 'type') => {
    const r = await query<{ k: string; n: number }>(
      `SELECT ${col} AS k, count(*)::int AS n FROM memories
       WHERE tenant_id = $1 AND status = 'active' AND ${inScopes} GROUP BY ${col}`,
      t,
    );
    return Object.fromEntries(r.rows.map((x) => [x.k, x.n]));
  };
  const head = await query<{ seq: string; hash: string }>(
    'SELECT seq, hash FROM journal_head WHERE tenant_id = $1',
    [tenant],
  );
  const h = head.rows[0];
  return {
    backend: 'postgres',
    location: `${location} (tenant ${tenant})`,
    memories: rows[0]?.memories ?? 0,
    activeMemories: rows[0]?.active ?? 0,
    revisions: rows[0]?.revisions ?? 0,
    journalHead: h ? { seq: Number(h.seq), hash: h.hash } : EMPTY_HEAD,
    byScope: await group('scope'),
    byType: await group('type'),
  };
}
