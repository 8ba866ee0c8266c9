// What the Postgres adapter derives from journal entries and the usage log, kept in rows so the
// reads that need it stay one statement: source_freshness (from source-bound writes and
// check_source entries) and weights (recomputed for a `sleep_pass` entry's scopes at its
// watermark). Both are applied inside the commit that journals the entry, and replayed from the
// whole journal by rebuild (store/derived.ts says how an entry is read, for both adapters).
import type pg from 'pg';
import type { JournalEntry } from '../../core/journal.js';
import { FAR_FUTURE } from '../../core/time.js';
import { computeWeights } from '../../core/weight.js';
import { freshnessFrom, weightPasses } from '../derived.js';
import type { FreshnessRecord, InjectQuery, SearchHit, UsageEvent } from '../port.js';
import { Params, VIEW_COLUMNS, toView, type ViewRow } from './sql.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

/** The freshness and weights one committed entry changes (inside its commit). */
export async function applyDerived(c: Queryable, t: string, entry: JournalEntry): Promise<void> {
  for (const { id, record } of freshnessFrom(entry)) await setFreshness(c, t, id, record);
  const passes = weightPasses([entry]);
  if (passes.size > 0) await recomputeWeights(c, t, passes);
}

/** Rebuild: freshness and weights replayed from the whole journal, in order. */
export async function replayDerived(c: Queryable, t: string): Promise<void> {
  await c.query('DELETE FROM source_freshness WHERE tenant_id = $1', [t]);
  await c.query('DELETE FROM weights WHERE tenant_id = $1', [t]);
  const { rows } = await c.query<{ entry: string }>(
    `SELECT entry FROM journal WHERE tenant_id = $1
       AND (op IN ('check_source', 'sleep_pass') OR entry LIKE '%"source_bound":true%')
     ORDER BY seq`,
    [t],
  );
  const entries: JournalEntry[] = [];
  for (const r of rows) {
    try {
      entries.push(JSON.parse(r.entry) as JournalEntry);
    } catch {
      /* an unreadable row is the chain check's finding, not this replay's */
    }
  }
  const latest = new Map<string, FreshnessRecord>();
  for (const e of entries) for (const f of freshnessFrom(e)) latest.set(f.id, f.record);
  for (const [id, rec] of latest) await setFreshness(c, t, id, rec);
  const passes = weightPasses(entries);
  if (passes.size > 0) await recomputeWeights(c, t, passes);
}

async function setFreshness(c: Queryable, t: string, id: string, r: FreshnessRecord) {
  await c.query(
    `INSERT INTO source_freshness(tenant_id, id, rev, state, observed, at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (tenant_id, id) DO UPDATE SET rev = EXCLUDED.rev, state = EXCLUDED.state,
       observed = EXCLUDED.observed, at = EXCLUDED.at`,
    [t, id, r.rev, r.freshness, r.observed_sha, r.at],
  );
}

/**
 * Replaces the weights of every current memory in each scope with core/weight.ts's weights of
 * its active memories at that scope's watermark (as the embedded index's setWeights).
 */
async function recomputeWeights(c: Queryable, t: string, passes: Map<string, string>) {
  const { rows: usageRows } = await c.query<{ doc: string }>(
    'SELECT doc FROM usage_events WHERE tenant_id = $1 ORDER BY at, seq',
    [t],
  );
  const usage = usageRows.map((r) => JSON.parse(r.doc) as UsageEvent);
  for (const [scope, at] of passes) {
    const { rows: subjects } = await c.query<{ id: string; recorded_at: string }>(
      `SELECT id, recorded_at FROM revisions
       WHERE tenant_id = $1 AND is_current AND scope = $2 AND status = 'active'`,
      [t, scope],
    );
    const weights = computeWeights(usage, subjects, at);
    await c.query(
      `DELETE FROM weights w USING revisions r
       WHERE w.tenant_id = $1 AND r.tenant_id = $1 AND r.id = w.id AND r.is_current
         AND r.scope = $2`,
      [t, scope],
    );
    if (weights.size > 0)
      await c.query(
        `INSERT INTO weights(tenant_id, id, w)
         SELECT $1, u.id, u.w FROM unnest($2::text[], $3::float8[]) AS u(id, w)
         ON CONFLICT (tenant_id, id) DO UPDATE SET w = EXCLUDED.w`,
        [t, [...weights.keys()], [...weights.values()]],
      );
  }
}

