// The SQLite index: a rebuildable cache of every revision (one row each, with the lifecycle
// facts derived from its lineage) and an FTS5 table over them. A write replaces only the rows
// of the lineage it touched (invariant 11); the eligibility predicate runs inside the query.
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { stemmer } from 'stemmer';
import type { Eligibility } from '../../core/eligibility.js';
import type { JournalEntry } from '../../core/journal.js';
import { MnemeError } from '../../core/errors.js';
import { FAR_FUTURE } from '../../core/time.js';
import { ftsMatchExpression, prepareForIndex, type QueryTerm } from '../../core/text.js';
import { TRUST_LEVELS, trustRank, type RevisionView } from '../../core/types.js';
import type { HitHead, InjectQuery, SearchHit } from '../port.js';
import { INDEX_BUSY_TIMEOUT_MS, openDatabase } from './sqlite.js';

// 2: rev.w (the weight, copied from the weight table), rev.source_path and rev.applies, and the
// indexes injection reads through.
const SCHEMA_VERSION = '2';

/**
 * The conditions of injection that never change while a row stands (a partial index's WHERE
 * must be implied word for word by the query that uses it: injectCandidates repeats it).
 */
const INJECTABLE = `is_current = 1 AND status = 'active' AND lineage_end_at IS NULL
  AND quarantine IS NULL AND review = 'none'`;

/** Rows a pre-edit block can hold: bound to a file, or carrying applies_to globs. */
const FILE_BOUND = '(source_path IS NOT NULL OR applies = 1)';

/** SQLite's "the lock is held" errors (SQLITE_BUSY, SQLITE_LOCKED and their extended codes). */
export function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code);
}

/** The tables DDL creates, dropped when an index of an older schema is opened. */
const TABLES = ['fts_vocab', 'fts', 'rev', 'meta', 'idem', 'weight', 'fresh'];

const DDL = `
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rev(
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL, rev INTEGER NOT NULL, scope TEXT NOT NULL, type TEXT NOT NULL,
  slug TEXT NOT NULL, status TEXT NOT NULL, trust_rank INTEGER NOT NULL, quarantine TEXT,
  review TEXT NOT NULL, valid_from TEXT NOT NULL, valid_to TEXT, valid_to_eff TEXT,
  recorded_at TEXT NOT NULL, retired_at TEXT, retire_kind TEXT, lineage_end_at TEXT,
  is_current INTEGER NOT NULL, doc TEXT NOT NULL, w REAL NOT NULL DEFAULT 1,
  source_path TEXT, applies INTEGER NOT NULL DEFAULT 0,
  UNIQUE(id, rev)
);
CREATE INDEX IF NOT EXISTS rev_live ON rev(scope, type, slug) WHERE is_current = 1 AND status = 'active';
CREATE INDEX IF NOT EXISTS rev_current ON rev(scope) WHERE is_current = 1;
CREATE INDEX IF NOT EXISTS rev_inject ON rev(scope, w DESC, trust_rank DESC, recorded_at DESC, id)
  WHERE ${INJECTABLE};
CREATE INDEX IF NOT EXISTS rev_inject_type
  ON rev(scope, type, w DESC, trust_rank DESC, recorded_at DESC, id) WHERE ${INJECTABLE};
CREATE INDEX IF NOT EXISTS rev_inject_file ON rev(scope, source_path)
  WHERE ${INJECTABLE} AND ${FILE_BOUND};
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
  abstract, body, extra, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts_vocab USING fts5vocab(fts, 'row');
CREATE TABLE IF NOT EXISTS idem(key TEXT PRIMARY KEY, entry TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS weight(id TEXT PRIMARY KEY, w REAL NOT NULL);
CREATE TABLE IF NOT EXISTS fresh(id TEXT PRIMARY KEY, rev INTEGER NOT NULL, state TEXT NOT NULL,
  observed TEXT, at TEXT NOT NULL);
`;

