// Scale: the shared synthetic workload (../shared/bench/gen-workload.mjs) written memory by
// memory through engine.apply on a durable store (what users get), then recall latency in
// process and as a whole `mneme recall` process, the SessionStart hook, rebuild, disk and RSS.
// Memories go to the global scope so that the spawned CLI sees them from any working directory.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MnemeError } from '../../src/core/errors.js';
import type { RankingModel } from '../../src/core/ranking.js';
import { BENCH_ACTOR, freshStore, progress, readDataFile, type DataFile } from './harness.js';
import { opaqueKey } from './ingest.js';
import { percentile, round4 } from './metrics.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository root (this file runs from dist/bench/src/). */
export const REPO_ROOT = path.resolve(here, '../../..');
export const BIN = path.join(REPO_ROOT, 'bin', 'mneme.js');
export const GENERATOR = path.resolve(REPO_ROOT, '..', 'shared', 'bench', 'gen-workload.mjs');

export interface Workload {
  meta?: Record<string, unknown>;
  memories: { name: string; type: string; observations: string[]; tags: string[] }[];
  warmup?: { query: string; target: string }[];
  queries: { query: string; target: string }[];
}

/** The workload's memory types as mneme's. */
const TYPE_MAP: Record<string, string> = {
  note: 'fact',
  fact: 'fact',
  decision: 'decision',
  pattern: 'procedure',
  lesson_learned: 'lesson',
};

/** A workload memory as the remember op that writes it (its name as an opaque subject key). */
export function rememberOp(m: Workload['memories'][number]) {
  const obs = m.observations.join('\n');
  return {
    op: 'remember' as const,
    type: TYPE_MAP[m.type] ?? 'fact',
    abstract: obs.split('\n')[0]!.slice(0, 240),
    body: obs,
    fields: { subject: opaqueKey(m.name) },
    tags: m.tags,
  };
}

export interface ScaleConfig {
  ranker?: Partial<RankingModel>;
  durable?: boolean;
  /** How many of the last writes give the write-latency percentiles. */
  tailWrites?: number;
  /** Ops per `apply` in the batched ingest (into a second store of its own; 0 skips it). */
  batch?: number;
  cliRuns?: number;
  generator?: string;
}

function checkWorkload(json: unknown, file: string): Workload {
  const w = json as Workload;
  if (!w || !Array.isArray(w.memories) || !Array.isArray(w.queries))
    throw new MnemeError('invalid', `${file} is not a workload file`, {
      hint: 'make one with node ../shared/bench/gen-workload.mjs --n 10000 --out FILE',
    });
  return w;
}

