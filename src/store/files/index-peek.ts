// The journal position the embedded store's index was last at, read without opening the store
// (doctor compares it with the journal to tell whether opening had to catch the index up).
// better-sqlite3 is loaded when a peek happens (openDatabase), not when the module is: every
// command's start passes through the composition root, which re-exports this.
import fs from 'node:fs';
import { Layout } from './layout.js';
import { openDatabase } from './sqlite.js';

export function peekIndexSeq(storeDir: string): number | null {
  const file = new Layout(storeDir).indexFile;
  if (!fs.existsSync(file)) return null;
  try {
    const db = openDatabase(file, { readonly: true, fileMustExist: true });
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
