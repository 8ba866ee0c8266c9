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

/**
 * What a commit records beside its body: a tombstone armed or lifted, a proposal's new state.
 * Both become part of the hashed entry (under `data`), so the journal alone can replay them.
 */
export interface EntryEffects {
  tombstone?: unknown;
  proposal?: unknown;
}

/**
 * The canonical hashed form of a commit and its chained entry, built once for every adapter:
 * the body with the commit's effects under `data.tombstone` / `data.proposal`, chained to `head`.
 */
export function commitEntry(
  head: ChainHead,
  c: { body: JournalBody } & EntryEffects,
): JournalEntry {
  const { tombstone, proposal } = c;
  const body: JournalBody =
    tombstone || proposal
      ? {
          ...c.body,
          data: {
            ...(c.body.data ?? {}),
            ...(tombstone ? { tombstone } : {}),
            ...(proposal ? { proposal } : {}),
          },
        }
      : c.body;
  return chainEntry(head, body);
}

/** sha256 of an entry's canonical JSON without its hash: what its hash is computed from. */
export function entryContentHash(e: JournalEntry): string {
  const { hash: _hash, ...unsigned } = e;
  return sha256(canonicalJson(unsigned));
}

export function entryHashValid(e: JournalEntry): boolean {
  return entryContentHash(e) === e.hash;
}

/** The op of the entry a person's `mneme purge` appends (see verifyChain and core/purge.ts). */
export const PURGE_OP = 'purge';

/**
 * An earlier entry a purge rewrote to erase a value from it: its seq, and the content hash of
 * the entry as rewritten. The rewritten entry keeps its original `hash` (so the chain still links
 * through it); the purge entry, itself chained, vouches for exactly this rewritten content.
 */
export interface RedactedEntry {
  seq: number;
  content: string;
}

/** The skeleton hashes a purge entry records for the revisions it purged. */
export function purgedRevisionsOf(e: Pick<JournalEntry, 'op' | 'data'>): RevisionRef[] {
  if (e.op !== PURGE_OP) return [];
  const list = (e.data as { revisions?: unknown } | undefined)?.revisions;
  if (!Array.isArray(list)) return [];
  return (list as Partial<RevisionRef>[]).filter(
    (r): r is RevisionRef => typeof r?.rev === 'number' && typeof r.hash === 'string',
  );
}

/**
 * id#rev → the hash its revision must have: what its journal entry recorded, or, once a purge
 * rewrote it to its skeleton, the skeleton's hash that purge entry recorded.
 */
export function journaledHashes(entries: Iterable<JournalEntry>): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of entries) {
    if (e.target && e.after) out.set(`${e.target.id}#${e.after.rev}`, e.after.hash);
    if (e.target) for (const r of purgedRevisionsOf(e)) out.set(`${e.target.id}#${r.rev}`, r.hash);
  }
  return out;
}

/** The entries a purge entry vouches for, if it is a `purge` entry with a usable payload. */
export function redactionsOf(e: Pick<JournalEntry, 'op' | 'data'>): RedactedEntry[] {
  if (e.op !== PURGE_OP) return [];
  const list = (e.data as { redacted?: unknown } | undefined)?.redacted;
  if (!Array.isArray(list)) return [];
  return (list as Partial<RedactedEntry>[]).filter(
    (r): r is RedactedEntry => typeof r?.seq === 'number' && typeof r.content === 'string',
  );
}

export interface ChainProblem {
  seq: number | null;
  position: number;
  problem: string;
}

/** The op of the entry a person's `mneme journal repair` appends (see verifyChain). */
export const REPAIR_OP = 'journal_repair';

/** A review passphrase as the journal and its anchor record it (scrypt salt and hash). */
export interface PassphraseRecord {
  salt: string;
  hash: string;
}

/** The passphrase an entry sets, if it is a `set_passphrase` entry with a usable payload. */
export function passphraseSetBy(e: Pick<JournalEntry, 'op' | 'data'>): PassphraseRecord | null {
  if (e.op !== 'set_passphrase') return null;
  const d = e.data as { salt?: unknown; hash?: unknown } | undefined;
  return typeof d?.salt === 'string' && typeof d.hash === 'string'
    ? { salt: d.salt, hash: d.hash }
    : null;
}

