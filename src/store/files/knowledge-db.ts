// The files adapter's knowledge index: its own SQLite database (.index/knowledge.db) beside the
// memory index, so it can be deleted at will and never touches a memory's rows. Chunks are kept
// with their FTS5 row (the index tokens of core/text.ts, split by the ascii tokenizer as the memory
// index does); every statement carries the scope. The file is created by the first write only:
// a recall in a project that never refreshed reads nothing and writes nothing.
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { ftsMatchExpression, indexText, type QueryTerm } from '../../core/text.js';
import type { KnowledgeChunkRow, KnowledgeFile, KnowledgeHit, KnowledgeStore } from '../port.js';
import { immediate } from './index-schema.js';
import { openDatabase } from './sqlite.js';

const DDL = `
CREATE TABLE IF NOT EXISTS kfile(
  scope TEXT NOT NULL, path TEXT NOT NULL, hash TEXT NOT NULL, bytes INTEGER NOT NULL,
  chunks INTEGER NOT NULL, skipped TEXT, PRIMARY KEY(scope, path)
);
CREATE TABLE IF NOT EXISTS kchunk(
  id INTEGER PRIMARY KEY, scope TEXT NOT NULL, path TEXT NOT NULL, ord INTEGER NOT NULL,
  line_from INTEGER NOT NULL, line_to INTEGER NOT NULL, trail TEXT NOT NULL, text TEXT NOT NULL,
  hash TEXT NOT NULL, UNIQUE(scope, path, ord)
);
CREATE VIRTUAL TABLE IF NOT EXISTS kfts USING fts5(trail, text, tokenize = 'ascii');
`;

type HitRow = KnowledgeHit & { id: number };

export class KnowledgeDb implements KnowledgeStore {
  private db: Database.Database | null = null;
  /** Prepared once: preparing a statement over the FTS5 table re-reads its configuration. */
  private searchStmt: Database.Statement<[string, string, number], HitRow> | null = null;

  constructor(
    private readonly file: string,
    private readonly busyTimeoutMs: number,
  ) {}

  /** The database, opened (and created when `create`) on first use; null when absent. */
  private open(create: boolean): Database.Database | null {
    if (this.db) return this.db;
    if (!create && !fs.existsSync(this.file)) return null;
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const db = openDatabase(this.file, { timeout: this.busyTimeoutMs });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(DDL);
    this.db = db;
    return db;
  }

  async files(scope: string): Promise<KnowledgeFile[]> {
    const db = this.open(false);
    if (!db) return [];
    return db
      .prepare<[string], KnowledgeFile>(
        'SELECT path, hash, bytes, chunks, skipped FROM kfile WHERE scope = ? ORDER BY path',
      )
      .all(scope);
  }

  async change(
    scope: string,
    put: { file: KnowledgeFile; chunks: KnowledgeChunkRow[] }[],
    remove: string[],
  ): Promise<{ added: number; removed: number }> {
    if (put.length === 0 && remove.length === 0) return { added: 0, removed: 0 };
    const db = this.open(true)!;
    const ids = db.prepare<[string, string], { id: number }>(
      'SELECT id FROM kchunk WHERE scope = ? AND path = ?',
    );
    const delFts = db.prepare('DELETE FROM kfts WHERE rowid = ?');
    const delChunks = db.prepare('DELETE FROM kchunk WHERE scope = ? AND path = ?');
    const delFile = db.prepare('DELETE FROM kfile WHERE scope = ? AND path = ?');
    const insFile = db.prepare(
      'INSERT INTO kfile(scope, path, hash, bytes, chunks, skipped) VALUES (?, ?, ?, ?, ?, ?)',
    );
    const insChunk = db.prepare(`INSERT INTO kchunk(scope, path, ord, line_from, line_to, trail,
      text, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    const insFts = db.prepare('INSERT INTO kfts(rowid, trail, text) VALUES (?, ?, ?)');
    return immediate(db, () => {
      let removed = 0;
      const drop = (p: string) => {
        for (const { id } of ids.all(scope, p)) {
          delFts.run(id);
          removed++;
        }
        delChunks.run(scope, p);
        delFile.run(scope, p);
      };
      for (const p of remove) drop(p);
      let added = 0;
      for (const { file, chunks } of put) {
        drop(file.path);
        insFile.run(scope, file.path, file.hash, file.bytes, file.chunks, file.skipped);
        for (const c of chunks) {
          const r = insChunk.run(
            scope,
            file.path,
            c.ord,
            c.line_from,
            c.line_to,
            c.trail,
            c.text,
            file.hash,
          );
          insFts.run(r.lastInsertRowid, indexText(c.trail), indexText(c.text));
          added++;
        }
      }
      return { added, removed };
    });
  }

  async search(scope: string, terms: QueryTerm[], limit: number): Promise<KnowledgeHit[]> {
    const match = ftsMatchExpression(terms);
    const db = this.open(false);
    if (!match || !db) return [];
    // The scope is a predicate of the same statement: another project's chunks are never read.
    // The best ids first (sorting only ids and ranks), then the texts of those few: a sort that
    // carried every matching chunk's text cost more than the search.
    this.searchStmt ??= db.prepare<[string, string, number], HitRow>(
      `WITH top AS (
         SELECT c.id, bm25(kfts, 2.0, 1.0) AS r, c.path AS p, c.ord AS o
         FROM kfts JOIN kchunk c ON c.id = kfts.rowid
         WHERE kfts MATCH ? AND c.scope = ?
         ORDER BY r, p, o LIMIT ?)
       SELECT c.id, c.path, c.ord, c.line_from, c.line_to, c.trail, c.text, c.hash,
         f.trail AS trail_tokens, f.text AS text_tokens
       FROM top JOIN kchunk c ON c.id = top.id JOIN kfts f ON f.rowid = top.id
       ORDER BY top.r, top.p, top.o`,
    );
    const rows = this.searchStmt.all(match, scope, limit);
    return rows.map(({ id: _id, ...hit }) => hit);
  }

  async clear(scope: string): Promise<number> {
    const db = this.open(false);
    if (!db) return 0;
    return immediate(db, () => {
      const ids = db
        .prepare<[string], { id: number }>('SELECT id FROM kchunk WHERE scope = ?')
        .all(scope);
      const delFts = db.prepare('DELETE FROM kfts WHERE rowid = ?');
      for (const { id } of ids) delFts.run(id);
      db.prepare('DELETE FROM kchunk WHERE scope = ?').run(scope);
      db.prepare('DELETE FROM kfile WHERE scope = ?').run(scope);
      return ids.length;
    });
  }

  async size(): Promise<number | null> {
    let total = 0;
    for (const f of [this.file, `${this.file}-wal`]) {
      try {
        total += fs.statSync(f).size;
      } catch {
        /* absent */
      }
    }
    return total;
  }

  close(): void {
    this.db?.close();
    this.db = null;
    this.searchStmt = null;
  }
}
