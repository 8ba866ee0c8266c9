// Benchmark (not a test): index rebuild and in-process recall, side by side for several builds
// of mneme (git worktrees, each built with `npm run build`), on the scale workload
// (../shared/bench/gen-workload.mjs, seed 42). Each build seeds its own store through its own
// engine (batches of 500, durable writes off: the store's content is what `bench scale` writes,
// only faster to make); then rounds alternate between the builds, each measurement a fresh child
// process, so machine load hits every build alike. Per build: rebuild wall and CPU seconds, recall
// p50/p95 and CPU per query over the workload's 200 queries, recall_hit@5, and whether every
// build ranks the same memories for every query (top 5, by workload name). --callgrind K adds
// callgrind's instruction count of K rebuilds and K recall passes (each minus an open-only run).
//   node scripts/scale-ab.mjs --trees before=/work/wt/before,now=. --n 10000 [--rounds 3]
//        [--callgrind 1] [--out bench/results/FILE.json]
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { args, flag, treesFlag } from './ab-args.mjs';

const SELF = fileURLToPath(import.meta.url);
const TYPE_MAP = { note: 'fact', fact: 'fact', decision: 'decision', pattern: 'procedure' };
TYPE_MAP.lesson_learned = 'lesson';
const sha256 = (s) => crypto.createHash('sha256').update(s).digest('hex');
const opaqueKey = (key) => `bk${sha256(key).slice(0, 12)}`;
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const cpuMs = (c0) => {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : null;
};
const r4 = (x) => (x === null ? null : Math.round(x * 1e4) / 1e4);

// ---- child: one measurement in a fresh process ------------------------------------------------
async function openTree(tree, store) {
  const dist = path.join(tree, 'dist', 'src', 'surfaces');
  const root = ['compose.js', 'open.js'].map((f) => path.join(dist, f)).find(fs.existsSync);
  const { openEngine } = await import(pathToFileURL(root).href);
  return openEngine({
    store,
    cwd: store,
    env: { ...process.env, MNEME_DATABASE_URL: '', MNEME_DURABLE: '0' },
    embedder: 'off',
    // The bench harness's fixed project (projectScope('bench:fixed', 'bench')).
    binding: { project: `bench-${sha256('bench:fixed').slice(0, 8)}`, identity: 'bench' },
    surface: 'human',
  });
}

async function child([mode, tree, store, workloadFile]) {
  const w = JSON.parse(fs.readFileSync(workloadFile, 'utf8'));
  const engine = await openTree(tree, store);
  const out = {};
  if (mode === 'seed') {
    const names = [];
    for (let i = 0; i < w.memories.length; i += 500) {
      const ops = w.memories.slice(i, i + 500).map((m) => {
        const obs = m.observations.join('\n');
        return {
          op: 'remember',
          type: TYPE_MAP[m.type] ?? 'fact',
          abstract: obs.split('\n')[0].slice(0, 240),
          body: obs,
          fields: { subject: opaqueKey(m.name) },
          tags: m.tags,
          global: true,
        };
      });
      const res = await engine.apply(ops, { kind: 'human' });
      res.forEach((r, j) => names.push([r.id, w.memories[i + j].name]));
    }
    fs.writeFileSync(path.join(store, '..', 'names.json'), JSON.stringify(names));
  } else if (mode === 'rebuild') {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    await engine.rebuild();
    out.wall_s = ms(t0) / 1000;
    out.cpu_s = cpuMs(c0) / 1000;
  } else if (mode === 'recall') {
    for (const q of w.warmup ?? []) await engine.recall(q.query, { limit: 5, logUsage: false });
    const times = [];
    const top = [];
    const c0 = process.cpuUsage();
    for (const q of w.queries) {
      const t0 = process.hrtime.bigint();
      const r = await engine.recall(q.query, { limit: 5, logUsage: false });
      times.push(ms(t0));
      top.push(r.results.slice(0, 5).map((x) => x.id));
    }
    out.cpu_per_query_ms = cpuMs(c0) / w.queries.length;
    out.times = times;
    out.top = top;
  } else if (mode === 'warm') {
    for (const q of w.warmup ?? []) await engine.recall(q.query, { limit: 5, logUsage: false });
  } // 'open': only the engine's open and close, the baseline of a callgrind count
  await engine.close();
  process.stdout.write(JSON.stringify(out));
}

if (args[0] === '--child') {
  await child(args.slice(1));
  process.exit(0);
}