export const samePassphrase = (a: PassphraseRecord | null, b: PassphraseRecord | null): boolean =>
  a === null || b === null ? a === b : a.salt === b.salt && a.hash === b.hash;

/** One place where the chain does not hold: its line's position, and that line's own hash. */
export interface ChainBreak extends ChainProblem {
  /** sha256 of the raw line (or row), so a repair acknowledges this exact damage and no other. */
  line: string;
  /** The chain head just before it, and how many entries verified before it. */
  headBefore: ChainHead;
  /** For an entry whose hash does not match its content: the content's hash (a purge vouches). */
  content?: string;
}

/** What `mneme journal repair` records about a break it acknowledges. */
export interface AcknowledgedBreak {
  position: number;
  line: string;
  seq: number | null;
  problem: string;
}

export interface ChainScan {
  /** The first break no later repair entry acknowledges, or null. */
  problem: ChainProblem | null;
  /** The head before that problem, or the journal's last entry. */
  head: ChainHead;
  /** Entries that verified before that problem, or all of them. */
  count: number;
  /** Lines read, and the last readable entry (what a next entry chains to). */
  lines: number;
  tail: ChainHead;
  breaks: ChainBreak[];
  /** Breaks a repair entry acknowledged (the chain verifies with them). */
  repaired: ChainBreak[];
  /** Position of the entry equal to `opts.anchor`, if the journal holds it. */
  anchorAt: number | null;
  /** The newest review passphrase the journal sets, overall and as of the anchored entry. */
  passphrase: PassphraseRecord | null;
  passphraseAtAnchor: PassphraseRecord | null;
}

/**
 * Checks a sequence of entries in file order. Every break is collected (the scan goes on from
 * the entry after it), and a break counts as repaired only when a later, itself valid,
 * `journal_repair` entry names its position and its line's hash — so a repair acknowledges the
 * damage a person saw and nothing done afterwards.
 */
export function verifyChain(
  entries: Iterable<{ entry: JournalEntry | null; where: string; raw?: string }>,
  opts: { anchor?: ChainHead | null } = {},
): ChainScan {
  let head = EMPTY_HEAD;
  let position = 0;
  let passphrase: PassphraseRecord | null = null;
  let passphraseAtAnchor: PassphraseRecord | null = null;
  let anchorAt: number | null = null;
  const breaks: ChainBreak[] = [];
  const acks = new Map<string, number>();
  // Entries a later purge rewrote (seq:content → the purge entry's position).
  const vouched = new Map<string, number>();
  for (const { entry, where, raw } of entries) {
    position++;
    let problem: string | null = null;
    if (entry === null) problem = `${where}: not a valid journal line`;
    else if (entry.seq !== head.seq + 1)
      problem = `${where}: seq ${entry.seq} follows ${head.seq} (an entry was deleted or reordered)`;
    else if (entry.prev !== head.hash)
      problem = `${where}: seq ${entry.seq} does not chain to the previous entry's hash`;
    else if (!entryHashValid(entry))
      problem = `${where}: seq ${entry.seq} was edited (its hash does not match its content)`;
    if (problem !== null) {
      breaks.push({
        seq: entry?.seq ?? null,
        position,
        problem,
        line: sha256(raw ?? JSON.stringify(entry)),
        headBefore: head,
        ...(entry && entry.seq === head.seq + 1 && entry.prev === head.hash
          ? { content: entryContentHash(entry) }
          : {}),
      });
    }
    if (entry === null) continue;
    head = { seq: entry.seq, hash: entry.hash };
    const set = passphraseSetBy(entry);
    if (set) passphrase = set;
    if (opts.anchor && entry.seq === opts.anchor.seq && entry.hash === opts.anchor.hash) {
      anchorAt = position;
      passphraseAtAnchor = passphrase;
    }
    if (problem === null)
      for (const r of redactionsOf(entry)) vouched.set(`${r.seq}:${r.content}`, position);
    if (entry.op === REPAIR_OP && problem === null) {
      const list = (entry.data as { acknowledges?: unknown } | undefined)?.acknowledges;
      if (Array.isArray(list))
        for (const a of list as Partial<AcknowledgedBreak>[])
          if (typeof a?.position === 'number' && typeof a.line === 'string')
            acks.set(`${a.position}:${a.line}`, position);
    }
  }
  const repaired: ChainBreak[] = [];
  const open: ChainBreak[] = [];
  for (const b of breaks) {
    // Rewritten by a later purge to exactly this content: the chain holds through it.
    const by = b.content !== undefined ? vouched.get(`${b.seq}:${b.content}`) : undefined;
    if (by !== undefined && by > b.position) continue;
    const at = acks.get(`${b.position}:${b.line}`);
    (at !== undefined && at > b.position ? repaired : open).push(b);
  }
  const first = open[0] ?? null;
  return {
    problem: first && { seq: first.seq, position: first.position, problem: first.problem },
    head: first ? first.headBefore : head,
    count: first ? first.position - 1 : position,
    lines: position,
    tail: head,
    breaks: open,
    repaired,
    anchorAt,
    passphrase,
    passphraseAtAnchor,
  };
}

