// The knowledge index on a real repository's documents (issue 19): a full refresh and an
// incremental one (one document changed) — time, files, chunks and bytes — then recall latency
// with knowledge on and off over a store of N memories, the two measured side by side in one run
// (alternating per query, so machine noise falls on both alike).
//   node dist/bench/src/knowledge.js [--repo /work/main] [--n 10000] [--queries 200]
//     [--out bench/results/knowledge-<date>.json]
// The repository is cloned to a temp directory first (git clone --local), so it is never touched.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openEngine } from '../../src/surfaces/compose.js';
import { BENCH_ACTOR, gitCommit, machine } from './harness.js';
import { REPO_ROOT, generateWorkload, rememberOp, type Workload } from './scale.js';

const { values } = parseArgs({
  options: {
    repo: { type: 'string', default: '/work/main' },
    n: { type: 'string', default: '10000' },
    queries: { type: 'string', default: '200' },
    out: { type: 'string' },
  },
});
const n = Number(values.n);
const queryCount = Number(values.queries);
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const round = (x: number) => Math.round(x * 1000) / 1000;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const sizeOf = (f: string) =>
  [f, `${f}-wal`].reduce((t, x) => t + (fs.statSync(x, { throwIfNoEntry: false })?.size ?? 0), 0);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-bench-knowledge-'));
const clone = path.join(tmp, 'repo');
const storeDir = path.join(tmp, 'store');
execFileSync('git', ['clone', '-q', '--local', path.resolve(values.repo!), clone]);
const engine = await openEngine({
  cwd: clone,
  store: storeDir,
  surface: 'human',
  env: { ...process.env, MNEME_DATABASE_URL: '', MNEME_DURABLE: '0' },
  embedder: 'off',
});
const knowledgeFile = path.join(storeDir, '.index', 'knowledge.db');

try {
  let t0 = process.hrtime.bigint();
  const full = await engine.refreshKnowledge();
  const fullMs = ms(t0);
  const fullBytes = sizeOf(knowledgeFile);

  t0 = process.hrtime.bigint();
  const unchanged = await engine.refreshKnowledge();
  const unchangedMs = ms(t0);

  // One document changed: a paragraph appended to the README.
  const readme = path.join(clone, 'README.md');
  fs.appendFileSync(readme, '\n\nA paragraph added by the knowledge benchmark.\n');
  t0 = process.hrtime.bigint();
  const incremental = await engine.refreshKnowledge();
  const incrementalMs = ms(t0);

  // N memories, then recall with knowledge on and off, alternating query by query.
  const { file, dir } = generateWorkload(n);
  const w = JSON.parse(fs.readFileSync(file, 'utf8')) as Workload;
  fs.rmSync(dir, { recursive: true, force: true });
  t0 = process.hrtime.bigint();
  const batch = 500;
  for (let i = 0; i < w.memories.length; i += batch)
    await engine.apply(w.memories.slice(i, i + batch).map(rememberOp), BENCH_ACTOR);
  const ingestS = ms(t0) / 1000;

  // Workload queries (memory-shaped) and documentation queries (knowledge-shaped), mixed.
  const docQueries = [
    'how does purge erase a value',
    'tombstone normalisation lookalike characters',
    'session start injection budget',
    'postgres tenant token',
    'distiller reconcile sheet',
    'vector arm embedder',
    'journal verify chain repair',
    'hook timeout exit code',
  ];
  const queries = [
    ...w.queries.slice(0, queryCount).map((q) => q.query),
    ...Array.from(
      { length: Math.ceil(queryCount / 4) },
      (_, i) => docQueries[i % docQueries.length]!,
    ),
  ];
  for (const q of queries.slice(0, 10)) {
    await engine.recall(q, { logUsage: false });
    await engine.recall(q, { logUsage: false, knowledge: false });
  }
  const on: number[] = [];
  const off: number[] = [];
  let withKnowledge = 0;
  let knowledgeServed = 0;
  for (const [i, q] of queries.entries()) {
    const order = i % 2 === 0 ? [true, false] : [false, true];
    for (const k of order) {
      const s = process.hrtime.bigint();
      const r = await engine.recall(q, { logUsage: false, knowledge: k });
      (k ? on : off).push(ms(s));
      if (k && r.knowledge) {
        withKnowledge++;
        knowledgeServed += r.knowledge.length;
      }
    }
  }

  const result = {
    benchmark: 'knowledge',
    name: 'knowledge',
    label: 'default',
    command: `node dist/bench/src/knowledge.js --repo ${values.repo} --n ${n} --queries ${queryCount}`,
    date: new Date().toISOString(),
    git_commit: gitCommit(REPO_ROOT),
    docs_commit: gitCommit(values.repo!),
    machine: machine(),
    n,
    refresh: {
      full: { ms: round(fullMs), ...full, index_bytes: fullBytes },
      unchanged: { ms: round(unchangedMs), ...unchanged },
      incremental_one_file: { ms: round(incrementalMs), ...incremental },
    },
    recall: {
      memories: n,
      ingest_s: round(ingestS),
      queries: queries.length,
      knowledge_on_ms: {
        p50: round(pct(on, 50)),
        p95: round(pct(on, 95)),
        p99: round(pct(on, 99)),
      },
      knowledge_off_ms: {
        p50: round(pct(off, 50)),
        p95: round(pct(off, 95)),
        p99: round(pct(off, 99)),
      },
      queries_with_knowledge: withKnowledge,
      knowledge_hits_served: knowledgeServed,
    },
    metrics: {
      full_refresh_ms: round(fullMs),
      incremental_refresh_ms: round(incrementalMs),
      unchanged_refresh_ms: round(unchangedMs),
      index_bytes: fullBytes,
      chunks: full.chunks,
      recall_on_p50_ms: round(pct(on, 50)),
      recall_off_p50_ms: round(pct(off, 50)),
      recall_on_p95_ms: round(pct(on, 95)),
      recall_off_p95_ms: round(pct(off, 95)),
    },
  };
  const out = path.resolve(
    values.out ??
      path.join(REPO_ROOT, 'bench', 'results', `knowledge-${result.date.slice(0, 10)}.json`),
  );
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify(result, null, 1)}\n`);
  process.stdout.write(`${JSON.stringify(result.metrics, null, 1)}\nwritten to ${out}\n`);
} finally {
  await engine.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