/** Every table and index DDL creates (an open with all of them in place writes nothing). */
const DDL_OBJECTS = [
  ...DDL.matchAll(/CREATE (?:VIRTUAL )?(?:TABLE|INDEX) IF NOT EXISTS (\w+)/g),
].map((m) => m[1]!);

/** The eligibility predicate over `rev r` (also used by the vector arm, so both arms agree). */
export const ELIGIBLE = `
  r.recorded_at <= @k
  AND r.status = 'active'
  AND (r.lineage_end_at IS NULL OR r.lineage_end_at > @k)
  AND NOT (r.retired_at IS NOT NULL AND r.retired_at <= @k
           AND r.retire_kind IN ('correct', 'revise', 'retract', 'merge'))
  AND r.valid_from <= @t
  AND (CASE WHEN r.retired_at IS NOT NULL AND r.retired_at <= @k AND r.retire_kind = 'supersede'
            THEN COALESCE(r.valid_to_eff, @far) ELSE COALESCE(r.valid_to, @far) END) > @t
  AND (@incq = 1 OR r.quarantine IS NULL)
  AND r.trust_rank >= @mintrust`;

/**
 * `params` plus the named parameters ELIGIBLE and `r.scope IN (@s0, …)` bind for an eligibility
 * (filled in place: this runs on every recall).
 */
export function eligibilityParams(
  q: Eligibility,
  params: Record<string, unknown>,
): Record<string, unknown> {
  params.k = q.knownAt ?? FAR_FUTURE;
  params.t = q.asOf;
  params.far = FAR_FUTURE;
  params.incq = q.includeQuarantined ? 1 : 0;
  params.mintrust = trustRank(q.minTrust);
  q.scopes.forEach((s, i) => (params[`s${i}`] = s));
  return params;
}

/** A candidate row, read as an array (statements in raw mode): see hitColumns. */
type HitRow = [
  rowid: number,
  doc: string,
  bm: number,
  w: number | null,
  id: string,
  rev: number,
  recorded_at: string,
  trust_rank: number,
  valid_from: string,
];

/**
 * The columns of a HitRow, from revision table alias `t` joined to `weight w`: the document, and
 * beside it what ranking needs, so that the document is parsed only for the hits that are shown.
 */
const hitColumns = (t: string, bm: string) =>
  `${t}.rowid, ${t}.doc, ${bm}, w.w, ${t}.id, ${t}.rev, ${t}.recorded_at, ${t}.trust_rank, ${t}.valid_from`;

/**
 * Tiers of candidate rows a narrowed query may touch: the rarest terms first, widening until
 * enough eligible rows are found, and finally every term. The wide tiers keep a query made only
 * of common words from scoring every row that holds any of them (that was the slow tail).
 */
const PRUNE_BUDGETS = [150, 800, 3000, 20000, Infinity];
/** Best rare-term matches re-scored for the common terms. */
const NARROW_CANDIDATES = 100;

export class IndexDb {
  readonly db: Database.Database;
  private readonly dfCache = new Map<string, { df: number; seq: number }>();
  private dfSeq = 0;
  private nDocs: { n: number; seq: number } | null = null;
  private readonly docsByRowid = new Map<number, Database.Statement>();
  private dfVocab: Database.Statement<[string], { doc: number }> | undefined;
  private readonly stmts;

  /**
   * `busyTimeoutMs` bounds every wait for SQLite's own lock (it is set when the file is opened,
   * before the first statement). Opening takes the write lock only when the schema is missing or
   * older: an open that always took it would, for an instant, hold up every other process's
   * write to the index.
   */
  constructor(file: string, busyTimeoutMs: number = INDEX_BUSY_TIMEOUT_MS) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.db = openDatabase(file, { timeout: busyTimeoutMs });
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('mmap_size = 1073741824');
    if (!this.schemaInPlace())
      this.transaction(() => {
        if (this.olderSchema()) for (const t of TABLES) this.db.exec(`DROP TABLE IF EXISTS ${t}`);
        this.db.exec(DDL);
      });
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

