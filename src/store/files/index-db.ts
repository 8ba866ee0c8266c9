// The SQLite index: a rebuildable cache of every revision (one row each, with the lifecycle
// facts derived from its lineage) and an FTS5 table over them. A write replaces only the rows
// of the lineage it touched (invariant 11); the eligibility predicate runs inside the query.
// IndexDb is the facade the store uses: rows, meta and idempotency keys are here; the schema is
// index-schema.ts, ranked search index-search.ts, injection index-inject.ts, weights and
// freshness index-weights.ts.
import type Database from 'better-sqlite3';
import type { JournalEntry } from '../../core/journal.js';
import { indexText, type QueryTerm } from '../../core/text.js';
import { trustRank, type RevisionView } from '../../core/types.js';
import type { InjectQuery, SearchHit, SearchRequest } from '../port.js';
import { injectCandidates } from './index-inject.js';
import { SCHEMA_VERSION, immediate, openIndexDatabase } from './index-schema.js';
import { IndexSearch } from './index-search.js';
import {
  allWeights,
  freshnessOf,
  recordFreshness,
  setWeights,
  weightsOf,
} from './index-weights.js';
import { INDEX_BUSY_TIMEOUT_MS } from './sqlite.js';

export class IndexDb {
  readonly db: Database.Database;
  private readonly searcher: IndexSearch;
  private readonly stmts;

  /**
   * `busyTimeoutMs` bounds every wait for SQLite's own lock (see openIndexDatabase: the write
   * lock is taken at open only when the schema is missing or older).
   */
  constructor(file: string, busyTimeoutMs: number = INDEX_BUSY_TIMEOUT_MS) {
    this.db = openIndexDatabase(file, busyTimeoutMs);
    this.searcher = new IndexSearch(this.db);
    this.stmts = {
      getMeta: this.db.prepare<[string], { v: string }>('SELECT v FROM meta WHERE k = ?'),
      setMeta: this.db.prepare(
        'INSERT INTO meta(k, v) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v',
      ),
      rowids: this.db.prepare<[string], { rowid: number }>('SELECT rowid FROM rev WHERE id = ?'),
      delRev: this.db.prepare('DELETE FROM rev WHERE id = ?'),
      delFts: this.db.prepare('DELETE FROM fts WHERE rowid = ?'),
      insRev: this.db
        .prepare(`INSERT INTO rev(id, rev, scope, type, slug, status, trust_rank, quarantine,
        review, valid_from, valid_to, valid_to_eff, recorded_at, retired_at, retire_kind, lineage_end_at,
        is_current, doc, source_path, applies, w) VALUES (@id, @rev, @scope, @type, @slug, @status,
        @trust_rank, @quarantine, @review, @valid_from, @valid_to, @valid_to_eff, @recorded_at,
        @retired_at, @retire_kind, @lineage_end_at, @is_current, @doc, @source_path, @applies,
        COALESCE((SELECT w FROM weight WHERE id = @id), 1))`),
      insFts: this.db.prepare('INSERT INTO fts(rowid, abstract, body, extra) VALUES (?, ?, ?, ?)'),
      lineage: this.db.prepare<[string], { doc: string }>(
        'SELECT doc FROM rev WHERE id = ? ORDER BY rev',
      ),
      live: this.db.prepare<[string, string, string], { doc: string }>(
        "SELECT doc FROM rev WHERE scope = ? AND type = ? AND slug = ? AND is_current = 1 AND status = 'active'",
      ),
      idemGet: this.db.prepare<[string], { entry: string }>('SELECT entry FROM idem WHERE key = ?'),
      idemPut: this.db.prepare('INSERT OR REPLACE INTO idem(key, entry) VALUES (?, ?)'),
    };
  }

  getMeta(k: string): string | null {
    return this.stmts.getMeta.get(k)?.v ?? null;
  }
  setMeta(k: string, v: string): void {
    this.stmts.setMeta.run(k, v);
  }
  get journalSeq(): number {
    return Number(this.getMeta('journal_seq') ?? '0');
  }
  /**
   * The last entry whose index rows were written inside a group commit not yet finished (its
   * files still to be written after the sync): past `journalSeq`, recovery has work to do.
   */
  get stagedSeq(): number {
    return Number(this.getMeta('staged_seq') ?? '0');
  }
  get schemaOk(): boolean {
    return this.getMeta('schema') === SCHEMA_VERSION;
  }
  /**
   * A write transaction, begun IMMEDIATE (index-schema.ts says why); past the busy timeout the
   * caller gets a `locked` error.
   */
  transaction<T>(fn: () => T): T {
    return immediate(this.db, fn);
  }

  /** Replaces the rows of one lineage: the only rows a write touches. */
  replaceLineage(views: readonly RevisionView[]): void {
    this.searcher.touched();
    const id = views[0]?.id;
    if (!id) return;
    for (const { rowid } of this.stmts.rowids.all(id)) this.stmts.delFts.run(rowid);
    this.stmts.delRev.run(id);
    for (const v of views) {
      const info = this.stmts.insRev.run({
        id: v.id,
        rev: v.rev,
        scope: v.scope,
        type: v.type,
        slug: v.slug,
        status: v.status,
        trust_rank: trustRank(v.trust),
        quarantine: v.quarantine,
        review: v.review,
        valid_from: v.valid_from,
        valid_to: v.valid_to,
        valid_to_eff: v.valid_to_eff,
        recorded_at: v.recorded_at,
        retired_at: v.retired_at,
        retire_kind: v.retire_kind,
        lineage_end_at: v.lineage_end_at,
        is_current: v.current ? 1 : 0,
        doc: JSON.stringify(v),
        source_path: v.source?.path ?? null,
        // Only constraints and procedures are matched by their applies_to globs at pre-edit.
        applies:
          (v.type === 'constraint' || v.type === 'procedure') && (v.applies_to?.length ?? 0) > 0
            ? 1
            : 0,
      });
      const extra = [v.type, ...v.tags, ...Object.values(v.fields)].join(' ');
      this.stmts.insFts.run(
        info.lastInsertRowid,
        indexText(v.abstract),
        indexText(v.body),
        indexText(extra),
      );
    }
  }

