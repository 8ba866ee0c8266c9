// What the file store's concept modules share: its directory layout, its index, its journal,
// its tombstones file and its write settings. FileStore builds one at open and hands it to
// recovery, rebuild, integrity, hand-edit detection and the journal glue; each of those takes
// only this, never the class.
import type { IndexDb } from './index-db.js';
import type { JournalFiles } from './journal-files.js';
import type { Layout } from './layout.js';
import type { TombstoneLog } from './effects.js';

export interface FileParts {
  readonly layout: Layout;
  readonly index: IndexDb;
  readonly journalFiles: JournalFiles;
  readonly tombstones: TombstoneLog;
  /** fsync revision files and journal lines. */
  readonly durable: boolean;
  /** Test hook: called at named points inside a commit and per lineage in a rebuild. */
  readonly fault: (name: string) => void;
  /** Whether the store holds anything a journal should account for (a missing one fails closed). */
  readonly hasData: () => boolean;
}
