// The benchmark tooling's entry point: `node dist/bench/src/main.js <name> …`, which is what
// `mneme bench <name> …` runs (the shipped CLI only dispatches here; no benchmark code is in the
// product). Each subcommand prints a summary (or --json the run's result object); --out FILE
// writes the result there and nowhere else; without --out it writes
// bench/results/<name>-<date>.json and regenerates docs/benchmarks.md.
import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { MnemeError } from '../../src/core/errors.js';
import { DEFAULT_RANKING, LEFT_OUT, type RankingModel } from '../../src/core/ranking.js';
import { REPO_ROOT } from './scale.js';
import type { RunEnvelope } from './results.js';

interface Common {
  out?: string;
  label?: string;
  ranker?: Partial<RankingModel>;
  vector?: string;
  db?: string;
}

const parsePositive = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new MnemeError('invalid', `${name} must be a positive integer, not "${v}"`);
  return n;
};

const parseNs = (v: string) =>
  v.split(',').map((x) => {
    const n = Number(x.trim());
    if (!Number.isInteger(n) || n < 1)
      throw new MnemeError('invalid', `--n takes sizes like 1000,10000, not "${v}"`);
    return n;
  });

/**
 * `--ranker key=value` (repeatable): a parameter of the ranking model the benchmark's engine is
 * built with (an ablation); the product's recall options have none.
 */
const parseRanker = (v: string, prev: Partial<RankingModel> = {}) => {
  const [k, raw] = v.split('=');
  const known = Object.entries(DEFAULT_RANKING)
    .filter(([, d]) => ['boolean', 'number', 'string'].includes(typeof d))
    .map(([key]) => key);
  if (!k || raw === undefined || !known.includes(k))
    throw new MnemeError('invalid', `--ranker "${v}" is not key=value with a known key`, {
      hint: `keys: ${known.join(', ')}`,
    });
  const def = DEFAULT_RANKING[k as keyof RankingModel];
  let value: boolean | number | string;
  if (k === 'leftOut') {
    if (!(LEFT_OUT as readonly string[]).includes(raw))
      throw new MnemeError('invalid', `--ranker leftOut takes one of ${LEFT_OUT.join(', ')}`);
    value = raw;
  } else if (typeof def === 'boolean') {
    if (!['on', 'off', 'true', 'false'].includes(raw))
      throw new MnemeError('invalid', `--ranker ${k} takes on or off`);
    value = raw === 'on' || raw === 'true';
  } else {
    value = Number(raw);
    if (!Number.isFinite(value)) throw new MnemeError('invalid', `--ranker ${k} takes a number`);
  }
  return { ...prev, [k]: value };
};

function common(cmd: Command): Command {
  return cmd
    .option('--out <file>', 'write the result here and nowhere else')
    .option('--label <name>', 'name this configuration in the result file (default: default)')
    .option(
      '--ranker <key=value>',
      'a ranking model parameter, e.g. prf=off (repeatable; an ablation)',
      parseRanker,
    );
}

/** `--vector KIND`: the vector arm fused in, its embedder configured as for recall (MNEME_EMBED_*). */
const withVector = (cmd: Command) =>
  cmd.option('--vector <embedder>', 'fuse the vector arm in: hash, openai, ollama, transformers');

const stdout = (s: string) => process.stdout.write(s);
const stderr = (s: string) => process.stderr.write(s);

function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, [...c].length)));
  return rows
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '))
    .join('\n');
}

const program = new Command()
  .name('mneme bench')
  .description('retrieval quality and speed benchmarks (see docs/benchmarks.md)')
  .option('--json', 'print the run result as JSON')
  .exitOverride()
  .showHelpAfterError('(run `mneme bench --help` for usage)');

/** The bench arguments as typed, for the result file's `command`. */
const argv = process.argv.slice(2);

async function finish(
  o: Common,
  result: { benchmark: string; n: number; metrics: Record<string, number | null> },
  human: () => string,
) {
  const label =
    o.label ??
    ([
      ...(o.db ? ['postgres'] : []),
      ...Object.entries(o.ranker ?? {}).map(([k, v]) => `${k}-${String(v)}`),
      ...(o.vector ? [`vector-${o.vector}`] : []),
    ].join('_') ||
      'default');
  const { envelope, regenerateDocs, writeDefault } = await import('./results.js');
  const run: RunEnvelope = envelope(result, {
    label,
    command: ['mneme', 'bench', ...argv.filter((a) => a !== '--json')].join(' '),
    root: REPO_ROOT,
  });
  let where: string;
  if (o.out) {
    fs.mkdirSync(path.dirname(path.resolve(o.out)), { recursive: true });
    fs.writeFileSync(o.out, `${JSON.stringify(run, null, 1)}\n`);
    where = `wrote ${o.out}`;
  } else {
    const file = writeDefault(REPO_ROOT, run);
    const docs = regenerateDocs(REPO_ROOT, [run]);
    where = `wrote ${path.relative(process.cwd(), file)}; regenerated ${path.relative(process.cwd(), docs)}`;
  }
  if (program.opts().json) stdout(`${JSON.stringify(run, null, 2)}\n`);
  else stdout(`${human()}\n${where}\n`);
}

