// The journal position the embedded store's index was last at, read without opening the store
// (doctor compares it with the journal to tell whether opening had to catch the index up).
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { Layout } from './layout.js';
import { INDEX_BUSY_TIMEOUT_MS } from './sqlite.js';

export function peekIndexSeq(storeDir: string): number | null {
  const file = new Layout(storeDir).indexFile;
  if (!fs.existsSync(file)) return null;
  try {
    const db = new Database(file, {
      readonly: true,
      fileMustExist: true,
      timeout: INDEX_BUSY_TIMEOUT_MS,
    });
    try {
      const row = db.prepare("SELECT v FROM meta WHERE k = 'journal_seq'").get() as
        { v: string } | undefined;
      return row ? Number(row.v) : 0;
    } finally {
      db.close();
    }
  } catch {
    return null;
  }
}