  /** Every table and index DDL creates exists, under the current schema version. */
  private schemaInPlace(): boolean {
    const names = new Set(
      (this.db.prepare('SELECT name FROM sqlite_master').all() as { name: string }[]).map(
        (r) => r.name,
      ),
    );
    return DDL_OBJECTS.every((n) => names.has(n)) && this.getMetaRaw('schema') === SCHEMA_VERSION;
  }

  private getMetaRaw(k: string): string | null {
    const row = this.db.prepare('SELECT v FROM meta WHERE k = ?').get(k) as
      { v: string } | undefined;
    return row?.v ?? null;
  }

  /** An index written by an older schema: a cache, so it is dropped and rebuilt from files. */
  private olderSchema(): boolean {
    const meta = this.db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'")
      .get();
    if (!meta) return false;
    const row = this.db.prepare("SELECT v FROM meta WHERE k = 'schema'").get() as
      { v: string } | undefined;
    return row !== undefined && row.v !== SCHEMA_VERSION;
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
  get schemaOk(): boolean {
    return this.getMeta('schema') === SCHEMA_VERSION;
  }

  /**
   * A write transaction, begun IMMEDIATE: it waits (up to the busy timeout) for the write lock
   * before reading anything. A deferred one that read first could not wait when it came to
   * write while another connection held the lock — SQLite answers `database is locked` at once.
   * Past the bound the caller gets a `locked` error.
   */
  transaction<T>(fn: () => T): T {
    try {
      return this.db.transaction(fn).immediate();
    } catch (e) {
      if (isBusy(e))
        throw new MnemeError('locked', 'the index is busy: another process held it too long', {
          hint: 'retry shortly',
          details: { index: 'busy' },
        });
      throw e;
    }
  }

  /** Replaces the rows of one lineage: the only rows a write touches. */
  replaceLineage(views: readonly RevisionView[]): void {
    this.dfSeq++;
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
        prepareForIndex(v.abstract),
        prepareForIndex(v.body),
        prepareForIndex(extra),
      );
    }
  }

  /** Drops every row of one lineage (it is withheld from reads). */
  removeLineage(id: string): void {
    this.dfSeq++;
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

  /**
   * Ranked statements, by shape (narrowed or not, number of scopes, LIMIT). The LIMIT is written
   * into the SQL: a bound LIMIT under ORDER BY makes SQLite re-prepare the statement on every run.
   */
  private readonly searchCache = new Map<string, Database.Statement>();

  /**
   * Eligible candidates, best first. FTS5 ranks its matches first (only rowids and scores are
   * sorted, never the stored documents), then the best `inner` of them are joined to their rows
   * and the eligibility predicate applied; when too few survive and more matches exist, the
   * query runs again without the inner cut, so the result is the same as the unbounded query.
   */
  /**
   * Eligible candidates, best lexical match first. The scope and eligibility predicates sit in
   * the same statement as the MATCH, so bm25 is computed only for rows that passed them.
   * Very common terms are left out of the candidate query when rarer ones are present (their
   * IDF adds almost nothing, and scoring thousands of rows is what makes a query slow); if that
   * leaves too few eligible results, the full query runs.
   */
  search(terms: QueryTerm[], q: Eligibility, limit: number, want = limit): SearchHit[] {
    if (q.scopes.length === 0) return [];
    let rows: HitRow[] = [];
    let tried = 0;
    // want = 0: the caller only wants boosts from rare terms, never a widened query.
    for (const budget of want === 0 ? PRUNE_BUDGETS.slice(0, 1) : PRUNE_BUDGETS) {
      const pruned = this.pruneCommonTerms(terms, budget);
      if (pruned.length === tried) continue; // same query as the previous tier
      tried = pruned.length;
      rows =
        pruned.length < terms.length
          ? this.runNarrow(pruned, terms, q, limit)
          : this.runSearch(pruned, q, limit);
      if (rows.length >= want || pruned.length === terms.length) break;
    }
    return rows.map(toHit);
  }

  /**
   * Candidates from the rare terms only, each then scored for the left-out common terms too
   * (their BM25 contribution at tf=1: idf × column weight), so a memory that holds every query
   * word still outranks one that holds only the rare one.
   */
  private runNarrow(rare: QueryTerm[], all: QueryTerm[], q: Eligibility, limit: number): HitRow[] {
    const match = ftsMatchExpression(rare);
    if (match === null) return [];
    const candidates = sqlLimit(Math.max(limit * 2, NARROW_CANDIDATES));
    const key = `narrow:${q.scopes.length}:${candidates}`;
    let stmt = this.searchCache.get(key);
    if (!stmt) {
      const placeholders = q.scopes.map((_, i) => `@s${i}`).join(', ');
      // Sort rowids and scores only; the text is read for the rows that survive the LIMIT, from
      // FTS5's content table (fts_content: c0 abstract, c1 body, c2 extra) by its primary key,
      // which is cheaper than a rowid lookup through the virtual table.
      stmt = this.db
        .prepare(
          `SELECT x.rowid, x.bm, t.c0, substr(t.c1, 1, 4000), t.c2
        FROM (SELECT r.rowid AS rowid, bm25(fts, 4.0, 1.0, 2.0) AS bm
              FROM fts JOIN rev r ON r.rowid = fts.rowid
              WHERE fts MATCH @match AND r.scope IN (${placeholders}) AND ${ELIGIBLE}
              ORDER BY bm LIMIT ${candidates}) x
        JOIN fts_content t ON t.id = x.rowid`,
        )
        // Rows as arrays: building a keyed object per row costs more than the query here.
        .raw(true);
      this.searchCache.set(key, stmt);
    }
    const params = eligibilityParams(q, { match });
    const cands = stmt.all(params) as [
      rowid: number,
      bm: number,
      a: string,
      b: string,
      e: string,
    ][];
    const kept = new Set(rare.map((t) => t.text));
    const n = this.docCount();
    const extra = all
      .filter((t) => !kept.has(t.text) && !t.phrase)
      .map((t) => {
        const stem = stemmer(t.text);
        const df = this.termDf(stem);
        const idf = Math.max(1e-6, Math.log((n - df + 0.5) / (df + 0.5)));
        return { stem: stem.toLowerCase(), idf };
      });
    const scored = cands.map(([rowid, bm0, a0, b0, e0]) => {
      let bm = bm0;
      if (extra.length > 0) {
        const a = a0.toLowerCase();
        const e = e0.toLowerCase();
        const b = b0.toLowerCase();
        for (const x of extra) {
          const w = hasWordFrom(a, x.stem)
            ? 4
            : hasWordFrom(e, x.stem)
              ? 2
              : hasWordFrom(b, x.stem)
                ? 1
                : 0;
          bm -= w * x.idf;
        }
      }
      return { rowid, bm };
    });
    scored.sort((x, y) => x.bm - y.bm || x.rowid - y.rowid);
    const top = scored.slice(0, limit);
    if (top.length === 0) return [];
    let docStmt = this.docsByRowid.get(top.length);
    if (!docStmt) {
      docStmt = this.db
        .prepare(
          `SELECT ${hitColumns('d', '0')} FROM rev d LEFT JOIN weight w ON w.id = d.id
           WHERE d.rowid IN (${top.map(() => '?').join(', ')})`,
        )
        .raw(true);
      this.docsByRowid.set(top.length, docStmt);
    }
    const docs = docStmt.all(...top.map((t) => t.rowid)) as HitRow[];
    const byId = new Map(docs.map((d) => [d[0], d]));
    return top.map((t) => {
      const row = byId.get(t.rowid)!;
      row[2] = t.bm;
      return row;
    });
  }

  private docCount(): number {
    if (this.nDocs === null || this.nDocs.seq + 500 <= this.dfSeq) {
      this.nDocs = {
        n: (this.db.prepare('SELECT count(*) AS n FROM rev').get() as { n: number }).n,
        seq: this.dfSeq,
      };
    }
    return Math.max(1, this.nDocs.n);
  }

  private runSearch(terms: QueryTerm[], q: Eligibility, limit: number): HitRow[] {
    const match = ftsMatchExpression(terms);
    if (match === null) return [];
    const rows = sqlLimit(limit);
    const key = `full:${q.scopes.length}:${rows}`;
    let stmt = this.searchCache.get(key);
    if (!stmt) {
      const placeholders = q.scopes.map((_, i) => `@s${i}`).join(', ');
      // The ranked inner query carries only rowids and scores; documents are joined for the
      // few rows that survive the LIMIT.
      stmt = this.db
        .prepare(
          `SELECT ${hitColumns('d', 'x.bm')} FROM (
          SELECT r.rowid AS rowid, bm25(fts, 4.0, 1.0, 2.0) AS bm
          FROM fts JOIN rev r ON r.rowid = fts.rowid
          WHERE fts MATCH @match AND r.scope IN (${placeholders}) AND ${ELIGIBLE}
          ORDER BY bm LIMIT ${rows}) x
        JOIN rev d ON d.rowid = x.rowid LEFT JOIN weight w ON w.id = d.id
        ORDER BY x.bm`,
        )
        .raw(true);
      this.searchCache.set(key, stmt);
    }
    const params = eligibilityParams(q, { match });
    return stmt.all(params) as HitRow[];
  }

  /** Document frequency of a (stemmed) term, cached per process; approximate is enough here. */
  private termDf(stem: string): number {
    const cached = this.dfCache.get(stem);
    if (cached !== undefined && cached.seq + 500 > this.dfSeq) return cached.df;
    this.dfVocab ??= this.db.prepare<[string], { doc: number }>(
      'SELECT doc FROM fts_vocab WHERE term = ?',
    );
    const df = this.dfVocab.get(stem)?.doc ?? 0;
    this.dfCache.set(stem, { df, seq: this.dfSeq });
    return df;
  }

  private pruneCommonTerms(terms: QueryTerm[], budget: number): QueryTerm[] {
    if (budget === Infinity) return terms;
    const scored = terms.map((t) => ({ t, df: t.phrase ? 0 : this.termDf(stemmer(t.text)) }));
    const total = scored.reduce((a, x) => a + x.df, 0);
    if (total <= budget) return terms;
    scored.sort((a, b) => a.df - b.df);
    const kept: QueryTerm[] = [];
    let sum = 0;
    for (const x of scored) {
      if (sum + x.df > budget) break;
      kept.push(x.t);
      sum += x.df;
    }
    return kept;
  }

  nearest(terms: QueryTerm[], scopes: string[], limit: number): SearchHit[] {
    const match = ftsMatchExpression(terms);
    if (match === null || scopes.length === 0) return [];
    const rows = this.db
      .prepare(
        `SELECT ${hitColumns('r', 'bm25(fts, 4.0, 1.0, 2.0) AS bm')}
        FROM fts JOIN rev r ON r.rowid = fts.rowid LEFT JOIN weight w ON w.id = r.id
        WHERE fts MATCH ? AND r.scope IN (${scopes.map(() => '?').join(', ')})
        ORDER BY bm LIMIT ?`,
      )
      .raw(true)
      .all(match, ...scopes, limit) as HitRow[];
    return rows.map(toHit);
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
    const picked = this.db
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

  /** Journal effects the index mirrors: idempotency keys and journaled freshness. */
  applyEntry(entry: JournalEntry): void {
    this.putIdempotent(entry);
    if (entry.data?.source_bound === true && entry.target && entry.after) {
      // A revision whose source the engine just hashed is fresh, whatever was journaled before.
      this.db
        .prepare(
          `INSERT INTO fresh(id, rev, state, observed, at) VALUES (?, ?, 'fresh', NULL, ?)
           ON CONFLICT(id) DO UPDATE SET rev = excluded.rev, state = 'fresh', observed = NULL, at = excluded.at`,
        )
        .run(entry.target.id, entry.after.rev, entry.at);
    }
    if (entry.op === 'check_source' && entry.target && entry.data) {
      const d = entry.data as { freshness?: string; rev?: number; observed_sha?: string | null };
      if (typeof d.freshness === 'string' && typeof d.rev === 'number')
        this.db
          .prepare(
            `INSERT INTO fresh(id, rev, state, observed, at) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT(id) DO UPDATE SET rev = excluded.rev, state = excluded.state,
             observed = excluded.observed, at = excluded.at`,
          )
          .run(entry.target.id, d.rev, d.freshness, d.observed_sha ?? null, entry.at);
    }
  }

  freshness(
    ids: string[],
  ): Map<string, { rev: number; freshness: string; observed_sha: string | null; at: string }> {
    const out = new Map<
      string,
      { rev: number; freshness: string; observed_sha: string | null; at: string }
    >();
    const stmt = this.db.prepare<
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

  /** Replaces the cached weights of every current memory in `scopes` with `weights`. */
  setWeights(scopes: string[], weights: Map<string, number>): void {
    if (scopes.length === 0) return;
    const placeholders = scopes.map(() => '?').join(', ');
    this.transaction(() => {
      this.db
        .prepare(
          `DELETE FROM weight WHERE id IN (SELECT id FROM rev WHERE is_current = 1 AND scope IN (${placeholders}))`,
        )
        .run(...scopes);
      const ins = this.db.prepare('INSERT OR REPLACE INTO weight(id, w) VALUES (?, ?)');
      for (const [id, w] of weights) ins.run(id, w);
      // rev.w mirrors the weight table, so injection can read rows in weight order by index.
      this.db
        .prepare(
          `UPDATE rev SET w = COALESCE((SELECT w FROM weight WHERE weight.id = rev.id), 1)
           WHERE scope IN (${placeholders})`,
        )
        .run(...scopes);
    });
  }

  allWeights(): Map<string, number> {
    const rows = this.db.prepare('SELECT id, w FROM weight').all() as { id: string; w: number }[];
    return new Map(rows.map((r) => [r.id, r.w]));
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
    const out = new Map<string, number>();
    if (ids.length === 0) return out;
    // By key: a pre-edit hook asks for a handful of ids, not for the whole table.
    const stmt = this.db.prepare<[string], { w: number }>('SELECT w FROM weight WHERE id = ?');
    for (const id of new Set(ids)) {
      const row = stmt.get(id);
      if (row) out.set(id, row.w);
    }
    return out;
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

/** A LIMIT to write into SQL: a whole number of rows, at least 1. */
const sqlLimit = (n: number): number => Math.max(1, Math.min(1_000_000, Math.trunc(n) || 1));

const toHit = (r: HitRow): SearchHit => new LazyHit(r);

/** A hit whose document is parsed only when its view is first read (most candidates never are). */
class LazyHit implements SearchHit {
  readonly head: HitHead;
  readonly relevance: number;
  readonly weight: number;
  private parsed: RevisionView | undefined;
  private readonly doc: string;

  constructor(r: HitRow) {
    this.doc = r[1];
    this.relevance = -r[2];
    this.weight = r[3] ?? 1;
    this.head = {
      id: r[4],
      rev: r[5],
      recorded_at: r[6],
      trust: TRUST_LEVELS[r[7]] ?? 'untrusted',
      valid_from: r[8],
    };
  }

  get view(): RevisionView {
    return (this.parsed ??= JSON.parse(this.doc) as RevisionView);
  }
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

/** Whether some word in `text` (lower-cased) starts with `stem`: a stemmed-term match. */
function hasWordFrom(text: string, stem: string): boolean {
  for (let i = text.indexOf(stem); i >= 0; i = text.indexOf(stem, i + 1)) {
    if (i === 0 || !WORD_CHAR.test(text[i - 1]!)) return true;
  }
  return false;
}