  /** Drops every row of one lineage (it is withheld from reads). */
  removeLineage(id: string): void {
    this.searcher.touched();
    for (const { rowid } of this.stmts.rowids.all(id)) this.stmts.delFts.run(rowid);
    this.stmts.delRev.run(id);
  }

  lineage(id: string): RevisionView[] | null {
    const rows = this.stmts.lineage.all(id);
    return rows.length === 0 ? null : rows.map((r) => JSON.parse(r.doc) as RevisionView);
  }

  live(scope: string, type: string, slug: string): RevisionView | null {
    const row = this.stmts.live.get(scope, type, slug);
    return row ? (JSON.parse(row.doc) as RevisionView) : null;
  }

  putIdempotent(entry: JournalEntry): void {
    if (entry.idem) this.stmts.idemPut.run(entry.idem, JSON.stringify(entry));
  }
  getIdempotent(key: string): JournalEntry | null {
    const row = this.stmts.idemGet.get(key);
    return row ? (JSON.parse(row.entry) as JournalEntry) : null;
  }

  search(req: SearchRequest): SearchHit[] {
    return this.searcher.search(req);
  }

  nearest(terms: QueryTerm[], scopes: string[], limit: number): SearchHit[] {
    return this.searcher.nearest(terms, scopes, limit);
  }

  current(scopes: string[], includeEnded: boolean): RevisionView[] {
    if (scopes.length === 0) return [];
    const placeholders = scopes.map(() => '?').join(', ');
    const rows = this.db
      .prepare<string[], { doc: string }>(
        `SELECT doc FROM rev WHERE is_current = 1 AND scope IN (${placeholders})
         ${includeEnded ? '' : "AND status = 'active'"} ORDER BY id`,
      )
      .all(...scopes);
    return rows.map((r) => JSON.parse(r.doc) as RevisionView);
  }

  injectCandidates(q: InjectQuery): SearchHit[] {
    return injectCandidates(this.db, q);
  }

  /** Journal effects the index mirrors: idempotency keys and journaled freshness. */
  applyEntry(entry: JournalEntry): void {
    this.putIdempotent(entry);
    recordFreshness(this.db, entry);
  }

  freshness(
    ids: string[],
  ): Map<string, { rev: number; freshness: string; observed_sha: string | null; at: string }> {
    return freshnessOf(this.db, ids);
  }

  /** Replaces the cached weights of every current memory in `scopes` with `weights`. */
  setWeights(scopes: string[], weights: Map<string, number>): void {
    setWeights(this.db, scopes, weights);
  }

  allWeights(): Map<string, number> {
    return allWeights(this.db);
  }

  /** Every indexed revision's (id, rev, doc), for fsck's index-versus-files check. */
  allRevisionKeys(): Map<string, string> {
    const rows = this.db.prepare('SELECT id, rev, doc FROM rev').all() as {
      id: string;
      rev: number;
      doc: string;
    }[];
    return new Map(rows.map((r) => [`${r.id}#${r.rev}`, r.doc]));
  }

  weights(ids: string[]): Map<string, number> {
    return weightsOf(this.db, ids);
  }

  /** Counts over the whole index, or over `scopes` only (the predicate inside each query). */
  counts(scopes?: readonly string[]): {
    memories: number;
    active: number;
    revisions: number;
    byScope: Record<string, number>;
    byType: Record<string, number>;
  } {
    // '' is no scope: it keeps `IN (…)` well formed for an empty list.
    const bind = scopes === undefined ? [] : ['', ...scopes];
    const inScopes =
      scopes === undefined ? '1 = 1' : `scope IN (${bind.map(() => '?').join(', ')})`;
    const one = (sql: string) => (this.db.prepare(sql).get(...bind) as { n: number }).n;
    const group = (col: string) =>
      Object.fromEntries(
        (
          this.db
            .prepare(
              `SELECT ${col} AS k, count(*) AS n FROM rev
               WHERE is_current = 1 AND status = 'active' AND ${inScopes} GROUP BY ${col}`,
            )
            .all(...bind) as { k: string; n: number }[]
        ).map((r) => [r.k, r.n]),
      );
    return {
      memories: one(`SELECT count(*) AS n FROM rev WHERE is_current = 1 AND ${inScopes}`),
      active: one(
        `SELECT count(*) AS n FROM rev WHERE is_current = 1 AND status = 'active' AND ${inScopes}`,
      ),
      revisions: one(`SELECT count(*) AS n FROM rev WHERE ${inScopes}`),
      byScope: group('scope'),
      byType: group('type'),
    };
  }

  reset(): void {
    this.db.exec(
      'DELETE FROM rev; DELETE FROM fts; DELETE FROM idem; DELETE FROM weight; DELETE FROM fresh; DELETE FROM meta;',
    );
    this.setMeta('schema', SCHEMA_VERSION);
  }

  markSchema(): void {
    this.setMeta('schema', SCHEMA_VERSION);
  }

  close(): void {
    this.db.close();
  }
}
