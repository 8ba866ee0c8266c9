// The journal on disk: append-only JSONL segments plus journal/HEAD, the anchor. HEAD records
// the last committed entry (so a cut tail shows), the review passphrase as of that entry (so
// dropping its `set_passphrase` line shows), and a checkpoint: the stat identity (size, inode,
// change time) of the segments as they were right after that commit. A write compares the
// segments with the checkpoint — a few stat calls, whatever the store's size — and re-verifies
// the whole chain only when they differ (a crash, a restore, or tampering); a chain that does
// not verify is recorded in .state/journal-broken.json and every write is refused until a
// person runs `mneme journal repair`.
import fs from 'node:fs';
import path from 'node:path';
import { sha256 } from '../../core/hash.js';
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
  type PassphraseRecord,
} from '../../core/journal.js';
import type { VerifyReport } from '../port.js';
import { reportOf } from '../journal-guard.js';
import { appendDurable, readIfExists, writeFileAtomic } from './atomic.js';

const SEGMENT_BYTES = 32 * 1024 * 1024;
/**
 * HEAD is one record of this many bytes (JSON padded with spaces), overwritten in place: one
 * sector, so a crash leaves the old record or the new one.
 */
const HEAD_BYTES = 512;
const ANCHOR_NAME = 'journal/HEAD';

/** The segments' stat identity right after a commit; any later change to them changes it. */
export interface Fingerprint {
  seg: string;
  size: number;
  ino: string;
  ctime: string;
  /** Hash of the earlier (sealed) segments' names and stat identities ('' when there are none). */
  sealed: string;
}

/** The HEAD record. Version 1 held only seq and hash; it is upgraded after a full verify. */
export interface Anchor {
  v: 2;
  seq: number;
  hash: string;
  pp: PassphraseRecord | null;
  cp: Fingerprint | null;
}

export type AnchorRead =
  { state: 'missing' } | { state: 'unreadable' } | { state: 'ok'; anchor: Anchor; legacy: boolean };

