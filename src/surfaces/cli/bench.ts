// `mneme bench <name> …`: a thin dispatcher. The benchmarks are tooling, not product: they live
// in bench/src of a source checkout and run from its build (dist/bench/src/main.js) as a child
// process with the arguments as given. An installed package has no bench tree, and says so.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MnemeError } from '../../core/errors.js';
import { installRoot } from '../install-root.js';
import { ExitCode, type CliContext } from './run.js';

/** The benchmark entry point of a source checkout's build. */
export const benchEntry = () => path.join(installRoot(), 'dist', 'bench', 'src', 'main.js');

export function registerBench(c: CliContext): void {
  c.program
    .command('bench')
    .description(
      'retrieval quality and speed benchmarks, from a source checkout (docs/benchmarks.md)',
    )
    .argument('[args...]', 'the benchmark and its options: longmemeval, locomo, scale, docs')
    .allowUnknownOption()
    .helpOption(false)
    .action((args: string[]) => {
      const entry = benchEntry();
      if (!fs.existsSync(entry))
        throw new MnemeError('invalid', `the benchmark tooling is not here (no ${entry})`, {
          hint: 'benchmarks run from a source checkout of mneme: `npm run build` there, then `mneme bench <name>`',
        });
      const r = spawnSync(
        process.execPath,
        [entry, ...args, ...(c.globals().json ? ['--json'] : [])],
        { stdio: 'inherit' },
      );
      if (r.error) throw r.error;
      const code = r.status ?? 1;
      if (code !== 0) throw new ExitCode(code);
    });
}