/**
 * What a store keeps apart from the journal so that cutting the journal's tail shows: the head
 * it last committed, and the review passphrase as of that head. `passphrase` is undefined when
 * the anchor predates recording it.
 */
export interface AnchorRecord {
  seq: number;
  hash: string;
  passphrase?: PassphraseRecord | null;
}

/**
 * The first problem with a scanned journal measured against its anchor (null when it holds):
 * the chain itself, then the anchor — missing, past the journal's end (the tail was cut), not in
 * the journal (replaced), or carrying a review passphrase the journal no longer sets. With
 * `allowExtension`, entries after the anchored one are accepted (a crash between the journal
 * append and the anchor update leaves the anchor behind a valid tail).
 */
export function judgeChain(
  scan: ChainScan,
  anchor: AnchorRecord | null,
  opts: { allowExtension: boolean; hasData: () => boolean; name: string },
): ChainProblem | null {
  if (scan.problem) return scan.problem;
  const name = opts.name;
  if (scan.lines === 0) {
    if (anchor === null)
      return opts.hasData()
        ? {
            seq: 1,
            position: 1,
            problem: `the journal and ${name} are both missing, but the store holds memories (the journal was deleted)`,
          }
        : null;
    if (anchor.seq > 0)
      return {
        seq: 1,
        position: 1,
        problem: `${name} records seq ${anchor.seq} but the journal is empty (its entries were deleted)`,
      };
    return null;
  }
  const cut = { seq: scan.tail.seq + 1, position: scan.lines + 1 };
  if (anchor === null)
    return {
      ...cut,
      problem: `${name} is missing or unreadable, so nothing shows whether entries were cut from the journal's tail`,
    };
  const fromEmpty = anchor.seq === 0 && anchor.hash === GENESIS;
  if (!fromEmpty && scan.anchorAt === null) {
    return anchor.seq > scan.tail.seq
      ? {
          ...cut,
          problem: `${name} records seq ${anchor.seq} but the journal ends at seq ${scan.tail.seq} (entries were deleted from the tail)`,
        }
      : {
          seq: anchor.seq,
          position: scan.lines,
          problem: `the journal does not hold the entry ${name} records (seq ${anchor.seq}): it was replaced or edited`,
        };
  }
  if (!opts.allowExtension && (scan.tail.seq !== anchor.seq || scan.tail.hash !== anchor.hash))
    return {
      seq: anchor.seq + 1,
      position: scan.lines,
      problem: `the journal runs past ${name} (seq ${anchor.seq}) to seq ${scan.tail.seq}`,
    };
  if (anchor.passphrase !== undefined) {
    const journaled = fromEmpty ? null : scan.passphraseAtAnchor;
    if (!samePassphrase(journaled, anchor.passphrase))
      return {
        seq: null,
        position: scan.anchorAt ?? 0,
        problem:
          anchor.passphrase !== null
            ? `${name} records a review passphrase that the journal no longer sets (its set_passphrase entry was cut or edited)`
            : `the journal sets a review passphrase that ${name} does not record (${name} was rewritten)`,
      };
  }
  return null;
}
