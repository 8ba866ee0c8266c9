// The SQLite index's schema: its tables and indexes (DDL), the version an older index is
// dropped and rebuilt under, opening the file (pragmas, creating or migrating the schema only
// when needed), and the IMMEDIATE write transaction every write to the index runs in.
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { MnemeError } from '../../core/errors.js';
import { openDatabase } from './sqlite.js';

// 2: rev.w (the weight, copied from the weight table), rev.source_path and rev.applies, and the
// indexes injection reads through. 3: fts holds the index tokens of core/text.ts (indexText),
// split at spaces by FTS5's ascii tokenizer, so both stores count the same stemmed words.
export const SCHEMA_VERSION = '3';

/**
 * The conditions of injection that never change while a row stands (a partial index's WHERE
 * must be implied word for word by the query that uses it: injectCandidates repeats it).
 */
export const INJECTABLE = `is_current = 1 AND status = 'active' AND lineage_end_at IS NULL
  AND quarantine IS NULL AND review = 'none'`;

/** Rows a pre-edit block can hold: bound to a file, or carrying applies_to globs. */
export const FILE_BOUND = '(source_path IS NOT NULL OR applies = 1)';

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
  abstract, body, extra, tokenize = 'ascii'
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

/**
 * Opens (creating if need be) the index file. `busyTimeoutMs` bounds every wait for SQLite's own
 * lock (it is set when the file is opened, before the first statement). Opening takes the write
 * lock only when the schema is missing or older: an open that always took it would, for an
 * instant, hold up every other process's write to the index.
 */
export function openIndexDatabase(file: string, busyTimeoutMs: number): Database.Database {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = openDatabase(file, { timeout: busyTimeoutMs });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('mmap_size = 1073741824');
  if (!schemaInPlace(db))
    immediate(db, () => {
      if (olderSchema(db)) for (const t of TABLES) db.exec(`DROP TABLE IF EXISTS ${t}`);
      db.exec(DDL);
    });
  return db;
}

/**
 * A write transaction, begun IMMEDIATE: it waits (up to the busy timeout) for the write lock
 * before reading anything. A deferred one that read first could not wait when it came to
 * write while another connection held the lock — SQLite answers `database is locked` at once.
 * Past the bound the caller gets a `locked` error.
 */
export function immediate<T>(db: Database.Database, fn: () => T): T {
  try {
    return db.transaction(fn).immediate();
  } catch (e) {
    if (isBusy(e))
      throw new MnemeError('locked', 'the index is busy: another process held it too long', {
        hint: 'retry shortly',
        details: { index: 'busy' },
      });
    throw e;
  }
}

/** Every table and index DDL creates exists, under the current schema version. */
function schemaInPlace(db: Database.Database): boolean {
  const names = new Set(
    (db.prepare('SELECT name FROM sqlite_master').all() as { name: string }[]).map((r) => r.name),
  );
  return DDL_OBJECTS.every((n) => names.has(n)) && getMetaRaw(db, 'schema') === SCHEMA_VERSION;
}

function getMetaRaw(db: Database.Database, k: string): string | null {
  const row = db.prepare('SELECT v FROM meta WHERE k = ?').get(k) as { v: string } | undefined;
  return row?.v ?? null;
}

/** An index written by an older schema: a cache, so it is dropped and rebuilt from files. */
function olderSchema(db: Database.Database): boolean {
  const meta = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'")
    .get();
  if (!meta) return false;
  const row = db.prepare("SELECT v FROM meta WHERE k = 'schema'").get() as
    { v: string } | undefined;
  return row !== undefined && row.v !== SCHEMA_VERSION;
}