interface BrokenMark {
  firstBad: ChainProblem;
  /** The journal and its anchor as they were when the break was found. */
  fp: Fingerprint | null;
  anchor: string | null;
  at: string;
}

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
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return [];
    }
    return names
      .filter((n) => /^\d{8}\.jsonl$/.test(n))
      .sort()
      .map((n) => path.join(this.dir, n));
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

  /** Appends an entry already chained (core's commitEntry) to the journal's last entry. */
  appendEntry(entry: JournalEntry, anchor: Anchor): JournalEntry {
    const head = this.head();
    if (entry.seq !== head.seq + 1 || entry.prev !== head.hash)
      throw new MnemeError('internal', `journal entry ${entry.seq} is not chained to the head`);
    fs.mkdirSync(this.dir, { recursive: true });
    const segs = this.segments();
    let file = segs[segs.length - 1];
    if (!file || fs.statSync(file).size > this.segmentBytes) {
      file = path.join(this.dir, `${String(segs.length + 1).padStart(8, '0')}.jsonl`);
    }
    const line = `${JSON.stringify(entry)}\n`;
    appendDurable(file, line, this.durable);
    const size = fs.statSync(file).size;
    this.cached = { file, size, head: { seq: entry.seq, hash: entry.hash } };
    this.writeAnchor({
      v: 2,
      seq: entry.seq,
      hash: entry.hash,
      pp: passphraseSetBy(entry) ?? anchor.pp,
      cp: this.fingerprint(),
    });
    return entry;
  }

  // ---- the anchor -------------------------------------------------------------------------

  /**
   * Overwrites HEAD in place as one fixed-width record (one sector), not by rename: replacing a
   * file by rename makes ext4 flush it, which cost more than the rest of a write.
   */
  writeAnchor(a: Anchor): void {
    const record = `${JSON.stringify(a)}`.padEnd(HEAD_BYTES - 1) + '\n';
    let fd: number;
    try {
      fd = fs.openSync(this.headFile, 'r+');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      writeFileAtomic(this.headFile, record, false);
      return;
    }
    try {
      fs.writeSync(fd, record, 0);
      const size = fs.fstatSync(fd).size;
      if (size > record.length) fs.ftruncateSync(fd, record.length);
    } finally {
      fs.closeSync(fd);
    }
  }

  readAnchor(): AnchorRead {
    // (JSON.parse ignores the record's padding.)
    let text: string | null;
    try {
      text = readIfExists(this.headFile);
    } catch {
      return { state: 'unreadable' };
    }
    if (text === null) return { state: 'missing' };
    try {
      const h = JSON.parse(text) as Partial<Anchor>;
      if (typeof h.seq !== 'number' || typeof h.hash !== 'string') return { state: 'unreadable' };
      if (h.v !== 2)
        return {
          state: 'ok',
          legacy: true,
          anchor: { v: 2, seq: h.seq, hash: h.hash, pp: null, cp: null },
        };
      const pp =
        h.pp && typeof h.pp.salt === 'string' && typeof h.pp.hash === 'string' ? h.pp : null;
      return {
        state: 'ok',
        legacy: false,
        anchor: { v: 2, seq: h.seq, hash: h.hash, pp, cp: h.cp ?? null },
      };
    } catch {
      return { state: 'unreadable' };
    }
  }

  /** The segments' stat identity now (null when there is no segment). */
  fingerprint(): Fingerprint | null {
    const segs = this.segments();
    if (segs.length === 0) return null;
    try {
      const stats = segs.map((f) => fs.statSync(f, { bigint: true }));
      const id = (i: number) =>
        `${path.basename(segs[i]!)}:${stats[i]!.size}:${stats[i]!.ino}:${stats[i]!.ctimeNs}`;
      const last = stats[stats.length - 1]!;
      return {
        seg: path.basename(segs[segs.length - 1]!),
        size: Number(last.size),
        ino: String(last.ino),
        ctime: String(last.ctimeNs),
        sealed:
          segs.length > 1
            ? sha256(
                segs
                  .slice(0, -1)
                  .map((_, i) => id(i))
                  .join('\n'),
              )
            : '',
      };
    } catch {
      // A segment vanished between the listing and its stat: a fingerprint nothing matches.
      return { seg: '', size: -1, ino: '', ctime: '', sealed: '' };
    }
  }

  // ---- the refusal record -----------------------------------------------------------------

  private readBroken(): BrokenMark | null {
    try {
      const text = readIfExists(this.brokenFile);
      if (text === null) return null;
      const m = JSON.parse(text) as BrokenMark;
      return m && typeof m.firstBad?.problem === 'string' ? m : brokenUnreadable();
    } catch {
      return brokenUnreadable();
    }
  }

  hasBrokenMark(): boolean {
    return fs.existsSync(this.brokenFile);
  }

  private writeBroken(firstBad: ChainProblem, fp: Fingerprint | null): void {
    const mark: BrokenMark = {
      firstBad,
      fp,
      anchor: this.anchorId(),
      at: new Date().toISOString(),
    };
    writeFileAtomic(this.brokenFile, `${JSON.stringify(mark, null, 2)}\n`, false);
  }

  /** A hash of HEAD's bytes (null when missing): a recorded break stands while both are unchanged. */
  private anchorId(): string | null {
    try {
      const text = readIfExists(this.headFile);
      return text === null ? null : sha256(text);
    } catch {
      return 'unreadable';
    }
  }

  private markStands(mark: BrokenMark, fp: Fingerprint | null): boolean {
    return sameFp(mark.fp, fp) && mark.anchor === this.anchorId();
  }

  clearBroken(): void {
    fs.rmSync(this.brokenFile, { force: true });
  }

  // ---- checking the chain -------------------------------------------------------------------

  /**
   * The answer when it can be had without reading the journal: broken as recorded (nothing
   * changed since), or intact (the segments are exactly as the last commit left them and their
   * last entry is the anchored one). Null means a full check is needed.
   */
  fast(): ChainHealth | null {
    const fp = this.fingerprint();
    const mark = this.readBroken();
    if (mark)
      return this.markStands(mark, fp)
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
      const prior = this.readBroken();
      const same =
        prior !== null &&
        this.markStands(prior, ev.fp) &&
        prior.firstBad.problem === ev.problem.problem;
      if (!same) this.writeBroken(ev.problem, ev.fp);
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

  *entries(): Generator<{ entry: JournalEntry | null; where: string; raw: string }> {
    for (const seg of this.segments()) {
      let text: string;
      try {
        text = fs.readFileSync(seg, 'utf8');
      } catch {
        continue;
      }
      const lines = text.split('\n');
      if (lines[lines.length - 1] === '') lines.pop();
      const name = path.basename(seg);
      for (let i = 0; i < lines.length; i++) {
        const raw = lines[i]!;
        yield { entry: parseEntry(raw), where: `journal/${name}:${i + 1}`, raw };
      }
    }
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
    if (!last) return false;
    const size = fs.statSync(last).size;
    if (size === 0) return false;
    const fd = fs.openSync(last, 'r');
    try {
      const b = Buffer.alloc(1);
      fs.readSync(fd, b, 0, 1, size - 1);
      return b[0] !== 0x0a;
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Drops an unterminated last line left by a crash mid-append (it was never committed). */
  repairTornTail(): boolean {
    const segs = this.segments();
    const last = segs[segs.length - 1];
    if (!last) return false;
    const text = fs.readFileSync(last, 'utf8');
    if (text === '' || text.endsWith('\n')) return false;
    const cut = text.lastIndexOf('\n') + 1;
    fs.truncateSync(last, Buffer.byteLength(text.slice(0, cut)));
    this.cached = null;
    return true;
  }
}

const brokenUnreadable = (): BrokenMark => ({
  firstBad: {
    seq: null,
    position: 0,
    problem: '.state/journal-broken.json (a recorded break) is unreadable',
  },
  fp: null,
  anchor: 'unreadable',
  at: '',
});

function sameFp(a: Fingerprint | null | undefined, b: Fingerprint | null): boolean {
  if (!a || !b) return !a && !b;
  return (
    a.seg === b.seg &&
    a.size === b.size &&
    a.ino === b.ino &&
    a.ctime === b.ctime &&
    a.sealed === b.sealed
  );
}

function parseEntry(raw: string): JournalEntry | null {
  try {
    const e = JSON.parse(raw) as JournalEntry;
    return typeof e.seq === 'number' && typeof e.hash === 'string' ? e : null;
  } catch {
    return null;
  }
}

function lastEntry(file: string, size: number): JournalEntry | null {
  if (size === 0) return null;
  const fd = fs.openSync(file, 'r');
  try {
    let chunk = 64 * 1024;
    for (;;) {
      const start = Math.max(0, size - chunk);
      const buf = Buffer.alloc(size - start);
      fs.readSync(fd, buf, 0, buf.length, start);
      const text = buf.toString('utf8');
      const lines = text.split('\n').filter((l) => l.trim() !== '');
      // The first line of a partial chunk may be cut; only trust it when we read from 0.
      for (let i = lines.length - 1; i >= (start === 0 ? 0 : 1); i--) {
        const e = parseEntry(lines[i]!);
        if (e) return e;
      }
      if (start === 0) return null;
      chunk *= 4;
    }
  } finally {
    fs.closeSync(fd);
  }
}
