// The journal on disk: append-only JSONL segments (journal-segments.ts) plus journal/HEAD, the
// anchor (journal-anchor.ts). A write compares the segments with the checkpoint HEAD records — a
// few stat calls, whatever the store's size — and re-verifies the whole chain only when they
// differ (a crash, a restore, or tampering); a chain that does not verify is recorded in
// .state/journal-broken.json (journal-broken.ts) and every write is refused until a person runs
// `mneme journal repair`.
import fs from 'node:fs';
import path from 'node:path';
import { MnemeError } from '../../core/errors.js';
import {
  EMPTY_HEAD,
  GENESIS,
  chainEntry,
  judgeChain,
  passphraseSetBy,
  verifyChain,
  type AnchorRecord,
  type ChainHead,
  type ChainProblem,
  type ChainScan,
  type JournalBody,
  type JournalEntry,
} from '../../core/journal.js';
import type { VerifyReport } from '../port.js';
import { reportOf } from '../journal-guard.js';
import { appendDurable, syncFile, writeFileAtomic } from './atomic.js';
import {
  ANCHOR_NAME,
  fingerprintOf,
  readAnchor,
  sameFp,
  writeAnchor,
  type Anchor,
  type AnchorRead,
  type Fingerprint,
} from './journal-anchor.js';
import { clearBroken, markStands, readBroken, writeBroken } from './journal-broken.js';
import {
  cutTornLine,
  endsMidLine,
  lastEntry,
  lineOf,
  listSegments,
  parseLine,
  segmentEntries,
} from './journal-segments.js';

export type { Anchor, AnchorRead, Fingerprint } from './journal-anchor.js';

const SEGMENT_BYTES = 32 * 1024 * 1024;

export type ChainHealth =
  /** `cleared`: a recorded break was lifted (the journal verifies again, say restored). */
  | { ok: true; anchor: Anchor; cleared?: boolean }
  /** `detected`: this call found (or re-found, on a changed journal) the break. */
  | { ok: false; firstBad: ChainProblem; detected: boolean };

export interface Evaluation {
  read: AnchorRead;
  scan: ChainScan;
  problem: ChainProblem | null;
  fp: Fingerprint | null;
}

export class JournalFiles {
  private cached: { file: string; size: number; head: ChainHead } | null = null;

  constructor(
    private readonly dir: string,
    private readonly headFile: string,
    private readonly brokenFile: string,
    private readonly durable: boolean,
    private readonly segmentBytes = SEGMENT_BYTES,
  ) {}

  segments(): string[] {
    return listSegments(this.dir);
  }

  /** The last entry of the chain, read from the tail of the last segment (O(1) in store size). */
  head(): ChainHead {
    const segs = this.segments();
    const last = segs[segs.length - 1];
    if (!last) return EMPTY_HEAD;
    const size = fs.statSync(last).size;
    if (this.cached && this.cached.file === last && this.cached.size === size)
      return this.cached.head;
    const entry = lastEntry(last, size);
    const head = entry ? { seq: entry.seq, hash: entry.hash } : this.headBefore(segs.length - 1);
    this.cached = { file: last, size, head };
    return head;
  }

  private headBefore(index: number): ChainHead {
    const segs = this.segments();
    for (let i = index - 1; i >= 0; i--) {
      const f = segs[i]!;
      const e = lastEntry(f, fs.statSync(f).size);
      if (e) return { seq: e.seq, hash: e.hash };
    }
    return EMPTY_HEAD;
  }

  /**
   * Appends one entry chained to the journal's last entry and moves the anchor to it. The caller
   * holds the store lock and has checked the chain (`check`) and passes the anchor it found.
   */
  append(body: JournalBody, anchor: Anchor): JournalEntry {
    return this.appendEntry(chainEntry(this.head(), body), anchor);
  }

  /** Appends an entry already chained (core's commitEntry) and makes it durable at once. */
  appendEntry(entry: JournalEntry, anchor: Anchor): JournalEntry {
    this.appendLine(entry, anchor);
    this.sync();
    return entry;
  }

  /** Segments written since the last `sync`, and whether one of them is new (its directory too). */
  private unsynced = new Set<string>();
  private newSegment = false;

