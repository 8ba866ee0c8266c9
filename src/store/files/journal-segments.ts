// The journal's segments on disk: append-only JSONL files journal/00000001.jsonl, … in order.
// Listing them, reading their entries, finding the last entry from a segment's tail, and the
// torn last line a crash mid-append can leave.
import fs from 'node:fs';
import path from 'node:path';
import type { JournalEntry } from '../../core/journal.js';

/** The segment files in `dir`, in chain order (none when the directory is missing). */
export function listSegments(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => /^\d{8}\.jsonl$/.test(n))
    .sort()
    .map((n) => path.join(dir, n));
}

/** Every line of the segments, parsed (null when a line is not an entry), with where it is. */
export function* segmentEntries(
  segs: string[],
): Generator<{ entry: JournalEntry | null; where: string; raw: string; file?: string }> {
  for (const seg of segs) {
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
      const { entry, file } = parseLine(raw);
      yield {
        entry,
        where: `journal/${name}:${i + 1}`,
        raw,
        ...(file !== undefined ? { file } : {}),
      };
    }
  }
}

/** Whether a segment ends mid-line (a crash or a full disk cut an append short). */
export function endsMidLine(file: string): boolean {
  const size = fs.statSync(file).size;
  if (size === 0) return false;
  const fd = fs.openSync(file, 'r');
  try {
    const b = Buffer.alloc(1);
    fs.readSync(fd, b, 0, 1, size - 1);
    return b[0] !== 0x0a;
  } finally {
    fs.closeSync(fd);
  }
}

/** Drops an unterminated last line of a segment; whether there was one. */
export function cutTornLine(file: string): boolean {
  const text = fs.readFileSync(file, 'utf8');
  if (text === '' || text.endsWith('\n')) return false;
  const cut = text.lastIndexOf('\n') + 1;
  fs.truncateSync(file, Buffer.byteLength(text.slice(0, cut)));
  return true;
}

/**
 * The field of a line that carries the exact text of the revision file its entry commits (the
 * one-sync protocol, commit.ts). It is not part of the entry: the entry's hash covers the
 * revision's hash (`after.hash`), so a body that does not hash to it is detected and not used.
 * Lines written before this field existed have none and read the same.
 */
export const FILE_FIELD = 'file';

export function parseLine(raw: string): { entry: JournalEntry | null; file?: string } {
  let e: JournalEntry & { [FILE_FIELD]?: unknown };
  try {
    e = JSON.parse(raw) as JournalEntry & { [FILE_FIELD]?: unknown };
  } catch {
    return { entry: null };
  }
  if (e === null || typeof e.seq !== 'number' || typeof e.hash !== 'string') return { entry: null };
  if (!(FILE_FIELD in e)) return { entry: e };
  const { [FILE_FIELD]: file, ...entry } = e;
  return typeof file === 'string' ? { entry, file } : { entry };
}

export function parseEntry(raw: string): JournalEntry | null {
  return parseLine(raw).entry;
}

/** A journal line: the entry's JSON, then (outside the hashed entry) its revision file's text. */
export function lineOf(entry: JournalEntry, file?: string): string {
  return `${JSON.stringify(file === undefined ? entry : { ...entry, [FILE_FIELD]: file })}\n`;
}

/** The last entry of a segment of `size` bytes, read from its tail (null when it has none). */
export function lastEntry(file: string, size: number): JournalEntry | null {
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
