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
    .argument(
      '[args...]',
      'the benchmark and its options: longmemeval, locomo, inject, scale, docs',
    )
    .allowUnknownOption()
    .helpOption(false)
    .action(() => {
      const entry = benchEntry();
      if (!fs.existsSync(entry))
        throw new MnemeError('invalid', `the benchmark tooling is not here (no ${entry})`, {
          hint: 'benchmarks run from a source checkout of mneme: `npm run build` there, then `mneme bench <name>`',
        });
      const r = spawnSync(process.execPath, [entry, ...benchArgs(c)], { stdio: 'inherit' });
      if (r.error) throw r.error;
      const code = r.status ?? 1;
      if (code !== 0) throw new ExitCode(code);
    });
}

/**
 * Everything typed after `bench`, verbatim: options the product also has (--json, --db, --store)
 * belong to the benchmark there, so they are taken from the raw arguments, not from what the
 * product's parser kept. A --json before `bench` is passed on too.
 */
function benchArgs(c: CliContext): string[] {
  const raw = (c.program as unknown as { rawArgs: string[] }).rawArgs;
  const tail = raw.slice(raw.indexOf('bench') + 1);
  return c.globals().json && !tail.includes('--json') ? [...tail, '--json'] : tail;
}