const metricsTable = (rows: [string, Record<string, number>][], keys: readonly string[]) =>
  table([
    ['', 'n', ...keys],
    ...rows.map(([name, m]) => [name, String(m.n ?? ''), ...keys.map((k) => String(m[k] ?? '—'))]),
  ]);

program
  .command('docs')
  .description('regenerate docs/benchmarks.md from the committed result files')
  .action(async () => {
    const { regenerateDocs } = await import('./results.js');
    const file = regenerateDocs(REPO_ROOT);
    if (program.opts().json) stdout(`${JSON.stringify({ docs: file }, null, 2)}\n`);
    else stdout(`regenerated ${path.relative(process.cwd(), file)}\n`);
  });

withVector(
  common(
    program
      .command('longmemeval')
      .description('LongMemEval-S session retrieval: a fresh store per question')
      .requiredOption('--data <file>', 'a LongMemEval .json or .json.gz file')
      .option('--limit <n>', 'only the first N questions', parsePositive('--limit'))
      .option(
        '--passage-bytes <n>',
        'split sessions into passage memories of at most this many bytes (default 4096)',
        parsePositive('--passage-bytes'),
      )
      .option('--db <url>', 'run on Postgres: a throwaway tenant per question in this database'),
  ),
).action(async (o: Common & { data: string; limit?: number; passageBytes?: number }) => {
  const { runLongMemEval } = await import('./longmemeval.js');
  const r = await runLongMemEval(
    o.data,
    {
      limit: o.limit,
      passageBytes: o.passageBytes,
      ranker: o.ranker,
      vector: o.vector,
      ...(o.db ? { db: o.db } : {}),
    },
    stderr,
  );
  await finish(o, r, () =>
    metricsTable(
      [['all', { ...r.metrics, n: r.n }], ...Object.entries(r.by_type)],
      Object.keys(r.metrics),
    ),
  );
});

withVector(
  common(
    program
      .command('locomo')
      .description('LoCoMo dialog-level evidence recall: a fresh store per conversation')
      .requiredOption('--data <file>', 'a LoCoMo .json or .json.gz file')
      .option('--granularity <unit>', 'turn or session', 'turn')
      .option(
        '--context <n>',
        'turns: neighbouring turns each side in the body (default 1)',
        (v: string) => parsePositive('--context')(String(Number(v) + 1)) - 1,
      ),
  ),
).action(async (o: Common & { data: string; granularity: string; context?: number }) => {
  if (o.granularity !== 'turn' && o.granularity !== 'session')
    throw new MnemeError(
      'invalid',
      `--granularity must be turn or session, not "${o.granularity}"`,
    );
  const { runLocomo } = await import('./locomo.js');
  const r = await runLocomo(
    o.data,
    { granularity: o.granularity, context: o.context, ranker: o.ranker, vector: o.vector },
    stderr,
  );
  await finish(o, r, () =>
    [
      metricsTable(
        [['all', { ...r.metrics, n: r.n }], ...Object.entries(r.by_category)],
        Object.keys(r.metrics),
      ),
      `skipped: ${r.skipped.no_evidence} questions without usable evidence; ${r.skipped.malformed_ids} malformed and ${r.skipped.unknown_ids} unknown evidence ids`,
    ].join('\n'),
  );
});

