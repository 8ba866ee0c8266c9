// `mneme bench …`: the benchmark harness on the command line. Each subcommand prints a summary
// (or --json the run's result object); --out FILE writes the result there and nowhere else;
// --json goes with the program's global flag; without --out it writes bench/results/<name>-<date>.json and regenerates docs/benchmarks.md.
import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { MnemeError } from '../../core/errors.js';
import { DEFAULT_RANKING, type RankingModel } from '../../core/ranking.js';
import type { RunEnvelope } from '../../bench/results.js';

// The harness is loaded only when a bench command runs, so everyday commands start fast.
const results = () => import('../../bench/results.js');
const scale = () => import('../../bench/scale.js');
import type { CliContext } from './run.js';
import { table } from './format.js';

interface Common {
  out?: string;
  label?: string;
  ranker?: Partial<RankingModel>;
  vector?: string;
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
    .filter(([, d]) => typeof d === 'boolean' || typeof d === 'number')
    .map(([key]) => key);
  if (!k || raw === undefined || !known.includes(k))
    throw new MnemeError('invalid', `--ranker "${v}" is not key=value with a known key`, {
      hint: `keys: ${known.join(', ')}`,
    });
  const def = DEFAULT_RANKING[k as keyof RankingModel];
  let value: boolean | number;
  if (typeof def === 'boolean') {
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
    .option('--ranker <key=value>', 'ranker switch, e.g. prf=off (repeatable)', parseRanker);
}

/** `--vector KIND`: the vector arm fused in, its embedder configured as for recall (MNEME_EMBED_*). */
const withVector = (cmd: Command) =>
  cmd.option('--vector <embedder>', 'fuse the vector arm in: hash, openai, ollama, transformers');

async function benchEmbedder(c: CliContext, o: Common) {
  if (!o.vector) return {};
  const { embedderFrom } = await import('../embed/settings.js');
  const { loadSettings } = await import('../config/settings.js');
  const embedder = embedderFrom(
    loadSettings({ ...c.globals(), embedder: o.vector }, c.io.env).settings,
  );
  return embedder ? { embedder } : {};
}

async function finish(
  c: CliContext,
  argv: string[],
  o: Common,
  result: { benchmark: string; n: number; metrics: Record<string, number | null> },
  human: () => string,
) {
  const label =
    o.label ??
    ([
      ...(c.globals().db ? ['postgres'] : []),
      ...Object.entries(o.ranker ?? {}).map(([k, v]) => `${k}-${String(v)}`),
      ...(o.vector ? [`vector-${o.vector}`] : []),
    ].join('_') ||
      'default');
  const { envelope, regenerateDocs, writeDefault } = await results();
  const { REPO_ROOT } = await scale();
  const run: RunEnvelope = envelope(result, {
    label,
    command: ['mneme', 'bench', ...argv].join(' '),
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
  if (c.globals().json) c.io.stdout(`${JSON.stringify(run, null, 2)}\n`);
  else c.io.stdout(`${human()}\n${where}\n`);
}

const metricsTable = (rows: [string, Record<string, number>][], keys: readonly string[]) =>
  table([
    ['', 'n', ...keys],
    ...rows.map(([name, m]) => [name, String(m.n ?? ''), ...keys.map((k) => String(m[k] ?? '—'))]),
  ]);

/** The bench arguments as typed, for the result file's `command`. */
const argvOf = () => process.argv.slice(process.argv.indexOf('bench') + 2);

export function registerBench(c: CliContext): void {
  const bench = c.program
    .command('bench')
    .description('retrieval quality and speed benchmarks (see docs/benchmarks.md)');

  bench
    .command('docs')
    .description('regenerate docs/benchmarks.md from the committed result files')
    .action(async () => {
      const { regenerateDocs } = await results();
      const { REPO_ROOT } = await scale();
      const file = regenerateDocs(REPO_ROOT);
      c.out({ docs: file }, () => `regenerated ${path.relative(process.cwd(), file)}`);
    });

  withVector(
    common(
      bench
        .command('longmemeval')
        .description('LongMemEval-S session retrieval: a fresh store per question')
        .requiredOption('--data <file>', 'a LongMemEval .json or .json.gz file')
        .option('--limit <n>', 'only the first N questions', parsePositive('--limit'))
        .option(
          '--passage-bytes <n>',
          'split sessions into passage memories of at most this many bytes (default 4096)',
          parsePositive('--passage-bytes'),
        ),
    ),
  ).action(
    // The global --db URL runs it on Postgres: a throwaway tenant per question in that database.
    async (o: Common & { data: string; limit?: number; passageBytes?: number }) => {
      const db = c.globals().db;
      const { runLongMemEval } = await import('../../bench/longmemeval.js');
      const r = await runLongMemEval(
        o.data,
        {
          limit: o.limit,
          passageBytes: o.passageBytes,
          ranker: o.ranker,
          ...(db ? { db } : {}),
          ...(await benchEmbedder(c, o)),
        },
        c.io.stderr,
      );
      await finish(c, ['longmemeval', ...argvOf()], o, r, () =>
        metricsTable(
          [['all', { ...r.metrics, n: r.n }], ...Object.entries(r.by_type)],
          Object.keys(r.metrics),
        ),
      );
    },
  );

  bench
    .command('compare <a> <b>')
    .description(
      'per-question top-10 agreement of two result files (e.g. the same run on files and --db)',
    )
    .action(async (a: string, b: string) => {
      const { compareRuns } = await import('../../bench/compare.js');
      const read = (f: string) => {
        try {
          return JSON.parse(fs.readFileSync(f, 'utf8')) as Parameters<typeof compareRuns>[1];
        } catch (e) {
          throw new MnemeError('invalid', `cannot read result file ${f}: ${(e as Error).message}`, {
            hint: 'pass two result files written by `mneme bench longmemeval|locomo`',
          });
        }
      };
      let r;
      try {
        r = compareRuns(a, read(a), b, read(b));
      } catch (e) {
        throw new MnemeError('invalid', (e as Error).message, {
          hint: 'pass two result files written by `mneme bench longmemeval|locomo`',
        });
      }
      c.out(
        r,
        () =>
          `${r.same_top10}/${r.questions} questions with the same top-10 (${(r.agreement * 100).toFixed(1)}%); ${r.same_set} with the same top-10 set`,
      );
    });

  withVector(
    common(
      bench
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
    const { runLocomo } = await import('../../bench/locomo.js');
    const r = await runLocomo(
      o.data,
      {
        granularity: o.granularity,
        context: o.context,
        ranker: o.ranker,
        ...(await benchEmbedder(c, o)),
      },
      c.io.stderr,
    );
    await finish(c, ['locomo', ...argvOf()], o, r, () =>
      [
        metricsTable(
          [['all', { ...r.metrics, n: r.n }], ...Object.entries(r.by_category)],
          Object.keys(r.metrics),
        ),
        `skipped: ${r.skipped.no_evidence} questions without usable evidence; ${r.skipped.malformed_ids} malformed and ${r.skipped.unknown_ids} unknown evidence ids`,
      ].join('\n'),
    );
  });

  common(
    bench
      .command('scale')
      .description(
        'ingest, recall, CLI, hook and rebuild at N memories (shared workload generator)',
      )
      .option('--n <sizes>', 'comma-separated sizes', parseNs)
      .option('--workload <file>', 'a file made by gen-workload.mjs instead of --n')
      .option('--no-durable', 'skip fsync on writes (the default measures durable writes)'),
  ).action(async (o: Common & { n?: number[]; workload?: string; durable: boolean }) => {
    if (o.n && o.workload) throw new MnemeError('invalid', 'pass --n or --workload, not both');
    const { runScale } = await scale();
    const r = await runScale(
      { ns: o.workload ? undefined : (o.n ?? [1000, 10000]), workload: o.workload },
      { ranker: o.ranker, durable: o.durable },
      c.io.stderr,
    );
    await finish(c, ['scale', ...argvOf()], o, r, () => {
      const keys = Object.keys(r.metrics);
      return table([
        ['metric', ...Object.keys(r.by_n).map((n) => `N=${n}`)],
        ...keys.map((k) => [
          k,
          ...Object.values(r.by_n).map((m) => String((m as Record<string, unknown>)[k] ?? '—')),
        ]),
      ]);
    });
  });
}
