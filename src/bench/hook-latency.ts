// Benchmark (not a test): whole-process wall time of `mneme hook session-start` — node start,
// store open, candidate listing, the predicate, rendering — at 1k and 10k memories. The store is
// seeded through engine.apply (the one write path) with durable writes off.
//   node dist/src/bench/hook-latency.js [--n 1000,10000] [--runs 30] [--out FILE]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openEngine } from '../surfaces/compose.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
};
const sizes = flag('--n', '1000,10000').split(',').map(Number);
const runs = Number(flag('--runs', '30'));
const out = flag('--out', '');
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/mneme.js');
const TYPES = ['fact', 'decision', 'constraint', 'procedure', 'lesson', 'preference'];

async function seed(home: string, project: string, n: number) {
  const engine = await openEngine({
    store: home,
    env: { MNEME_DURABLE: '0' },
    binding: { project, identity: 'bench' },
  });
  const BATCH = 500;
  for (let i = 0; i < n; i += BATCH) {
    const ops = [];
    for (let j = i; j < Math.min(n, i + BATCH); j++) {
      ops.push({
        op: 'remember' as const,
        type: TYPES[j % TYPES.length]!,
        abstract: `Memory ${j}: the ${['billing', 'deploy', 'auth', 'search'][j % 4]} module keeps rule number ${j}`,
        fields: { subject: `subject ${j}` },
        global: j % 10 === 0,
      });
    }
    await engine.apply(ops, { kind: 'human' });
  }
  await engine.close();
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

const results: Record<string, unknown>[] = [];
for (const n of sizes) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-bench-hook-'));
  const home = path.join(dir, 'store');
  const proj = path.join(dir, 'proj');
  fs.mkdirSync(path.join(proj, '.git'), { recursive: true });
  fs.writeFileSync(
    path.join(proj, '.git', 'config'),
    '[remote "origin"]\n\turl = git@github.com:bench/proj.git\n',
  );
  const { bindProject } = await import('../surfaces/project.js');
  const t0 = Date.now();
  await seed(home, bindProject(proj).project!, n);
  const seedMs = Date.now() - t0;
  const payload = JSON.stringify({
    session_id: 'bench',
    transcript_path: '',
    cwd: proj,
    hook_event_name: 'SessionStart',
    source: 'startup',
  });
  const env = { ...process.env, MNEME_HOME: home, MNEME_DURABLE: '0' };
  const times: number[] = [];
  const cpu: number[] = [];
  let bytes = 0;
  // /usr/bin/time reports the child's CPU time, which a loaded machine distorts less than wall time.
  const timeBin = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
  for (let r = 0; r < runs + 2; r++) {
    const s = process.hrtime.bigint();
    const res = timeBin
      ? spawnSync(timeBin, ['-f', 'CPU %U %S', process.execPath, BIN, 'hook', 'session-start'], {
          input: payload,
          env,
          cwd: proj,
          encoding: 'utf8',
        })
      : spawnSync(process.execPath, [BIN, 'hook', 'session-start'], {
          input: payload,
          env,
          cwd: proj,
          encoding: 'utf8',
        });
    const ms = Number(process.hrtime.bigint() - s) / 1e6;
    if (res.status !== 0 || !res.stdout.includes('mneme-memory'))
      throw new Error(`hook failed: ${res.stderr}`);
    bytes = Buffer.byteLength(res.stdout);
    const m = /CPU ([\d.]+) ([\d.]+)/.exec(res.stderr);
    if (r >= 2) {
      times.push(ms); // the first two warm the page cache
      if (m) cpu.push((Number(m[1]) + Number(m[2])) * 1000);
    }
  }
  // The hook's own record of the time spent after node started and modules loaded.
  const inside = fs
    .readFileSync(path.join(home, '.state', 'hooks.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(2)
    .map((l) => (JSON.parse(l) as { ms: number }).ms);
  const loadavg = os.loadavg()[0]!.toFixed(2);
  const row = {
    memories: n,
    runs,
    p50_ms: +pct(times, 50).toFixed(1),
    p95_ms: +pct(times, 95).toFixed(1),
    cpu_p50_ms: cpu.length ? +pct(cpu, 50).toFixed(1) : null,
    in_hook_p50_ms: pct(inside, 50),
    in_hook_p95_ms: pct(inside, 95),
    output_bytes: bytes,
    seed_ms: seedMs,
    loadavg_1m: Number(loadavg),
  };
  results.push(row);
  console.log(JSON.stringify(row));
  fs.rmSync(dir, { recursive: true, force: true });
}
const node = spawnSync(process.execPath, ['-e', 'void 0']);
const report = {
  bench: 'hook-latency',
  event: 'session-start',
  at: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  baseline_node_spawn: node.status === 0,
  results,
};
if (out) {
  fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
}
