// Lexical search over the index: the eligibility predicate (shared with the vector arm, so both
// arms agree), candidates ranked by the ranking model (core/ranking.ts: rare-term narrowing,
// BM25 — computed inside SQL by FTS5's bm25(), the same function), and `nearest` (no
// eligibility: the exclusion trace). IndexSearch holds the prepared statements and the counts
// BM25 reads (document frequencies, rows, tokens), cached until the next write.
import type Database from 'better-sqlite3';
import type { Eligibility } from '../../core/eligibility.js';
import {
  DEFAULT_RANKING,
  bm25Idf,
  byScore,
  firstEnough,
  narrowCut,
  narrowingPlan,
  termsThatWeigh,
  fieldsByWeight,
  countTokens,
  hasTokens,
  leftOutScore,
  tokenCount,
  type CorpusStats,
  type FieldCounts,
  type RankingModel,
} from '../../core/ranking.js';
import { FAR_FUTURE } from '../../core/time.js';
import { ftsMatchExpression, queryShape, uniqueTerms, type QueryTerm } from '../../core/text.js';
import { trustRank } from '../../core/types.js';
import type { SearchHit, SearchRequest } from '../port.js';
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

/** Ranked statements by shape; the model's field weights are bound parameters. */
const BM25 = 'bm25(fts, @wa, @wb, @we)';

export class IndexSearch {
  /** Document frequencies of index tokens, and the corpus counts: exact until the next write. */
  private readonly dfCache = new Map<string, number>();
  private stats: CorpusStats | null = null;
  private readonly docsByRowid = new Map<number, Database.Statement>();
  private dfVocab: Database.Statement<[string], { doc: number }> | undefined;
  private averages: Database.Statement<[], { block: Buffer }> | undefined;

  constructor(private readonly db: Database.Database) {}

  /** The rows changed: cached counts are stale. */
  touched(): void {
    this.dfCache.clear();
    this.stats = null;
  }

  /**
   * Ranked statements, by shape (narrowed or not, number of scopes, LIMIT). The LIMIT is written
   * into the SQL: a bound LIMIT under ORDER BY makes SQLite re-prepare the statement on every run.
   */
  private readonly searchCache = new Map<string, Database.Statement>();

  /**
   * Eligible candidates, best lexical match first, as the ranking model orders them (see
   * rankCandidates in core/ranking.ts): rare-term narrowing by document frequency, then BM25.
   * The scope and eligibility predicates sit in the same statement as the MATCH, so bm25 is
   * computed only for rows that passed them; FTS5's bm25() is the model's BM25 (same formula and
   * constants, the model's field weights), so the first cut happens inside SQL.
   */
  search(req: SearchRequest): SearchHit[] {
    const q = req.eligibility;
    if (q.scopes.length === 0) return [];
    const m = req.model ?? DEFAULT_RANKING;
    let { terms, tokens, phrase } = queryShape(req.terms);
    if (terms.length === 0) return [];
    let df = tokens.map((t, i) => (phrase[i] ? 0 : this.termDf(t[0]!)));
    if (req.maxTerms !== undefined) {
      const keep = termsThatWeigh(df, phrase, this.corpus().rows, req.maxTerms, req.feedback);
      if (keep) {
        if (keep.length === 0) return [];
        [terms, tokens, phrase, df] = [terms, tokens, phrase, df].map((xs) =>
          keep.map((i) => xs[i]),
        ) as [typeof terms, typeof tokens, typeof phrase, typeof df];
      }
    }
    const want = req.want ?? req.limit;
    const plan = narrowingPlan(df, phrase, want, m, this.corpus().rows);
    return firstEnough(plan, want, (kept) =>
      kept
        ? this.runNarrow(terms, tokens, df, kept, q, req.limit, m)
        : this.runSearch(terms, q, req.limit, m),
    ).map(toHit);
  }

