// The mutation journal's entries and their hash chain (invariant 4). Each entry's hash covers
// its canonical JSON (without the hash) and the previous entry's hash, so an edit, a deletion
// or a reordering breaks the chain at the first bad entry.
import { canonicalJson, sha256 } from './hash.js';
import type { Actor } from './types.js';

export const GENESIS = '0'.repeat(64);

export interface RevisionRef {
  rev: number;
  hash: string;
}

export interface JournalBody {
  at: string;
  actor: Actor;
  op: string;
  target: { id: string; scope: string } | null;
  before: RevisionRef | null;
  after: RevisionRef | null;
  reason: string | null;
  idem: string | null;
  /** Hash of the request, for idempotency replays and for audit. */
  req: string | null;
  /** Anything else the op records (a refusal's code, a proposal id, …). */
  data?: Record<string, unknown>;
}

export interface JournalEntry extends JournalBody {
  seq: number;
  prev: string;
  hash: string;
}

export interface ChainHead {
  seq: number;
  hash: string;
}

export const EMPTY_HEAD: ChainHead = { seq: 0, hash: GENESIS };

export function chainEntry(head: ChainHead, body: JournalBody): JournalEntry {
  const unsigned = { ...body, seq: head.seq + 1, prev: head.hash };
  return { ...unsigned, hash: sha256(canonicalJson(unsigned)) };
}

export function entryHashValid(e: JournalEntry): boolean {
  const { hash, ...unsigned } = e;
  return sha256(canonicalJson(unsigned)) === hash;
}

export interface ChainProblem {
  seq: number | null;
  position: number;
  problem: string;
}

/** Checks a sequence of entries in file order; returns the first problem or null. */
export function verifyChain(
  entries: Iterable<{ entry: JournalEntry | null; where: string; raw?: string }>,
): { problem: ChainProblem | null; head: ChainHead; count: number } {
  let head = EMPTY_HEAD;
  let position = 0;
  for (const { entry, where } of entries) {
    position++;
    if (entry === null) {
      return {
        problem: { seq: null, position, problem: `${where}: not a valid journal line` },
        head,
        count: position - 1,
      };
    }
    if (entry.seq !== head.seq + 1) {
      return {
        problem: {
          seq: entry.seq,
          position,
          problem: `${where}: seq ${entry.seq} follows ${head.seq} (an entry was deleted or reordered)`,
        },
        head,
        count: position - 1,
      };
    }
    if (entry.prev !== head.hash) {
      return {
        problem: {
          seq: entry.seq,
          position,
          problem: `${where}: seq ${entry.seq} does not chain to the previous entry's hash`,
        },
        head,
        count: position - 1,
      };
    }
    if (!entryHashValid(entry)) {
      return {
        problem: {
          seq: entry.seq,
          position,
          problem: `${where}: seq ${entry.seq} was edited (its hash does not match its content)`,
        },
        head,
        count: position - 1,
      };
    }
    head = { seq: entry.seq, hash: entry.hash };
  }
  return { problem: null, head, count: position };
}