  /**
   * Writes one entry's line (with its revision file's text, `file`, outside the hashed entry)
   * and moves the anchor to it — without a sync: the caller holds the store lock and calls
   * `sync` before it acknowledges the entry (one sync for a whole group commit, commit.ts).
   */
  appendLine(entry: JournalEntry, anchor: Anchor, file?: string): JournalEntry {
    const head = this.head();
    if (entry.seq !== head.seq + 1 || entry.prev !== head.hash)
      throw new MnemeError('internal', `journal entry ${entry.seq} is not chained to the head`);
    fs.mkdirSync(this.dir, { recursive: true });
    const segs = this.segments();
    let seg = segs[segs.length - 1];
    if (!seg || fs.statSync(seg).size > this.segmentBytes) {
      seg = path.join(this.dir, `${String(segs.length + 1).padStart(8, '0')}.jsonl`);
      this.newSegment = true;
    }
    appendDurable(seg, lineOf(entry, file), false);
    this.unsynced.add(seg);
    const size = fs.statSync(seg).size;
    this.cached = { file: seg, size, head: { seq: entry.seq, hash: entry.hash } };
    this.writeAnchor({
      v: 2,
      seq: entry.seq,
      hash: entry.hash,
      pp: passphraseSetBy(entry) ?? this.pendingPp ?? anchor.pp,
      cp: this.fingerprint(),
    });
    if (passphraseSetBy(entry)) this.pendingPp = passphraseSetBy(entry);
    return entry;
  }

  /** A passphrase set by a line not yet synced (the next line's anchor must carry it). */
  private pendingPp: Anchor['pp'] | undefined;

  /** Whether lines were written since the last sync. */
  get dirty(): boolean {
    return this.unsynced.size > 0;
  }

  /**
   * The commit point of everything appended since the last call: one fdatasync per segment
   * written (one, unless a group commit rolled over), and the journal directory's once when a
   * segment was created.
   */
  sync(): void {
    if (this.durable) {
      for (const seg of this.unsynced) syncFile(seg, false);
      if (this.newSegment) syncFile(this.dir, true);
    }
    this.unsynced.clear();
    this.newSegment = false;
    this.pendingPp = undefined;
  }

  /**
   * A purge's rewrite of earlier entries (by seq), each keeping its hash: every segment holding
   * one is rewritten (temp + rename), then the anchor records the segments' new identity. The
   * caller holds the lock and has appended the purge entry that vouches for the rewrites.
   */
  rewriteEntries(rewritten: ReadonlyMap<number, JournalEntry>, dropFilesOf?: string): void {
    if (rewritten.size === 0 && dropFilesOf === undefined) return;
    for (const file of this.segments()) {
      const text = fs.readFileSync(file, 'utf8');
      let changed = false;
      const lines = text.split('\n').map((line) => {
        if (line.trim() === '') return line;
        const parsed = parseLine(line);
        if (!parsed.entry) return line;
        const next = rewritten.get(parsed.entry.seq);
        // The revision text a line carries for the purged memory goes with it (its history
        // files are the purge's skeletons, written durably by the purge itself).
        const drop = parsed.file !== undefined && parsed.entry.target?.id === dropFilesOf;
        if (!next && !drop) return line;
        changed = true;
        return lineOf(next ?? parsed.entry, drop ? undefined : parsed.file).slice(0, -1);
      });
      if (changed) writeFileAtomic(file, lines.join('\n'), this.durable);
    }
    this.cached = null;
    const read = this.readAnchor();
    if (read.state === 'ok') this.writeAnchor({ ...read.anchor, cp: this.fingerprint() });
  }

  // ---- the anchor -------------------------------------------------------------------------

  writeAnchor(a: Anchor): void {
    writeAnchor(this.headFile, a);
  }

  readAnchor(): AnchorRead {
    return readAnchor(this.headFile);
  }

  /** The segments' stat identity now (null when there is no segment). */
  fingerprint(): Fingerprint | null {
    return fingerprintOf(this.segments());
  }

  // ---- the refusal record -----------------------------------------------------------------

  hasBrokenMark(): boolean {
    return fs.existsSync(this.brokenFile);
  }

  clearBroken(): void {
    clearBroken(this.brokenFile);
  }

  // ---- checking the chain -------------------------------------------------------------------

