// Entry point of the `mneme` binary.
import readline from 'node:readline';
import { run } from './run.js';

let rl: readline.Interface | undefined;
let muted = false;

/** One answer from the terminal; a secret answer is not echoed. */
const ask = (question: string, opts: { secret?: boolean } = {}) =>
  new Promise<string>((resolve) => {
    if (!rl) {
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
    r.question(question, (answer) => {
      if (muted) process.stdout.write('\n');
      muted = false;
      resolve(answer);
    });
    muted = opts.secret === true;
  });

const code = await run(process.argv.slice(2), {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  env: process.env,
  cwd: process.cwd(),
  tty: { stdin: process.stdin.isTTY === true, stdout: process.stdout.isTTY === true },
  ask,
});
rl?.close();
process.exitCode = code;
