// Entry point of the `mneme` binary.
import { run } from './run.js';

const code = await run(process.argv.slice(2), {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  env: process.env,
  cwd: process.cwd(),
});
process.exitCode = code;