export function generateWorkload(n: number, generator = GENERATOR): { file: string; dir: string } {
  if (!fs.existsSync(generator))
    throw new MnemeError('invalid', `the workload generator is not at ${generator}`, {
      hint: 'run from a checkout next to ../shared/bench, or pass --workload FILE',
    });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-workload-'));
  const file = path.join(dir, `workload-${n}.json`);
  const r = spawnSync(
    process.execPath,
    [
      generator,
      '--n',
      String(n),
      '--queries',
      '200',
      '--warmup',
      '10',
      '--seed',
      '42',
      '--out',
      file,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new MnemeError('internal', `workload generator failed: ${r.stderr}`);
  return { file, dir };
}

function duBytes(p: string): number {
  let total = 0;
  const st = fs.statSync(p, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.size;
  for (const e of fs.readdirSync(p)) total += duBytes(path.join(p, e));
  return total;
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

function spawnTimes(
  args: (i: number) => string[],
  env: NodeJS.ProcessEnv,
  runs: number,
  cwd: string,
  check: { input?: string; stdoutHas?: string } = {},
) {
  const times: number[] = [];
  let failed: string | null = null;
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [BIN, ...args(i)], {
      env,
      cwd,
      encoding: 'utf8',
      ...(check.input !== undefined ? { input: check.input } : {}),
    });
    times.push(ms(t0));
    const ok = r.status === 0 && (!check.stdoutHas || r.stdout.includes(check.stdoutHas));
    if (!ok && failed === null) failed = (r.stderr || r.stdout).slice(0, 300);
  }
  return { times, failed };
}

/** Whether this checkout's CLI has `hook session-start` yet. */
function hasHook(env: NodeJS.ProcessEnv): boolean {
  const r = spawnSync(process.execPath, [BIN, '--help'], { env, encoding: 'utf8' });
  if (!/^\s+hook\b/m.test(r.stdout)) return false;
  const h = spawnSync(process.execPath, [BIN, 'hook', '--help'], { env, encoding: 'utf8' });
  return /session-start/.test(h.stdout);
}

/**
 * The workload written into a store of its own `size` ops per `engine.apply` (what an import, the
 * distiller or a burst of requests does): memories per second and each apply's latency.
 */
async function batchedIngest(
  w: Workload,
  size: number,
  durable: boolean,
  stderr: (s: string) => void,
): Promise<{ size: number; perS: number; applyMs: number[] } | null> {
  if (size <= 0) return null;
  const n = w.memories.length;
  const store = await freshStore({ durable });
  try {
    const bar = progress(`scale ${n} batched ingest`, n, stderr);
    const applyMs: number[] = [];
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i += size) {
      const ops = w.memories.slice(i, i + size).map((m) => ({ ...rememberOp(m), global: true }));
      const a0 = process.hrtime.bigint();
      await store.engine.apply(ops, BENCH_ACTOR);
      applyMs.push(ms(a0));
      bar.tick(Math.min(n, i + size));
    }
    return { size, perS: n / (ms(t0) / 1000), applyMs };
  } finally {
    await store.dispose();
  }
}

export async function runScaleOne(
  w: Workload,
  source: { file: string; sha256: string | null },
  cfg: ScaleConfig,
  stderr: (s: string) => void,
) {
  const n = w.memories.length;
  const durable = cfg.durable ?? true;
  const tail = Math.min(cfg.tailWrites ?? 200, n);
  const bench = await freshStore({ durable, ranker: cfg.ranker });
  try {
    const nameOf = new Map<string, string>();
    const writeMs: number[] = [];
    const bar = progress(`scale ${n} ingest`, n, stderr);
    const t0 = process.hrtime.bigint();
    for (const [i, m] of w.memories.entries()) {
      const op = { ...rememberOp(m), global: true };
      const w0 = process.hrtime.bigint();
      const [r] = await bench.engine.apply([op], BENCH_ACTOR);
      writeMs.push(ms(w0));
      nameOf.set(r!.id, m.name);
      bar.tick(i + 1);
    }
    const ingestS = ms(t0) / 1000;
    const lastWrites = writeMs.slice(-tail);
    const firstWrites = writeMs.slice(0, tail);
    const batched = await batchedIngest(w, cfg.batch ?? 100, durable, stderr);

    for (const q of w.warmup ?? [])
      await bench.engine.recall(q.query, { limit: 5, logUsage: false });
    const recallMs: number[] = [];
    let hits = 0;
    for (const q of w.queries) {
      const r0 = process.hrtime.bigint();
      const r = await bench.engine.recall(q.query, {
        limit: 5,
        logUsage: false,
      });
      recallMs.push(ms(r0));
      if (r.results.slice(0, 5).some((x) => nameOf.get(x.id) === q.target)) hits++;
    }

    await bench.close();
    const env = { ...process.env, MNEME_HOME: bench.dir, MNEME_DURABLE: '1' };
    const cwd = os.tmpdir();
    const runs = cfg.cliRuns ?? 20;
    stderr(`scale ${n}: ${runs} whole-process recalls…\n`);
    const cli = spawnTimes(
      (i) => ['recall', ...w.queries[i % w.queries.length]!.query.split(' '), '--json'],
      env,
      runs,
      cwd,
    );
    let hook: { times: number[]; failed: string | null } | null = null;
    if (hasHook(env)) {
      stderr(`scale ${n}: ${runs} session-start hooks…\n`);
      // A Claude Code SessionStart payload; the run counts only if the block was injected.
      const payload = JSON.stringify({
        session_id: 'bench',
        transcript_path: '',
        cwd,
        hook_event_name: 'SessionStart',
        source: 'startup',
      });
      hook = spawnTimes(() => ['hook', 'session-start'], env, runs, cwd, {
        input: payload,
        stdoutHas: 'mneme-memory',
      });
    }

    const reopened = await freshStore({ durable, dir: bench.dir });
    stderr(`scale ${n}: rebuild…\n`);
    const b0 = process.hrtime.bigint();
    await reopened.engine.rebuild();
    const rebuildS = ms(b0) / 1000;
    await reopened.close();
    const indexBytes = duBytes(path.join(bench.dir, '.index'));
    const storeBytes = duBytes(bench.dir);
    await reopened.dispose();

    const mb = (b: number) => round4(b / 2 ** 20);
    return {
      n,
      metrics: {
        ingest_per_s: round4(n / ingestS),
        batch_ingest_per_s: batched ? round4(batched.perS) : null,
        batch_p50_ms: batched ? round4(percentile(batched.applyMs, 50)) : null,
        write_p50_ms: round4(percentile(lastWrites, 50)),
        write_p95_ms: round4(percentile(lastWrites, 95)),
        write_first_p50_ms: round4(percentile(firstWrites, 50)),
        recall_p50_ms: round4(percentile(recallMs, 50)),
        recall_p95_ms: round4(percentile(recallMs, 95)),
        'recall_hit@5': round4(hits / w.queries.length),
        cli_recall_p50_ms: round4(percentile(cli.times, 50)),
        cli_recall_p95_ms: round4(percentile(cli.times, 95)),
        hook_p50_ms: hook ? round4(percentile(hook.times, 50)) : null,
        rebuild_s: round4(rebuildS),
        index_mb: mb(indexBytes),
        store_mb: mb(storeBytes),
        peak_rss_mb: round4(process.resourceUsage().maxRSS / 1024),
      },
      notes: [
        ...(cli.failed ? [`a whole-process recall failed: ${cli.failed}`] : []),
        ...(hook === null
          ? ['hook_p50_ms is null: this build has no `mneme hook session-start` yet']
          : hook.failed
            ? [`a session-start hook run failed: ${hook.failed}`]
            : []),
        'ingest_per_s is per-call ingest: one op per `engine.apply`, each its own commit',
        ...(batched
          ? [
              `batch_ingest_per_s: memories/s writing the same workload into a second store with ${batched.size} ops per \`engine.apply\` (batch_p50_ms: one such apply)`,
            ]
          : []),
        `write latency percentiles are over the last ${tail} of ${n} writes (write_first_p50_ms: the first ${tail})`,
        'peak_rss_mb is the bench process peak so far (process.resourceUsage().maxRSS), monotonic across sizes',
      ],
      workload: { ...source, meta: w.meta ?? null, queries: w.queries.length },
    };
  } finally {
    await bench.dispose();
  }
}

export async function runScale(
  spec: { ns?: number[]; workload?: string },
  cfg: ScaleConfig,
  stderr: (s: string) => void,
) {
  const runs = [];
  if (spec.workload) {
    const data: DataFile = readDataFile(spec.workload);
    runs.push(
      await runScaleOne(
        checkWorkload(data.json, spec.workload),
        { file: data.path, sha256: data.sha256 },
        cfg,
        stderr,
      ),
    );
  } else {
    for (const n of spec.ns ?? [1000, 10000]) {
      stderr(`scale ${n}: generating the workload (seed 42)…\n`);
      const gen = generateWorkload(n, cfg.generator);
      try {
        const data = readDataFile(gen.file);
        const r = await runScaleOne(
          checkWorkload(data.json, gen.file),
          {
            file: `gen-workload.mjs --n ${n} --queries 200 --warmup 10 --seed 42`,
            sha256: data.sha256,
          },
          cfg,
          stderr,
        );
        runs.push(r);
      } finally {
        fs.rmSync(gen.dir, { recursive: true, force: true });
      }
    }
  }
  const last = runs[runs.length - 1]!;
  return {
    benchmark: 'scale',
    n: last.n,
    metrics: last.metrics,
    by_n: Object.fromEntries(runs.map((r) => [String(r.n), r.metrics])),
    runs,
    config: {
      durable: cfg.durable ?? true,
      ranker: cfg.ranker ?? {},
      tail_writes: cfg.tailWrites ?? 200,
      batch: cfg.batch ?? 100,
      cli_runs: cfg.cliRuns ?? 20,
      scope: 'global (so the spawned CLI sees the memories from any directory)',
    },
  };
}