  /**
   * Candidates from the kept (rare) terms only: the best narrowCut of them by BM25 over the kept
   * terms (inside SQL), each then re-scored over every term with the left-out terms' counts read
   * from its index tokens (FTS5's content table: c0 abstract, c1 body, c2 extra), best `limit`.
   */
  private runNarrow(
    terms: QueryTerm[],
    tokens: string[][],
    df: number[],
    kept: number[],
    q: Eligibility,
    limit: number,
    m: RankingModel,
  ): HitRow[] {
    const match = ftsMatchExpression(kept.map((i) => terms[i]!));
    if (match === null) return [];
    const candidates = sqlLimit(narrowCut(limit, m));
    const key = `narrow:${q.scopes.length}:${candidates}`;
    let stmt = this.searchCache.get(key);
    if (!stmt) {
      const placeholders = q.scopes.map((_, i) => `@s${i}`).join(', ');
      // Sort rowids and scores only; the tokens are read for the rows that survive the LIMIT,
      // from the content table by its primary key (cheaper than through the virtual table).
      stmt = this.db
        .prepare(
          `SELECT x.rowid, x.bm, x.id, x.rev, t.c0, t.c1, t.c2
        FROM (SELECT r.rowid AS rowid, ${BM25} AS bm, r.id AS id, r.rev AS rev
              FROM fts JOIN rev r ON r.rowid = fts.rowid
              WHERE fts MATCH @match AND r.scope IN (${placeholders}) AND ${ELIGIBLE}
              ORDER BY bm, r.id, r.rev LIMIT ${candidates}) x
        JOIN fts_content t ON t.id = x.rowid`,
        )
        // Rows as arrays: building a keyed object per row costs more than the query here.
        .raw(true);
      this.searchCache.set(key, stmt);
    }
    const cands = stmt.all(this.params(q, match, m)) as [
      rowid: number,
      bm: number,
      id: string,
      rev: number,
      a: string,
      b: string,
      e: string,
    ][];
    const keptSet = new Set(kept);
    const rest = tokens.flatMap((_, i) => (keptSet.has(i) ? [] : [i]));
    const stats = this.corpus();
    const idf = df.map((d) => bm25Idf(stats.rows, d));
    const order = fieldsByWeight(m);
    const scored = cands.map(([rowid, bm, id, rev, a, b, e]) => {
      let score = -bm;
      const fields = [a, b, e];
      if (m.leftOut === 'bm25') {
        // Its counts and the candidate's length, as FTS5 counts them (the token texts).
        const length = tokenCount(a) + tokenCount(b) + tokenCount(e);
        for (const i of rest) {
          const t = tokens[i]!;
          const tf: FieldCounts = [countTokens(a, t), countTokens(b, t), countTokens(e, t)];
          score += leftOutScore(tf, idf[i]!, m, length, stats);
        }
      } else
        for (const i of rest) {
          // Only the heaviest field holding the term counts: look no further once found.
          const f = order.find((x) => hasTokens(fields[x]!, tokens[i]!));
          if (f !== undefined) score += leftOutScore(FOUND[f]!, idf[i]!, m, 0, stats);
        }
      return { rowid, id, rev, score };
    });
    scored.sort(byScore);
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
      row[2] = -t.score;
      return row;
    });
  }

  private params(q: Eligibility, match: string, m: RankingModel): Record<string, unknown> {
    return eligibilityParams(q, {
      match,
      wa: m.abstractWeight,
      wb: m.bodyWeight,
      we: m.extraWeight,
    });
  }

  /**
   * Rows and tokens as FTS5's bm25() counts them: its "averages" record (row 1 of fts_data: a
   * varint row count, then a varint token total per column).
   */
  private corpus(): CorpusStats {
    if (this.stats) return this.stats;
    this.averages ??= this.db.prepare<[], { block: Buffer }>(
      'SELECT block FROM fts_data WHERE id = 1',
    );
    const block = this.averages.get()?.block;
    const counts: number[] = [];
    if (block) {
      let pos = 0;
      while (pos < block.length) {
        const [v, next] = readVarint(block, pos);
        counts.push(v);
        pos = next;
      }
    }
    const rows = counts[0] ?? 0;
    const tokens = counts.slice(1).reduce((x, y) => x + y, 0);
    this.stats = { rows, tokens };
    return this.stats;
  }

  /** Every term: the best `limit` eligible matches by BM25, inside SQL. */
  private runSearch(terms: QueryTerm[], q: Eligibility, limit: number, m: RankingModel): HitRow[] {
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
          SELECT r.rowid AS rowid, ${BM25} AS bm, r.id AS id, r.rev AS rev
          FROM fts JOIN rev r ON r.rowid = fts.rowid
          WHERE fts MATCH @match AND r.scope IN (${placeholders}) AND ${ELIGIBLE}
          ORDER BY bm, r.id, r.rev LIMIT ${rows}) x
        JOIN rev d ON d.rowid = x.rowid LEFT JOIN weight w ON w.id = d.id
        ORDER BY x.bm, x.id, x.rev`,
        )
        .raw(true);
      this.searchCache.set(key, stmt);
    }
    return stmt.all(this.params(q, match, m)) as HitRow[];
  }

  /** Rows holding an index token (FTS5's vocabulary), exact until the next write. */
  private termDf(token: string): number {
    const cached = this.dfCache.get(token);
    if (cached !== undefined) return cached;
    this.dfVocab ??= this.db.prepare<[string], { doc: number }>(
      'SELECT doc FROM fts_vocab WHERE term = ?',
    );
    const df = this.dfVocab.get(token)?.doc ?? 0;
    this.dfCache.set(token, df);
    return df;
  }

  nearest(terms: QueryTerm[], scopes: string[], limit: number): SearchHit[] {
    const match = ftsMatchExpression(uniqueTerms(terms));
    if (match === null || scopes.length === 0) return [];
    const m = DEFAULT_RANKING;
    const rows = this.db
      .prepare(
        `SELECT ${hitColumns('r', 'bm25(fts, ?, ?, ?) AS bm')}
        FROM fts JOIN rev r ON r.rowid = fts.rowid LEFT JOIN weight w ON w.id = r.id
        WHERE fts MATCH ? AND r.scope IN (${scopes.map(() => '?').join(', ')})
        ORDER BY bm, r.id, r.rev LIMIT ?`,
      )
      .raw(true)
      .all(m.abstractWeight, m.bodyWeight, m.extraWeight, match, ...scopes, limit) as HitRow[];
    return rows.map(toHit);
  }
}

/** A term present in one field: abstract, body, extra. */
const FOUND: FieldCounts[] = [
  [1, 0, 0],
  [0, 1, 0],
  [0, 0, 1],
];

/** An SQLite varint (FTS5's record format): big-endian 7-bit groups, the ninth byte whole. */
function readVarint(buf: Buffer, pos: number): [value: number, next: number] {
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const byte = buf[pos + i]!;
    v = v * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [v, pos + i + 1];
  }
  return [v * 256 + buf[pos + 8]!, pos + 9];
}
