// Archiving the transcript increment past the session watermark: raw JSONL lines, copied into
// the store before any model sees them. Only complete lines are taken (a line still being
// written waits for the next hook); the watermark is a byte offset and a line count.
import fs from 'node:fs';
import path from 'node:path';
import type { SessionRef, SessionStore } from '../compose.js';

interface Watermark {
  bytes: number;
  lines: number;
  file: string;
}

const MAX_READ = 32 * 1024 * 1024;

/** The transcript path if it is a real, regular file; otherwise a reason. */
export function checkTranscript(
  p: string,
  cwd: string,
): { file: string } | { problem: string; missing?: true } {
  if (p.includes('\u0000')) return { problem: 'transcript path contains NUL' };
  const file = path.resolve(cwd, p);
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return { problem: 'transcript file does not exist', missing: true };
  }
  if (!st.isFile()) return { problem: 'transcript path is not a regular file' };
  // A transcript is JSONL: a payload naming some other file (/etc/passwd, a key) must not get
  // that file copied into the archive.
  if (!looksLikeJsonl(file)) return { problem: 'transcript file is not JSONL (no JSON object)' };
  return { file };
}

function looksLikeJsonl(file: string): boolean {
  const buf = Buffer.alloc(512);
  let n = 0;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      n = fs.readSync(fd, buf, 0, buf.length, 0);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
  const head = buf
    .subarray(0, n)
    .toString('utf8')
    .replace(/^\ufeff/, '')
    .trimStart();
  return head === '' || head.startsWith('{');
}

export async function archiveIncrement(
  sessions: SessionStore,
  ref: SessionRef,
  file: string,
): Promise<{ lines: string[]; from: number; to: number; reset: boolean } | null> {
  const wm = await sessions.readState<Watermark>('watermarks', ref);
  let start = wm && wm.file === file && Number.isInteger(wm.bytes) ? wm.bytes : 0;
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    let reset = false;
    if (size < start) {
      // The transcript was truncated or replaced: keep evidence, start over from its beginning.
      start = 0;
      reset = true;
    }
    const length = Math.min(size - start, MAX_READ);
    if (length <= 0) return null;
    const buf = Buffer.alloc(length);
    fs.readSync(fd, buf, 0, length, start);
    const end = buf.lastIndexOf(0x0a);
    if (end < 0) return null;
    const text = buf.subarray(0, end + 1).toString('utf8');
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    const range = await sessions.appendArchive(ref, lines);
    await sessions.writeState('watermarks', ref, {
      bytes: start + end + 1,
      lines: (reset ? 0 : (wm?.lines ?? 0)) + lines.length,
      file,
    } satisfies Watermark);
    if (!range) return null;
    return { lines, from: range.from, to: range.to, reset };
  } finally {
    fs.closeSync(fd);
  }
}
