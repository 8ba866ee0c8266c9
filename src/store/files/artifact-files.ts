// Artifact bytes in the embedded store: `artifacts/sha256/<aa>/<hash>`, one file per hash.
// A put writes a temp file beside the target, fsyncs it, renames it into place and fsyncs the
// directory, so the bytes are on disk before the journal line that references them.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MnemeError } from '../../core/errors.js';
import { isArtifactHash } from '../../core/artifact.js';
import type { ArtifactCheck, ArtifactStore } from '../artifacts.js';

let counter = 0;

export class ArtifactFiles implements ArtifactStore {
  constructor(
    private readonly dir: string,
    private readonly durable: boolean,
  ) {}

  /** The file of a hash (a hash is 64 hex digits, so it never leaves the directory). */
  file(sha256: string): string {
    if (!isArtifactHash(sha256))
      throw new MnemeError('invalid', `"${sha256.slice(0, 80)}" is not an artifact hash`, {
        hint: 'an artifact hash is 64 hexadecimal digits (sha256), as `mneme read ID` shows it',
      });
    return path.join(this.dir, 'sha256', sha256.slice(0, 2), sha256);
  }

  async put(sha256: string, bytes: Uint8Array): Promise<void> {
    const file = this.file(sha256);
    if (fs.existsSync(file) && fs.statSync(file).size === bytes.byteLength) return;
    const dir = path.dirname(file);
    fs.mkdirSync(dir, { recursive: true });
    const tmp = `${file}.tmp-${process.pid}-${++counter}`;
    const fd = fs.openSync(tmp, 'w', 0o644);
    try {
      let off = 0;
      while (off < bytes.byteLength) off += fs.writeSync(fd, bytes, off, bytes.byteLength - off);
      if (this.durable) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
    if (this.durable) syncDir(dir);
  }

  async read(sha256: string, start: number, end: number): Promise<Uint8Array | null> {
    let fd: number;
    try {
      fd = fs.openSync(this.file(sha256), 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
    try {
      const size = fs.fstatSync(fd).size;
      const to = Math.min(end, size);
      const buf = Buffer.alloc(Math.max(0, to - start));
      let got = 0;
      while (got < buf.length) {
        const n = fs.readSync(fd, buf, got, buf.length - got, start + got);
        if (n === 0) break;
        got += n;
      }
      return buf.subarray(0, got);
    } finally {
      fs.closeSync(fd);
    }
  }

  async size(sha256: string): Promise<number | null> {
    try {
      return fs.statSync(this.file(sha256)).size;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async check(sha256: string): Promise<ArtifactCheck> {
    const file = this.file(sha256);
    if (!fs.existsSync(file)) return 'missing';
    const h = createHash('sha256');
    await new Promise<void>((resolve, reject) =>
      fs
        .createReadStream(file)
        .on('data', (c) => h.update(c))
        .on('end', resolve)
        .on('error', reject),
    );
    return h.digest('hex') === sha256 ? 'ok' : 'mismatch';
  }

  async remove(sha256: string): Promise<boolean> {
    const file = this.file(sha256);
    try {
      fs.unlinkSync(file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw e;
    }
    if (this.durable) syncDir(path.dirname(file));
    return true;
  }
}

function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some filesystems cannot fsync a directory; the rename itself is still atomic.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
