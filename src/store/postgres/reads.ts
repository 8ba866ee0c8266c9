// The Postgres adapter's reads, each one statement over one tenant's rows: lineages, the live
// memory of a slug, idempotency keys, ranked search and nearest (search-rows.ts), current
// memories, the journal, tombstones,
// proposals, usage, and the counts `status` reports. Each takes the store's query function.
import type pg from 'pg';
import { EMPTY_HEAD, type JournalEntry } from '../../core/journal.js';
import type { Tombstone } from '../../core/normalize.js';
import type { Proposal } from '../../core/proposal.js';
import type { RevisionView } from '../../core/types.js';
import type { JournalQuery, ProposalQuery, StoreStatus, UsageEvent } from '../port.js';
import { Params, VIEW_COLUMNS, toView, type ViewRow } from './sql.js';

/**
 * A statement run by the store: in its write transaction when there is one, errors mapped.
 * `name`: a prepared statement of that name (parsed and planned once per connection; one text).
 */
export type Query = <R extends pg.QueryResultRow>(
  text: string,
  values?: unknown[],
  name?: string,
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

export { nearest, search } from './search-rows.js';

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
    'mneme_tombstones',
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
    'mneme_usage_append',
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
