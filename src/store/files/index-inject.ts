// Injection's candidates: the best-weighted injectable rows of each scope (or of each scope and
// type, or bound to one file), read in weight order through partial indexes and stopped at the
// LIMIT, so the cost follows the block's size, not the store's.
import type Database from 'better-sqlite3';
import { FAR_FUTURE } from '../../core/time.js';
import type { InjectQuery, SearchHit } from '../port.js';
import { hitColumns, sqlLimit, toHit, type HitRow } from './index-hits.js';
import { FILE_BOUND, INJECTABLE } from './index-schema.js';

export function injectCandidates(db: Database.Database, q: InjectQuery): SearchHit[] {
  if (q.scopes.length === 0) return [];
  const rows = sqlLimit(q.limit);
  const params: Record<string, unknown> = { now: q.now, far: FAR_FUTURE };
  const names = (name: string, values: readonly string[]) =>
    values.map((v, i) => {
      params[`${name}${i}`] = v;
      return `@${name}${i}`;
    });
  const where = [
    INJECTABLE,
    'valid_from <= @now AND COALESCE(valid_to, @far) > @now AND trust_rank >= 1',
    // Drifted or missing sources are withheld inside the query (their journaled freshness).
    "NOT EXISTS (SELECT 1 FROM fresh f WHERE f.id = rev.id AND f.state IN ('drifted', 'missing'))",
  ];
  if (q.excludeTypes && q.excludeTypes.length > 0)
    where.push(`type NOT IN (${names('x', q.excludeTypes).join(', ')})`);
  const ORDER = 'w DESC, trust_rank DESC, recorded_at DESC, id ASC';
  const branch = (index: string, conds: string[]) =>
    `SELECT * FROM (SELECT rowid AS rid, w, trust_rank, recorded_at, id FROM rev
     INDEXED BY ${index} WHERE ${[...conds, ...where].join(' AND ')}
     ORDER BY ${ORDER} LIMIT ${rows})`;
  // Each branch walks an index in weight order and stops at the LIMIT, so the cost follows
  // the block's size, not the store's; the union is merged in the same order.
  const scopes = names('s', q.scopes);
  const types = q.types && q.types.length > 0 ? names('t', q.types) : null;
  let branches: string[];
  if (q.sourcePath !== undefined) {
    // Pre-edit: memories bound to the file, and those that carry applies_to globs (of `types`).
    params.src = q.sourcePath;
    const byType = types ? ` AND type IN (${types.join(', ')})` : '';
    branches = scopes.map((s) =>
      branch('rev_inject_file', [
        `scope = ${s}`,
        FILE_BOUND, // the partial index's own term, so the planner may use the index
        `(source_path = @src OR (applies = 1${byType}))`,
      ]),
    );
  } else if (types) {
    branches = scopes.flatMap((s) =>
      types.map((t) => branch('rev_inject_type', [`scope = ${s}`, `type = ${t}`])),
    );
  } else branches = scopes.map((s) => branch('rev_inject', [`scope = ${s}`]));
  const picked = db
    .prepare(
      `SELECT ${hitColumns('r', '0')}
       FROM (${branches.join(' UNION ALL ')}) k
       JOIN rev r ON r.rowid = k.rid LEFT JOIN weight w ON w.id = r.id
       ORDER BY k.w DESC, k.trust_rank DESC, k.recorded_at DESC, k.id ASC LIMIT ${rows}`,
    )
    .raw(true)
    .all(params) as HitRow[];
  return picked.map(toHit);
}
