// The journal on disk: append-only JSONL segments plus a HEAD file naming the last committed
// entry, so that a truncated tail is detected as well as an edited or reordered line.
import fs from 'node:fs';
import path from 'node:path';
import {
  EMPTY_HEAD,
  chainEntry,
  verifyChain,
  type ChainHead,
  type JournalBody,
  type JournalEntry,
} from '../../core/journal.js';
import type { VerifyReport } from '../port.js';
import { appendDurable, readIfExists, writeFileAtomic } from './atomic.js';

const SEGMENT_BYTES = 32 * 1024 * 1024;
/** HEAD is one record of this many bytes: a chain head (seq, 64-hex hash) padded with spaces. */
const HEAD_BYTES = 128;

export class JournalFiles {
  private cached: { file: string; size: number; head: ChainHead } | null = null;

  constructor(
    private readonly dir: string,
    private readonly headFile: string,
    private readonly durable: boolean,
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

  append(body: JournalBody): JournalEntry {
    const head = this.head();
    const entry = chainEntry(head, body);
    fs.mkdirSync(this.dir, { recursive: true });
    const segs = this.segments();
    let file = segs[segs.length - 1];
    if (!file || fs.statSync(file).size > SEGMENT_BYTES) {
      file = path.join(this.dir, `${String(segs.length + 1).padStart(8, '0')}.jsonl`);
    }
    const line = `${JSON.stringify(entry)}\n`;
    appendDurable(file, line, this.durable);
    const size = fs.statSync(file).size;
    this.cached = { file, size, head: { seq: entry.seq, hash: entry.hash } };
    this.writeHead({ seq: entry.seq, hash: entry.hash });
    return entry;
  }

  /**
   * Overwrites HEAD in place as one fixed-width record (well under a disk sector), not by
   * rename: replacing a file by rename makes ext4 flush it, which cost more than the rest of a
   * write. A HEAD that is missing or unreadable after a crash is rewritten from the journal.
   */
  writeHead(head: ChainHead): void {
    const record = `${JSON.stringify(head)}`.padEnd(HEAD_BYTES - 1) + '\n';
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

  readHeadFile(): ChainHead | null {
    // (JSON.parse ignores the record's padding.)
    const text = readIfExists(this.headFile);
    if (text === null) return null;
    try {
      const h = JSON.parse(text) as ChainHead;
      return typeof h.seq === 'number' && typeof h.hash === 'string' ? h : null;
    } catch {
      return null;
    }
  }

  *entries(): Generator<{ entry: JournalEntry | null; where: string; raw: string }> {
    for (const seg of this.segments()) {
      const text = fs.readFileSync(seg, 'utf8');
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

  verify(): VerifyReport {
    const { problem, head, count } = verifyChain(this.entries());
    if (problem) return { ok: false, entries: count, head, firstBad: problem };
    const recorded = this.readHeadFile();
    if (recorded && recorded.seq > head.seq) {
      return {
        ok: false,
        entries: count,
        head,
        firstBad: {
          seq: head.seq + 1,
          position: count + 1,
          problem: `journal/HEAD records seq ${recorded.seq} but the journal ends at seq ${head.seq} (entries were deleted from the tail)`,
        },
      };
    }
    if (recorded && recorded.seq === head.seq && recorded.hash !== head.hash) {
      return {
        ok: false,
        entries: count,
        head,
        firstBad: {
          seq: head.seq,
          position: count,
          problem: `the last entry (seq ${head.seq}) does not match journal/HEAD`,
        },
      };
    }
    return { ok: true, entries: count, head, firstBad: null };
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