const parseFloors = (v: string) =>
  v.split(',').map((x) => {
    const n = Number(x.trim());
    if (x.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
      throw new MnemeError(
        'invalid',
        `--floors takes scores from 0 to 1 like 0,0.3,0.5, not "${v}"`,
      );
    return n;
  });

program
  .command('inject')
  .description(
    'the prompt hook as a host runs it: dev questions through `mneme hook user-prompt-submit`, per floor',
  )
  .option('--longmemeval <file>', 'a LongMemEval .json or .json.gz file')
  .option('--locomo <file>', 'a LoCoMo .json file')
  .option(
    '--floors <list>',
    'score floors to measure (default 0,0.2,0.3,0.4,0.5,0.6,0.7,0.8)',
    parseFloors,
  )
  .option(
    '--lme-every <n>',
    'every Nth LongMemEval question (default 3)',
    parsePositive('--lme-every'),
  )
  .option(
    '--locomo-every <n>',
    'every Nth LoCoMo question (default 10)',
    parsePositive('--locomo-every'),
  )
  .option('--out <file>', 'write the result here and nowhere else')
  .option('--label <name>', 'name this configuration in the result file (default: default)')
  .action(
    async (
      o: Common & {
        longmemeval?: string;
        locomo?: string;
        floors?: number[];
        lmeEvery?: number;
        locomoEvery?: number;
      },
    ) => {
      if (!o.longmemeval && !o.locomo)
        throw new MnemeError('invalid', 'bench inject needs a data file', {
          hint: 'pass --longmemeval FILE and/or --locomo FILE (the dev files under ../shared/bench/)',
        });
      const { runInject, INJECT_COLUMNS: cols } = await import('./inject.js');
      const r = await runInject(
        {
          ...(o.longmemeval ? { longmemeval: o.longmemeval } : {}),
          ...(o.locomo ? { locomo: o.locomo } : {}),
          ...(o.floors ? { floors: o.floors } : {}),
          ...(o.lmeEvery ? { lmeEvery: o.lmeEvery } : {}),
          ...(o.locomoEvery ? { locomoEvery: o.locomoEvery } : {}),
        },
        stderr,
      );
      await finish(o, r, () =>
        [
          table([
            ['floor', 'prompts', ...cols],
            ...Object.entries(r.by_floor).map(([f, m]) => [
              f,
              String(m.prompts),
              ...cols.map((k) => String(m[k] ?? '—')),
            ]),
          ]),
          `chosen floor ${r.chosen.floor}: ${r.chosen.rule}`,
        ].join('\n'),
      );
    },
  );

program
  .command('compare <a> <b>')
  .description(
    'per-question top-10 agreement of two result files (e.g. the same run on files and --db)',
  )
  .action(async (a: string, b: string) => {
    const { compareRuns } = await import('./compare.js');
    const hint = 'pass two result files written by `mneme bench longmemeval|locomo`';
    const read = (f: string) => {
      try {
        return JSON.parse(fs.readFileSync(f, 'utf8')) as Parameters<typeof compareRuns>[1];
      } catch (e) {
        throw new MnemeError('invalid', `cannot read result file ${f}: ${(e as Error).message}`, {
          hint,
        });
      }
    };
    let r;
    try {
      r = compareRuns(a, read(a), b, read(b));
    } catch (e) {
      throw new MnemeError('invalid', (e as Error).message, { hint });
    }
    if (program.opts().json) stdout(`${JSON.stringify(r, null, 2)}\n`);
    else
      stdout(
        `${r.same_top10}/${r.questions} questions with the same top-10 (${(r.agreement * 100).toFixed(1)}%); ${r.same_set} with the same top-10 set\n`,
      );
  });

common(
  program
    .command('scale')
    .description('ingest, recall, CLI, hook and rebuild at N memories (shared workload generator)')
    .option('--n <sizes>', 'comma-separated sizes', parseNs)
    .option('--workload <file>', 'a file made by gen-workload.mjs instead of --n')
    .option('--no-durable', 'skip fsync on writes (the default measures durable writes)')
    .option(
      '--batch <ops>',
      'ops per apply in the batched ingest (0 skips it)',
      (v: string) => parsePositive('--batch')(String(Number(v) + 1)) - 1,
      100,
    ),
).action(
  async (o: Common & { n?: number[]; workload?: string; durable: boolean; batch: number }) => {
    if (o.n && o.workload) throw new MnemeError('invalid', 'pass --n or --workload, not both');
    const { runScale } = await import('./scale.js');
    const r = await runScale(
      { ns: o.workload ? undefined : (o.n ?? [1000, 10000]), workload: o.workload },
      { ranker: o.ranker, durable: o.durable, batch: o.batch },
      stderr,
    );
    await finish(o, r, () => {
      const keys = Object.keys(r.metrics);
      return table([
        ['metric', ...Object.keys(r.by_n).map((n) => `N=${n}`)],
        ...keys.map((k) => [
          k,
          ...Object.values(r.by_n).map((m) => String((m as Record<string, unknown>)[k] ?? '—')),
        ]),
      ]);
    });
  },
);

program
  .command('serve')
  .description(
    'the team server under load: N `serve --db` instances, T tenants of M memories, C HTTP clients',
  )
  .option(
    '--db <url>',
    'a Postgres account that may create databases (a throwaway one is made and dropped)',
    process.env.MNEME_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  )
  .option(
    '--instances <n>',
    'server processes on the one database',
    parsePositive('--instances'),
    2,
  )
  .option(
    '--tenants <n>',
    'tenants, each with its own token and memories',
    parsePositive('--tenants'),
    4,
  )
  .option(
    '--memories <n>',
    'memories per tenant (shared workload, seed 42)',
    parsePositive('--memories'),
    10000,
  )
  .option('--clients <n>', 'concurrent HTTP clients', parsePositive('--clients'), 16)
  .option('--duration <s>', 'seconds of load', parsePositive('--duration'), 20)
  .option('--seed-batch <n>', 'ops per seeding transaction', parsePositive('--seed-batch'), 250)
  .option(
    '--mix <shares>',
    'shares of the load, e.g. remember=1 for writes only (default recall=0.8,remember=0.15,supersede=0.035,forget=0.015)',
  )
  .option('--workload <file>', 'a gen-workload.mjs file instead of generating one')
  .option('--keep', 'keep the database afterwards (its name is in the result), for --reuse-db')
  .option(
    '--reuse-db <name>',
    'run against a database a --keep run seeded (same workload, tenants, memories, schema) instead of seeding one',
  )
  .option(
    '--rate <r>',
    'open loop: Poisson arrivals at R requests/s in total, latency from each scheduled start (default: closed loop, --clients waiting for their answers)',
    parsePositive('--rate'),
  )
  .option('--out <file>', 'write the result here and nowhere else')
  .option('--label <name>', 'name this configuration in the result file (default: default)')
  .action(
    async (o: {
      db: string;
      instances: number;
      tenants: number;
      memories: number;
      clients: number;
      duration: number;
      seedBatch: number;
      mix?: string;
      workload?: string;
      keep?: boolean;
      reuseDb?: string;
      rate?: number;
      out?: string;
      label?: string;
    }) => {
      const { parseMix, runServe } = await import('./serve.js');
      const mix = o.mix === undefined ? undefined : parseMix(o.mix);
      const r = await runServe(
        {
          admin: o.db,
          instances: o.instances,
          tenants: o.tenants,
          memories: o.memories,
          clients: o.clients,
          durationS: o.duration,
          seedBatch: o.seedBatch,
          mix,
          workload: o.workload,
          keep: o.keep === true,
          reuseDb: o.reuseDb,
          rate: o.rate,
        },
        stderr,
      );
      // The Postgres URL is the harness's, not a configuration of the result: no `postgres` label.
      await finish(
        { out: o.out, label: o.label ?? `${o.memories / 1000}k${o.rate ? `-open${o.rate}` : ''}` },
        r,
        () =>
          [
            table([
              ['op', 'count', 'per_s', 'p50_ms', 'p95_ms', 'p99_ms'],
              ...Object.entries(r.ops).map(([k, v]) => [
                k,
                String(v.count),
                String(v.per_s),
                String(v.p50_ms ?? '—'),
                String(v.p95_ms ?? '—'),
                String(v.p99_ms ?? '—'),
              ]),
            ]),
            `errors ${r.metrics.errors}, lost writes ${r.metrics.lost_writes}, foreign results ${r.metrics.foreign_results}, journals ${r.metrics.journals_ok ? 'verify' : 'DO NOT verify'}; recall hit@5 ${r.metrics['recall_hit@5']}; ${r.metrics.seed_writes_per_s === null ? 'database reused' : `seeded ${r.metrics.seed_writes_per_s} writes/s`}`,
          ].join('\n'),
      );
      if (
        r.metrics.errors ||
        r.metrics.lost_writes ||
        r.metrics.foreign_results ||
        !r.metrics.journals_ok
      )
        process.exitCode = 1;
    },
  );

/** Exit codes as the product CLI's: 1 for bad input, 2 for a refusal, 3 for internal errors. */
const EXIT: Record<string, number> = {
  invalid: 1,
  not_found: 1,
  conflict: 2,
  refused: 2,
  locked: 2,
};

try {
  await program.parseAsync(argv, { from: 'user' });
} catch (e) {
  if (e instanceof CommanderError) {
    process.exitCode = ['commander.helpDisplayed', 'commander.help'].includes(e.code) ? 0 : 1;
  } else if (e instanceof MnemeError) {
    if (program.opts().json) stdout(`${JSON.stringify({ error: e.toJSON() }, null, 2)}\n`);
    stderr(`mneme bench: ${e.message}${e.hint ? `\n  hint: ${e.hint}` : ''}\n`);
    process.exitCode = EXIT[e.code] ?? 3;
  } else {
    stderr(`mneme bench: internal error: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 3;
  }
}
