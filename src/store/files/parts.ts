// What the file store's concept modules share: its directory layout, its index, its journal,
// its tombstones file and its write settings. FileStore builds one at open and hands it to
// recovery, rebuild, integrity, hand-edit detection and the journal glue; each of those takes
// only this, never the class.
import type { JournalEntry } from '../../core/journal.js';
import type { Proposal } from '../../core/proposal.js';
import type { Revision } from '../../core/types.js';
import type { CommitRequest } from '../port.js';
import type { IndexDb } from './index-db.js';
import type { JournalFiles } from './journal-files.js';
import type { Layout } from './layout.js';
import type { TombstoneLog } from './effects.js';

export interface FileParts {
  readonly layout: Layout;
  readonly index: IndexDb;
  readonly journalFiles: JournalFiles;
  readonly tombstones: TombstoneLog;
  /** The commits of the group the lock holder is making (commit.ts), until its sync and files. */
  readonly group: GroupState;
  /** fsync journal lines (the commit point); revision files are never synced (commit.ts). */
  readonly durable: boolean;
  /** Test hook: called at named points inside a commit and per lineage in a rebuild. */
  readonly fault: (name: string) => void;
  /** Whether the store holds anything a journal should account for (a missing one fails closed). */
  readonly hasData: () => boolean;
}

/** A commit whose journal line is written and whose files wait for the group's sync. */
export interface StagedCommit {
  entry: JournalEntry;
  revision: Revision | null;
  /** The revision file's text, as the journal line carries it. */
  text: string | undefined;
  /** Current-file path before the write (null for a new lineage). */
  beforePath: string | null;
  /** Its index rows went in (else the group leaves journal_seq behind for catch-up). */
  indexed: boolean;
  tombstone?: CommitRequest['tombstone'];
  proposal?: Proposal;
}

export interface GroupState {
  staged: StagedCommit[];
}
