// The vector arm's storage in the files adapter's SQLite index: one float32 BLOB per revision
// and embedder key, scored with sqlite-vec's vec_distance_cosine inside the same statement as the
// lexical search's eligibility predicate (ELIGIBLE), so a vector is only ever compared once its
// revision is eligible — a superseded, retracted or foreign memory cannot come back by vector.
// Revisions are immutable, so rows keyed by (id, rev) stay right across index rebuilds (which
// leave this table alone); the text hash lets rebuild drop a stale row and reuse a vector for an
// identical text without asking the model again. sqlite-vec is loaded only here, on first use.
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import { MnemeError } from '../../core/errors.js';
import type { Eligibility } from '../../core/eligibility.js';
import { TRUST_LEVELS, type RevisionView } from '../../core/types.js';
import type { StoredVector, VectorHit, VectorStore } from '../port.js';
import type { IndexDb } from './index-db.js';
import { ELIGIBLE, eligibilityParams } from './index-search.js';

const DDL = `
CREATE TABLE IF NOT EXISTS vec(
  embedder TEXT NOT NULL, id TEXT NOT NULL, rev INTEGER NOT NULL, hash TEXT NOT NULL,
  v BLOB NOT NULL, UNIQUE(embedder, id, rev)
);
CREATE INDEX IF NOT EXISTS vec_by_hash ON vec(hash, embedder);
`;

interface VecRow {
  d: number;
  doc: string;
  w: number | null;
  id: string;
  rev: number;
  recorded_at: string;
  trust_rank: number;
  valid_from: string;
}

/** Nearest vectors scanned per wanted result before eligibility; the last tier is every one. */
const INNER_TIERS = [4, 32, Infinity];

/** Meta key recording the journal seq at which no revision of these scopes lacked a vector. */
const fullKey = (key: string, scopes: string[]) => `vec_full:${key}:${scopes.join(',')}`;

export async function loadSqliteVec(db: Database.Database): Promise<string> {
  try {
    // require, not import(): the bundle runs without a dynamic-import loader (bin/mneme.js).
    const sqliteVec = createRequire(import.meta.url)('sqlite-vec') as typeof import('sqlite-vec');
    sqliteVec.load(db);
    return (db.prepare('SELECT vec_version() AS v').get() as { v: string }).v;
  } catch (e) {
    throw new MnemeError('refused', `the vector arm needs sqlite-vec, which could not be loaded`, {
      hint: `turn the arm off (unset MNEME_EMBEDDER, or pass --embedder off) to recall lexically, or reinstall mneme so its optional dependency sqlite-vec has a build for ${process.platform}-${process.arch} (${(e as Error).message.split('\n')[0]})`,
    });
  }
}

export class VectorDb implements VectorStore {
  private readonly db: Database.Database;
  private readonly stmts;
  private readonly searchCache = new Map<number, Database.Statement>();

  private constructor(private readonly index: IndexDb) {
    this.db = index.db;
    this.db.exec(DDL);
    this.stmts = {
      put: this.db.prepare(
        'INSERT OR REPLACE INTO vec(embedder, id, rev, hash, v) VALUES (?, ?, ?, ?, ?)',
      ),
      total: this.db.prepare('SELECT count(*) AS n FROM vec WHERE embedder = ?'),
      byHash: this.db.prepare<[string, string], { v: Buffer }>(
        'SELECT v FROM vec INDEXED BY vec_by_hash WHERE embedder = ? AND hash = ? LIMIT 1',
      ),
    };
  }

  static async open(index: IndexDb): Promise<VectorDb> {
    await loadSqliteVec(index.db);
    return new VectorDb(index);
  }

  /**
   * Nearest eligible revisions. The vectors are scanned for the nearest `inner` first (a scan of
   * this table alone, no row lookups), and those are joined to their rows under ELIGIBLE; when
   * fewer than `limit` survive and more vectors exist, the cut widens and finally goes, so the
   * result is always the same as the unbounded query's.
   */
  async search(
    key: string,
    query: Float32Array,
    q: Eligibility,
    limit: number,
  ): Promise<VectorHit[]> {
    if (q.scopes.length === 0) return [];
    let stmt = this.searchCache.get(q.scopes.length);
    if (!stmt) {
      const placeholders = q.scopes.map((_, i) => `@s${i}`).join(', ');
      stmt = this.db.prepare(`SELECT x.d AS d, r.doc AS doc, w.w AS w, r.id AS id, r.rev AS rev,
          r.recorded_at AS recorded_at, r.trust_rank AS trust_rank, r.valid_from AS valid_from FROM (
          SELECT k.id AS id, k.rev AS rev, vec_distance_cosine(k.v, @q) AS d
          FROM vec k WHERE k.embedder = @e ORDER BY d, k.id, k.rev LIMIT @inner) x
        JOIN rev r ON r.id = x.id AND r.rev = x.rev LEFT JOIN weight w ON w.id = r.id
        WHERE r.scope IN (${placeholders}) AND ${ELIGIBLE}
        ORDER BY x.d, x.id, x.rev LIMIT @limit`);
      this.searchCache.set(q.scopes.length, stmt);
    }
    // The same parameters the lexical statement binds for ELIGIBLE.
    const params = eligibilityParams(q, { e: key, q: toBlob(query), limit });
    let rows: VecRow[] = [];
    for (const factor of INNER_TIERS) {
      const inner = factor === Infinity ? -1 : Math.max(limit * factor, 64);
      rows = stmt.all({ ...params, inner }) as typeof rows;
      if (rows.length >= limit || inner === -1 || inner > this.total(key)) break;
    }
    return rows.map(toVectorHit);
  }