  /**
   * The answer when it can be had without reading the journal: broken as recorded (nothing
   * changed since), or intact (the segments are exactly as the last commit left them and their
   * last entry is the anchored one). Null means a full check is needed.
   */
  fast(): ChainHealth | null {
    const fp = this.fingerprint();
    const mark = readBroken(this.brokenFile);
    if (mark)
      return markStands(mark, fp, this.headFile)
        ? { ok: false, firstBad: mark.firstBad, detected: false }
        : null;
    const read = this.readAnchor();
    if (read.state !== 'ok' || read.legacy) return null;
    const a = read.anchor;
    if (fp === null)
      return a.seq === 0 && a.hash === GENESIS && a.cp === null ? { ok: true, anchor: a } : null;
    if (!sameFp(a.cp, fp)) return null;
    const tail = this.head();
    return tail.seq === a.seq && tail.hash === a.hash ? { ok: true, anchor: a } : null;
  }

  /** Reads the whole journal and measures it against the anchor (no side effects). */
  evaluate(hasData: () => boolean): Evaluation {
    const fp = this.fingerprint();
    const read = this.readAnchor();
    const anchor: AnchorRecord | null =
      read.state === 'ok'
        ? {
            seq: read.anchor.seq,
            hash: read.anchor.hash,
            ...(read.legacy ? {} : { passphrase: read.anchor.pp }),
          }
        : null;
    const scan = verifyChain(this.entries(), { anchor });
    const problem = judgeChain(scan, anchor, { allowExtension: true, hasData, name: ANCHOR_NAME });
    return { read, scan, problem, fp };
  }

  /**
   * Under the store lock: is the chain intact? Usually answered by `fast()`. Otherwise the whole
   * journal is verified against the anchor: an intact journal (possibly one a crash left ahead of
   * its anchor) is re-anchored; a broken one is recorded so later writes refuse at once.
   */
  check(hasData: () => boolean, opts: { full?: boolean } = {}): ChainHealth {
    if (!opts.full) {
      const quick = this.fast();
      if (quick) return quick;
    }
    const ev = this.evaluate(hasData);
    if (ev.problem) {
      const prior = readBroken(this.brokenFile);
      const same =
        prior !== null &&
        markStands(prior, ev.fp, this.headFile) &&
        prior.firstBad.problem === ev.problem.problem;
      if (!same) writeBroken(this.brokenFile, this.headFile, ev.problem, ev.fp);
      return { ok: false, firstBad: ev.problem, detected: !same };
    }
    const anchor: Anchor = {
      v: 2,
      seq: ev.scan.tail.seq,
      hash: ev.scan.tail.hash,
      pp: ev.scan.passphrase,
      cp: ev.fp,
    };
    const before = ev.read.state === 'ok' ? ev.read.anchor : null;
    if (before === null || JSON.stringify(before) !== JSON.stringify(anchor))
      this.writeAnchor(anchor);
    const cleared = this.hasBrokenMark();
    this.clearBroken();
    return { ok: true, anchor, cleared };
  }

  verify(hasData: () => boolean): VerifyReport {
    const ev = this.evaluate(hasData);
    return reportOf(ev.scan, ev.problem);
  }

  // ---- reading ------------------------------------------------------------------------------

  entries(): Generator<{ entry: JournalEntry | null; where: string; raw: string; file?: string }> {
    return segmentEntries(this.segments());
  }

  /** The entries after `afterSeq` with the revision text their lines carry (recovery). */
  linesAfter(afterSeq: number): { entry: JournalEntry; file?: string }[] {
    const out: { entry: JournalEntry; file?: string }[] = [];
    for (const { entry, file } of this.entries())
      if (entry && entry.seq > afterSeq) out.push(file !== undefined ? { entry, file } : { entry });
    return out;
  }

  all(): JournalEntry[] {
    const out: JournalEntry[] = [];
    for (const { entry } of this.entries()) if (entry) out.push(entry);
    return out;
  }

  /** Whether the last segment ends mid-line (a crash or a full disk cut an append short). */
  hasTornTail(): boolean {
    const segs = this.segments();
    const last = segs[segs.length - 1];
    return last ? endsMidLine(last) : false;
  }

  /** Drops an unterminated last line left by a crash mid-append (it was never committed). */
  repairTornTail(): boolean {
    const segs = this.segments();
    const last = segs[segs.length - 1];
    if (!last) return false;
    if (!cutTornLine(last)) return false;
    this.cached = null;
    return true;
  }
}
