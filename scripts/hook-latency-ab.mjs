// Benchmark (not a test): `mneme hook session-start` as a whole process, side by side for several
// builds of mneme (git worktrees, each built with `npm run build`), runs interleaved so machine
// load hits every build alike. Each build seeds its own store of N memories through its own
// engine (one write path, durable writes off). Per build: wall and CPU time per run, the hook's
// own in-process time (hooks.log), the bundle's size, and optionally callgrind's instruction
// count of a run (repeatable where wall time is not).
//   node scripts/hook-latency-ab.mjs --trees before=/work/wt/before,main=/work/wt/hookbase,now=.
//        [--n 1000] [--runs 15] [--callgrind 2] [--out bench/results/FILE.json]
import { Buffer } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { args, flag, treesFlag } from './ab-args.mjs';

const trees = treesFlag();
const n = Number(flag('--n', '1000'));
const runs = Number(flag('--runs', '15'));
const grind = Number(flag('--callgrind', '0'));
const out = flag('--out', '');
const TYPES = ['fact', 'decision', 'constraint', 'procedure', 'lesson', 'preference'];

const git = (dir, ...a) =>
  spawnSync('git', ['-C', dir, ...a], { encoding: 'utf8' }).stdout.trim() || null;

async function seed(tree, home, proj) {
  const dist = path.join(tree.dir, 'dist', 'src', 'surfaces');
  // The composition root; older builds opened engines in surfaces/open.js.
  const root = ['compose.js', 'open.js']
    .map((f) => path.join(dist, f))
    .find((f) => fs.existsSync(f));
  const { openEngine } = await import(pathToFileURL(root).href);
  const { bindProject } = await import(pathToFileURL(path.join(dist, 'project.js')).href);
  const project = bindProject(proj).project;
  const engine = await openEngine({
    store: home,
    env: { MNEME_DURABLE: '0' },
    binding: { project, identity: 'bench' },
  });
  for (let i = 0; i < n; i += 500) {
    const ops = [];
    for (let j = i; j < Math.min(n, i + 500); j++)
      ops.push({
        op: 'remember',
        type: TYPES[j % TYPES.length],
        abstract: `Memory ${j}: the ${['billing', 'deploy', 'auth', 'search'][j % 4]} module keeps rule number ${j}`,
        fields: { subject: `subject ${j}` },
        global: j % 10 === 0,
      });
    await engine.apply(ops, { kind: 'human' });
  }
  await engine.close();
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : null;
};

const setups = [];
for (const tree of trees) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-bench-ab-'));
  const home = path.join(dir, 'store');
  const proj = path.join(dir, 'proj');
  fs.mkdirSync(path.join(proj, '.git'), { recursive: true });
  fs.writeFileSync(
    path.join(proj, '.git', 'config'),
    '[remote "origin"]\n\turl = git@github.com:bench/proj.git\n',
  );
  await seed(tree, home, proj);
  setups.push({
    ...tree,
    commit: git(tree.dir, 'rev-parse', '--short', 'HEAD'),
    dirty: (git(tree.dir, 'status', '--porcelain', '--untracked-files=no') ?? '') !== '',
    bundle_bytes: fs.statSync(path.join(tree.dir, 'dist', 'mneme.cjs')).size,
    tmp: dir,
    home,
    proj,
    wall: [],
    cpu: [],
    instructions: [],
  });
}

const payload = (s) =>
  JSON.stringify({
    session_id: 'bench',
    transcript_path: '',
    cwd: s.proj,
    hook_event_name: 'SessionStart',
    source: 'startup',
  });
const hookArgs = (s) => [
  process.execPath,
  path.join(s.dir, 'bin', 'mneme.js'),
  'hook',
  'session-start',
];
const envOf = (s) => ({
  ...process.env,
  MNEME_HOME: s.home,
  MNEME_DURABLE: '0',
  MNEME_SLEEP_AUTO: '0',
});

function once(s, record) {
  const [bin, ...rest] = hookArgs(s);
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', 'CPU %U %S', bin, ...rest], {
    input: payload(s),
    env: envOf(s),
    cwd: s.proj,
    encoding: 'utf8',
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0 || !r.stdout.includes('mneme-memory'))
    throw new Error(`${s.label}: the hook injected nothing: ${r.stderr}`);
  s.output_bytes = Buffer.byteLength(r.stdout);
  if (!record) return;
  s.wall.push(ms);
  const m = /CPU ([\d.]+) ([\d.]+)/.exec(r.stderr);
  if (m) s.cpu.push((Number(m[1]) + Number(m[2])) * 1000);
}

// Two warm-up runs each (page cache, and the V8 code cache bin/mneme.js writes beside the bundle).
for (const s of setups) for (let i = 0; i < 2; i++) once(s, false);
for (const s of setups) s.logFrom = readLog(s).length;
for (let r = 0; r < runs; r++) for (const s of setups) once(s, true);

function readLog(s) {
  const f = path.join(s.home, '.state', 'hooks.log');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean) : [];
}

for (let r = 0; r < grind; r++)
  for (const s of setups) {
    const res = spawnSync(
      'valgrind',
      ['--tool=callgrind', '--callgrind-out-file=/dev/null', ...hookArgs(s)],
      // Under valgrind a run is ~50x slower: lift the hook's own time limit.
      {
        input: payload(s),
        env: { ...envOf(s), MNEME_HOOK_TIMEOUT_MS: '600000' },
        cwd: s.proj,
        encoding: 'utf8',
      },
    );
    if (!res.stdout.includes('mneme-memory'))
      throw new Error(`${s.label}: under callgrind the hook injected nothing: ${res.stderr}`);
    const m = /Collected : (\d+)/.exec(res.stderr);
    if (m) s.instructions.push(Number(m[1]));
  }

const baseline = [];
for (let r = 0; r < runs; r++) {
  const t0 = process.hrtime.bigint();
  spawnSync(process.execPath, ['-e', '0']);
  baseline.push(Number(process.hrtime.bigint() - t0) / 1e6);
}

const rows = setups.map((s) => {
  const inside = readLog(s)
    .slice(s.logFrom, s.logFrom + runs)
    .map((l) => JSON.parse(l).ms);
  return {
    label: s.label,
    commit: s.commit,
    uncommitted_changes: s.dirty,
    bundle_bytes: s.bundle_bytes,
    memories: n,
    runs,
    wall_p50_ms: +pct(s.wall, 50).toFixed(1),
    wall_p95_ms: +pct(s.wall, 95).toFixed(1),
    cpu_p50_ms: s.cpu.length ? +pct(s.cpu, 50).toFixed(1) : null,
    cpu_mean_ms: s.cpu.length
      ? +(s.cpu.reduce((a, b) => a + b, 0) / s.cpu.length).toFixed(1)
      : null,
    in_hook_p50_ms: pct(inside, 50),
    output_bytes: s.output_bytes,
    ...(s.instructions.length ? { callgrind_instructions: s.instructions } : {}),
  };
});
// --keep leaves the seeded stores (for profiling a run by hand).
if (args.includes('--keep')) for (const s of setups) console.error(`${s.label}: ${s.tmp}`);
else for (const s of setups) fs.rmSync(s.tmp, { recursive: true, force: true });
const report = {
  bench: 'hook-latency-ab',
  event: 'session-start',
  at: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  loadavg_1m: +os.loadavg()[0].toFixed(2),
  node_spawn_p50_ms: +pct(baseline, 50).toFixed(1),
  results: rows,
};
console.log(JSON.stringify(report, null, 1));
if (out) {
  fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify(report, null, 1)}\n`);
}