  async nearest(
    key: string,
    query: Float32Array,
    scopes: string[],
    limit: number,
  ): Promise<VectorHit[]> {
    if (scopes.length === 0) return [];
    const rows = this.db
      .prepare(
        `SELECT x.d AS d, r.doc AS doc, w.w AS w, r.id AS id, r.rev AS rev,
          r.recorded_at AS recorded_at, r.trust_rank AS trust_rank, r.valid_from AS valid_from
        FROM (SELECT k.id AS id, k.rev AS rev, vec_distance_cosine(k.v, ?) AS d
              FROM vec k JOIN rev s ON s.id = k.id AND s.rev = k.rev
              WHERE k.embedder = ? AND s.scope IN (${scopes.map(() => '?').join(', ')})
              ORDER BY d, k.id, k.rev LIMIT ?) x
        JOIN rev r ON r.id = x.id AND r.rev = x.rev LEFT JOIN weight w ON w.id = r.id
        ORDER BY x.d, x.id, x.rev`,
      )
      .all(toBlob(query), key, ...scopes, limit) as VecRow[];
    return rows.map(toVectorHit);
  }

  /** How many vectors `key` has (bounds the widening above). */
  private total(key: string): number {
    return (this.stmts.total.get(key) as { n: number }).n;
  }

  async missing(key: string, scopes: string[], limit: number): Promise<RevisionView[]> {
    if (scopes.length === 0) return [];
    const marker = fullKey(key, scopes);
    const seq = String(this.index.journalSeq);
    if (this.index.getMeta(marker) === seq) return [];
    // status = 'active' mirrors ELIGIBLE: no other revision can ever be served.
    const rows = this.db
      .prepare(
        `SELECT r.doc AS doc FROM rev r
         WHERE r.scope IN (${scopes.map(() => '?').join(', ')}) AND r.status = 'active'
           AND NOT EXISTS (SELECT 1 FROM vec k WHERE k.embedder = ? AND k.id = r.id AND k.rev = r.rev)
         ORDER BY r.recorded_at DESC, r.rowid DESC LIMIT ?`,
      )
      .all(...scopes, key, limit) as { doc: string }[];
    if (rows.length === 0) this.index.setMeta(marker, seq);
    return rows.map((r) => JSON.parse(r.doc) as RevisionView);
  }

  async cached(key: string, hashes: string[]): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    for (const h of new Set(hashes)) {
      const row = this.stmts.byHash.get(key, h);
      if (row) out.set(h, fromBlob(row.v));
    }
    return out;
  }

  async put(key: string, vectors: StoredVector[]): Promise<void> {
    this.index.transaction(() => {
      for (const v of vectors) this.stmts.put.run(key, v.id, v.rev, v.hash, toBlob(v.vector));
    });
  }

  async prune(key: string, hashOf: (v: RevisionView) => string): Promise<number> {
    const rows = this.db
      .prepare(
        `SELECT k.id AS id, k.rev AS rev, k.hash AS hash, r.doc AS doc
         FROM vec k LEFT JOIN rev r ON r.id = k.id AND r.rev = k.rev WHERE k.embedder = ?`,
      )
      .all(key) as { id: string; rev: number; hash: string; doc: string | null }[];
    const stale = rows.filter((r) => r.doc === null || hashOf(JSON.parse(r.doc)) !== r.hash);
    if (stale.length > 0) {
      const del = this.db.prepare('DELETE FROM vec WHERE embedder = ? AND id = ? AND rev = ?');
      this.index.transaction(() => {
        for (const r of stale) del.run(key, r.id, r.rev);
        this.db.prepare("DELETE FROM meta WHERE k LIKE 'vec_full:%'").run();
      });
    }
    return stale.length;
  }

  async count(key: string, scopes: string[]): Promise<{ revisions: number; withVector: number }> {
    if (scopes.length === 0) return { revisions: 0, withVector: 0 };
    const inScopes = `r.scope IN (${scopes.map(() => '?').join(', ')}) AND r.status = 'active'`;
    const revisions = (
      this.db.prepare(`SELECT count(*) AS n FROM rev r WHERE ${inScopes}`).get(...scopes) as {
        n: number;
      }
    ).n;
    const withVector = (
      this.db
        .prepare(
          `SELECT count(*) AS n FROM rev r JOIN vec k ON k.embedder = ? AND k.id = r.id AND k.rev = r.rev WHERE ${inScopes}`,
        )
        .get(key, ...scopes) as { n: number }
    ).n;
    return { revisions, withVector };
  }

  async keys(): Promise<string[]> {
    const rows = this.db.prepare('SELECT DISTINCT embedder AS e FROM vec ORDER BY e').all() as {
      e: string;
    }[];
    return rows.map((r) => r.e);
  }
}

function toVectorHit(r: VecRow): VectorHit {
  let parsed: RevisionView | undefined;
  return {
    head: {
      id: r.id,
      rev: r.rev,
      recorded_at: r.recorded_at,
      trust: TRUST_LEVELS[r.trust_rank] ?? 'untrusted',
      valid_from: r.valid_from,
    },
    // Parsed only if shown (ranking reads the head).
    get view() {
      return (parsed ??= JSON.parse(r.doc) as RevisionView);
    },
    relevance: 1 - r.d,
    weight: r.w ?? 1,
    distance: r.d,
  };
}

const toBlob = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/** A copy: SQLite's buffer need not be 4-byte aligned for a Float32Array view. */
const fromBlob = (b: Buffer): Float32Array => {
  const out = new Float32Array(b.byteLength / 4);
  new Uint8Array(out.buffer).set(b);
  return out;
};
