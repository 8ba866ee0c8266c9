// The index's caches of the usage and source logs: memory weights (copied into rev.w so
// injection reads rows in weight order) and journaled source freshness.
import type Database from 'better-sqlite3';
import type { JournalEntry } from '../../core/journal.js';
import { freshnessFrom } from '../derived.js';
import { immediate } from './index-schema.js';

/** Replaces the cached weights of every current memory in `scopes` with `weights`. */
export function setWeights(
  db: Database.Database,
  scopes: string[],
  weights: Map<string, number>,
): void {
  if (scopes.length === 0) return;
  const placeholders = scopes.map(() => '?').join(', ');
  immediate(db, () => {
    db.prepare(
      `DELETE FROM weight WHERE id IN (SELECT id FROM rev WHERE is_current = 1 AND scope IN (${placeholders}))`,
    ).run(...scopes);
    const ins = db.prepare('INSERT OR REPLACE INTO weight(id, w) VALUES (?, ?)');
    for (const [id, w] of weights) ins.run(id, w);
    // rev.w mirrors the weight table, so injection can read rows in weight order by index.
    db.prepare(
      `UPDATE rev SET w = COALESCE((SELECT w FROM weight WHERE weight.id = rev.id), 1)
         WHERE scope IN (${placeholders})`,
    ).run(...scopes);
  });
}

export function allWeights(db: Database.Database): Map<string, number> {
  const rows = db.prepare('SELECT id, w FROM weight').all() as { id: string; w: number }[];
  return new Map(rows.map((r) => [r.id, r.w]));
}

export function weightsOf(db: Database.Database, ids: string[]): Map<string, number> {
  const out = new Map<string, number>();
  if (ids.length === 0) return out;
  // By key: a pre-edit hook asks for a handful of ids, not for the whole table.
  const stmt = db.prepare<[string], { w: number }>('SELECT w FROM weight WHERE id = ?');
  for (const id of new Set(ids)) {
    const row = stmt.get(id);
    if (row) out.set(id, row.w);
  }
  return out;
}

/** Freshness the journal records: a source-bound write (fresh), a source check (its verdict). */
export function recordFreshness(db: Database.Database, entry: JournalEntry): void {
  for (const { id, record: r } of freshnessFrom(entry))
    db.prepare(
      `INSERT INTO fresh(id, rev, state, observed, at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET rev = excluded.rev, state = excluded.state,
         observed = excluded.observed, at = excluded.at`,
    ).run(id, r.rev, r.freshness, r.observed_sha, r.at);
}

export function freshnessOf(
  db: Database.Database,
  ids: string[],
): Map<string, { rev: number; freshness: string; observed_sha: string | null; at: string }> {
  const out = new Map<
    string,
    { rev: number; freshness: string; observed_sha: string | null; at: string }
  >();
  const stmt = db.prepare<
    [string],
    { rev: number; state: string; observed: string | null; at: string }
  >('SELECT rev, state, observed, at FROM fresh WHERE id = ?');
  for (const id of new Set(ids)) {
    const row = stmt.get(id);
    if (row)
      out.set(id, { rev: row.rev, freshness: row.state, observed_sha: row.observed, at: row.at });
  }
  return out;
}
