// Atomic file replacement: write a temp file beside the target, optionally fsync, then rename.
// A reader sees the old file or the new one, never a torn one.
import fs from 'node:fs';
import path from 'node:path';

let counter = 0;

export function writeFileAtomic(file: string, data: string, durable: boolean): void {
  const tmp = `${file}.tmp-${process.pid}-${++counter}`;
  const fd = openCreating(tmp);
  try {
    fs.writeSync(fd, data);
    if (durable) fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}

/** Opens a new file for writing, making its directory only when it is missing (the rare case). */
function openCreating(file: string): number {
  try {
    return fs.openSync(file, 'w', 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    return fs.openSync(file, 'w', 0o644);
  }
}

export function appendDurable(file: string, line: string, durable: boolean): void {
  const fd = fs.openSync(file, 'a', 0o644);
  try {
    fs.writeSync(fd, line);
    if (durable) fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** fdatasync a file, or fsync a directory (so an entry created in it survives a power loss). */
export function syncFile(file: string, dir: boolean): void {
  const fd = fs.openSync(file, 'r');
  try {
    if (dir) fs.fsyncSync(fd);
    else fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function readIfExists(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}
