// Lexical search over the index: the eligibility predicate (shared with the vector arm, so both
// arms agree), FTS5/BM25 ranking with the common-term pruning that keeps a query of common
// words fast, and `nearest` (no eligibility: what a new memory might duplicate). IndexSearch
// holds the prepared statements and the per-process document-frequency cache.
import type Database from 'better-sqlite3';
import { stemmer } from 'stemmer';
import type { Eligibility } from '../../core/eligibility.js';
import { FAR_FUTURE } from '../../core/time.js';
import { ftsMatchExpression, type QueryTerm } from '../../core/text.js';
import { trustRank } from '../../core/types.js';
import type { SearchHit } from '../port.js';
import { hitColumns, sqlLimit, toHit, type HitRow } from './index-hits.js';

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

/**
 * Tiers of candidate rows a narrowed query may touch: the rarest terms first, widening until
 * enough eligible rows are found, and finally every term. The wide tiers keep a query made only
 * of common words from scoring every row that holds any of them (that was the slow tail).
 */
const PRUNE_BUDGETS = [150, 800, 3000, 20000, Infinity];
/** Best rare-term matches re-scored for the common terms. */
const NARROW_CANDIDATES = 100;

export class IndexSearch {
  private readonly dfCache = new Map<string, { df: number; seq: number }>();
  private dfSeq = 0;
  private nDocs: { n: number; seq: number } | null = null;
  private readonly docsByRowid = new Map<number, Database.Statement>();
  private dfVocab: Database.Statement<[string], { doc: number }> | undefined;

  constructor(private readonly db: Database.Database) {}

  /** The rows changed: cached document frequencies age by one write. */
  touched(): void {
    this.dfSeq++;
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
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

/** Whether some word in `text` (lower-cased) starts with `stem`: a stemmed-term match. */
function hasWordFrom(text: string, stem: string): boolean {
  for (let i = text.indexOf(stem); i >= 0; i = text.indexOf(stem, i + 1)) {
    if (i === 0 || !WORD_CHAR.test(text[i - 1]!)) return true;
  }
  return false;
}