// ---- main: seed, then interleaved rounds ------------------------------------------------------
const trees = treesFlag();
const n = Number(flag('--n', '10000'));
const rounds = Number(flag('--rounds', '3'));
const grind = Number(flag('--callgrind', '0'));
const out = flag('--out', '');
const root = path.resolve(path.dirname(SELF), '..');
const generator = path.resolve(root, '..', 'shared', 'bench', 'gen-workload.mjs');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-scale-ab-'));
const workload = path.join(tmp, `workload-${n}.json`);
const gen = spawnSync(
  process.execPath,
  [generator, '--n', String(n), '--queries', '200', '--warmup', '10', '--seed', '42'].concat([
    '--out',
    workload,
  ]),
  { encoding: 'utf8' },
);
if (gen.status !== 0) throw new Error(`workload generator failed: ${gen.stderr}`);
const w = JSON.parse(fs.readFileSync(workload, 'utf8'));

const run = (s, mode, under = []) => {
  const r = spawnSync(
    under.length ? under[0] : process.execPath,
    [...under.slice(1), ...(under.length ? [process.execPath] : []), SELF, '--child', mode].concat([
      s.dir,
      s.store,
      workload,
    ]),
    { encoding: 'utf8', maxBuffer: 1 << 28 },
  );
  if (r.status !== 0) throw new Error(`${s.label} ${mode}: ${r.stderr.slice(-2000)}`);
  const m = /Collected : (\d+)/.exec(r.stderr);
  return { ...JSON.parse(r.stdout || '{}'), instructions: m ? Number(m[1]) : null };
};
const git = (dir, ...a) =>
  spawnSync('git', ['-C', dir, ...a], { encoding: 'utf8' }).stdout.trim() || null;

const setups = trees.map((t, i) => {
  const dir = path.join(tmp, `tree-${i}`);
  fs.mkdirSync(dir);
  return {
    ...t,
    commit: git(t.dir, 'rev-parse', '--short', 'HEAD'),
    dirty: (git(t.dir, 'status', '--porcelain', '--untracked-files=no') ?? '') !== '',
    store: path.join(dir, 'store'),
    rebuild: [],
    rebuildCpu: [],
    recall: [],
    recallCpu: [],
    grind: { open: [], warm: [], rebuild: [], recall: [] },
  };
});
for (const s of setups) {
  const t0 = process.hrtime.bigint();
  run(s, 'seed');
  const names = JSON.parse(fs.readFileSync(path.join(s.store, '..', 'names.json'), 'utf8'));
  s.nameOf = new Map(names);
  console.error(`${s.label}: seeded ${n} in ${(ms(t0) / 1000).toFixed(1)} s`);
}
for (let r = 0; r < rounds; r++) {
  for (const s of setups) {
    const x = run(s, 'rebuild');
    s.rebuild.push(x.wall_s);
    s.rebuildCpu.push(x.cpu_s);
  }
  for (const s of setups) {
    const x = run(s, 'recall');
    s.recall.push(...x.times);
    s.recallCpu.push(x.cpu_per_query_ms);
    s.top = x.top.map((ids) => ids.map((id) => s.nameOf.get(id)));
  }
  console.error(`round ${r + 1}/${rounds} done`);
}
const CG = ['valgrind', '--tool=callgrind', '--callgrind-out-file=/dev/null'];
for (let r = 0; r < grind; r++)
  for (const s of setups)
    for (const mode of ['open', 'rebuild', 'warm', 'recall'])
      s.grind[mode].push(run(s, mode, CG).instructions);

const first = setups[0];
const rows = setups.map((s) => {
  const hits = w.queries.filter((q, i) => s.top[i].includes(q.target)).length;
  const sameTop = w.queries.filter((_, i) => s.top[i].join() === first.top[i].join()).length;
  const med = (xs) => pct(xs, 50);
  return {
    label: s.label,
    commit: s.commit,
    uncommitted_changes: s.dirty,
    memories: n,
    rounds,
    rebuild_s: s.rebuild.map(r4),
    rebuild_median_s: r4(med(s.rebuild)),
    rebuild_cpu_median_s: r4(med(s.rebuildCpu)),
    recall_p50_ms: r4(pct(s.recall, 50)),
    recall_p95_ms: r4(pct(s.recall, 95)),
    recall_cpu_per_query_ms: s.recallCpu.map(r4),
    'recall_hit@5': r4(hits / w.queries.length),
    [`same_top5_as_${first.label}`]: `${sameTop}/${w.queries.length}`,
    ...(grind
      ? {
          callgrind_rebuild_instructions: s.grind.rebuild.map((x, i) => x - s.grind.open[i]),
          callgrind_recall_instructions: s.grind.recall.map((x, i) => x - s.grind.warm[i]),
        }
      : {}),
  };
});
fs.rmSync(tmp, { recursive: true, force: true });
const report = {
  bench: 'scale-ab',
  at: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  loadavg_1m: +os.loadavg()[0].toFixed(2),
  workload: { n, queries: w.queries.length, seed: 42 },
  results: rows,
};
console.log(JSON.stringify(report, null, 1));
if (out) {
  fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify(report, null, 1)}\n`);
}