export async function weightsOf(
  c: Queryable,
  t: string,
  ids: string[],
): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const { rows } = await c.query<{ id: string; w: number }>(
    'SELECT id, w FROM weights WHERE tenant_id = $1 AND id = ANY($2::text[])',
    [t, [...new Set(ids)]],
  );
  return new Map(rows.map((r) => [r.id, r.w]));
}

export async function freshnessOf(
  c: Queryable,
  t: string,
  ids: string[],
): Promise<Map<string, FreshnessRecord>> {
  if (ids.length === 0) return new Map();
  const { rows } = await c.query<{
    id: string;
    rev: number;
    state: FreshnessRecord['freshness'];
    observed: string | null;
    at: string;
  }>(
    `SELECT id, rev, state, observed, at FROM source_freshness
     WHERE tenant_id = $1 AND id = ANY($2::text[])`,
    [t, [...new Set(ids)]],
  );
  return new Map(
    rows.map((r) => [r.id, { rev: r.rev, freshness: r.state, observed_sha: r.observed, at: r.at }]),
  );
}

/**
 * Injection's candidates in one statement, heaviest first (weight, trust, recency, id): the
 * same prefilter as the embedded index's (index-inject.ts), drifted or missing sources
 * withheld inside the query, stopped at the limit.
 */
export async function injectCandidates(
  c: Queryable,
  t: string,
  q: InjectQuery,
): Promise<SearchHit[]> {
  if (q.scopes.length === 0) return [];
  const p = new Params();
  const tenant = p.add(t);
  const now = p.add(q.now);
  const where = [
    `r.tenant_id = ${tenant}`,
    'r.is_current',
    "r.status = 'active'",
    'r.lineage_end_at IS NULL',
    'r.quarantine IS NULL',
    "r.review = 'none'",
    `r.scope = ANY(${p.add(q.scopes)}::text[])`,
    `r.valid_from <= ${now}`,
    `COALESCE(r.valid_to, ${p.add(FAR_FUTURE)}) > ${now}`,
    'r.trust_rank >= 1',
    `NOT EXISTS (SELECT 1 FROM source_freshness f WHERE f.tenant_id = r.tenant_id
       AND f.id = r.id AND f.state IN ('drifted', 'missing'))`,
  ];
  if (q.excludeTypes && q.excludeTypes.length > 0)
    where.push(`NOT (r.type = ANY(${p.add(q.excludeTypes)}::text[]))`);
  const types = q.types && q.types.length > 0 ? p.add(q.types) : null;
  if (q.sourcePath !== undefined) {
    // Pre-edit: memories bound to the file, and constraints/procedures carrying applies_to
    // globs (of `types`); the caller matches the globs.
    const doc = 'r.doc::jsonb';
    where.push(`((${doc}->'source'->>'path') = ${p.add(q.sourcePath)}
      OR (r.type IN ('constraint', 'procedure')
          AND jsonb_typeof(${doc}->'applies_to') = 'array'
          AND jsonb_array_length(${doc}->'applies_to') > 0
          ${types ? `AND r.type = ANY(${types}::text[])` : ''}))`);
  } else if (types) where.push(`r.type = ANY(${types}::text[])`);
  const limit = Math.max(1, Math.min(1_000_000, Math.trunc(q.limit) || 1));
  const { rows } = await c.query<ViewRow & { w: number | null }>(
    `SELECT ${VIEW_COLUMNS}, w.w FROM revisions r
     LEFT JOIN weights w ON w.tenant_id = r.tenant_id AND w.id = r.id
     WHERE ${where.join(' AND ')}
     ORDER BY COALESCE(w.w, 1) DESC, r.trust_rank DESC, r.recorded_at DESC, r.id ASC
     LIMIT ${limit}`,
    p.values,
  );
  return rows.map((row) => {
    const view = toView(row);
    return { head: view, view, relevance: 0, weight: row.w ?? 1 };
  });
}
