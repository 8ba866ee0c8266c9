// Entry point of the `mneme` binary (bundled into dist/mneme.cjs, which bin/mneme.js loads).
// Hooks and plain recalls take the fast dispatch (fast.ts); every other command loads the full
// commander CLI.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { runFast } from './fast.js';
import type { Io } from './shared.js';

let rl: import('node:readline').Interface | undefined;
let muted = false;

/** One answer from the terminal; a secret answer is not echoed. */
const ask = async (question: string, opts: { secret?: boolean } = {}) => {
  if (!rl) {
    // require, not import(): the bundle runs without a dynamic-import loader (bin/mneme.js).
    const readline = createRequire(import.meta.url)(
      'node:readline',
    ) as typeof import('node:readline');
    rl = readline.createInterface({
      input: process.stdin,
      output: process.stdout,
      terminal: true,
    });
    // readline echoes typed characters through this method; a secret mutes it.
    const echo = rl as unknown as { _writeToOutput: (s: string) => void };
    echo._writeToOutput = (s: string) => {
      if (!muted) process.stdout.write(s);
    };
  }
  const r = rl;
  return new Promise<string>((resolve) => {
    r.question(question, (answer) => {
      if (muted) process.stdout.write('\n');
      muted = false;
      resolve(answer);
    });
    muted = opts.secret === true;
  });
};

/**
 * stdout for the fast dispatch: a synchronous write to fd 1, because setting up process.stdout
 * costs a short process 5-10 ms. The fast path writes nothing else to stdout, so nothing can
 * interleave; what writeSync cannot finish (EAGAIN on a non-blocking pipe, or any failure) goes
 * through the stream as before.
 */
function writeStdout(s: string): void {
  const buf = Buffer.from(s, 'utf8');
  let off = 0;
  try {
    while (off < buf.length) off += fs.writeSync(1, buf, off);
  } catch {
    process.stdout.write(buf.subarray(off));
  }
}

async function main(argv: string[]): Promise<number> {
  const io: Io = {
    stdout: (s) => process.stdout.write(s),
    stdoutBytes: (b) => process.stdout.write(b),
    stderr: (s) => process.stderr.write(s),
    env: process.env,
    cwd: process.cwd(),
    // A getter: touching process.stdin sets up a stream, which a recall has no use for.
    get tty() {
      return {
        stdin: process.stdin.isTTY === true,
        stdout: process.stdout.isTTY === true,
        stderr: process.stderr.isTTY === true,
      };
    },
    ask,
  };
  let code = await runFast(argv, {
    stdout: writeStdout,
    stderr: io.stderr,
    env: io.env,
    cwd: io.cwd,
  });
  if (code === null) {
    const { run } = await import('./run.js');
    code = await run(argv, io);
  }
  rl?.close();
  return code;
}

// No top-level await: this module is also the entry of the CommonJS bundle (scripts/bundle.mjs).
void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
