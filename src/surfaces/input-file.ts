// Reading a file a person names on the command line (a body file, an import bundle, a token
// file, or `-` for stdin): never more than a cap, refused past it with the limit in the message,
// and never a FIFO or a device — /dev/zero would fill memory and a FIFO with no writer would
// hang the command. Nothing is read without a bound (invariant 12: bad input gets a clear error).
import fs from 'node:fs';
import { MnemeError } from '../core/errors.js';

export interface InputFileOptions {
  /** The most bytes accepted. */
  cap: number;
  /** What the file is, for messages: `--body-file`, `the bundle`, `--tokens`. */
  what: string;
}

/** A byte count as people read limits: `64 KiB`, `256 MiB`, else bytes. */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

const tooLarge = (o: InputFileOptions, name: string, size?: number) =>
  new MnemeError(
    'invalid',
    size !== undefined
      ? `${o.what} ${name} is ${size} bytes; the limit is ${formatBytes(o.cap)}`
      : `${o.what} ${name} goes past the limit of ${formatBytes(o.cap)}`,
    { hint: 'pass a smaller file' },
  );

/** The file's bytes (`-` reads stdin), at most `cap` of them; anything else is refused. */
export function readInputFile(file: string, o: InputFileOptions): Buffer {
  if (file === '-') return readCapped(0, o, 'from stdin');
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (e) {
    throw new MnemeError('invalid', `cannot read ${o.what} ${file}: ${(e as Error).message}`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile())
      throw new MnemeError(
        'invalid',
        `${o.what} ${file} is not a regular file (${kind(st)}); only regular files are read`,
        { hint: 'save the content to a file first, or pipe it in and pass - to read stdin' },
      );
    if (st.size > o.cap) throw tooLarge(o, file, st.size);
    return readCapped(fd, o, file);
  } finally {
    fs.closeSync(fd);
  }
}

function kind(st: fs.Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isDirectory()) return 'a directory';
  if (st.isSocket()) return 'a socket';
  return 'not a file';
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Reads fd to its end, refusing as soon as more than `cap` bytes have come. */
function readCapped(fd: number, o: InputFileOptions, name: string): Buffer {
  const chunks: Buffer[] = [];
  let size = 0;
  const buf = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = fs.readSync(fd, buf, 0, Math.min(buf.length, o.cap + 1 - size), null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // A non-blocking stdin with nothing yet: wait a little and read again.
      if (code === 'EAGAIN') {
        Atomics.wait(pause, 0, 0, 5);
        continue;
      }
      if (code === 'EOF') break;
      throw new MnemeError('invalid', `cannot read ${o.what} ${name}: ${(e as Error).message}`);
    }
    if (n === 0) break;
    size += n;
    if (size > o.cap) throw tooLarge(o, name);
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks, size);
}
