// Embedded recall at 10k, old and new code side by side in one process: the same workload
// (gen-workload.mjs --n 10000 --seed 42) written to a files store by each, then the 200
// queries asked alternately of each (limit 5, as bench scale does), so load hits both alike.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
// usage: node scripts/recall-side-by-side.mjs <old dist root> <new dist root> [out.json]
const [oldRoot, newRoot, out] = process.argv.slice(2);
const wfile = '/tmp/rk/workload-10000.json';
if (!fs.existsSync(wfile))
  spawnSync(
    process.execPath,
    [
      '/work/shared/bench/gen-workload.mjs',
      '--n',
      '10000',
      '--queries',
      '200',
      '--warmup',
      '10',
      '--seed',
      '42',
      '--out',
      wfile,
    ],
    { stdio: 'inherit' },
  );
const w = JSON.parse(fs.readFileSync(wfile, 'utf8'));
// As bench scale maps the generator's types.
const TYPE_MAP = {
  note: 'fact',
  fact: 'fact',
  decision: 'decision',
  pattern: 'procedure',
  lesson_learned: 'lesson',
};
async function build(root) {
  const { freshStore, BENCH_ACTOR } = await import(`${root}/src/bench/harness.js`);
  const bench = await freshStore({ durable: false });
  const nameOf = new Map();
  for (let i = 0; i < w.memories.length; i += 100) {
    const ops = w.memories.slice(i, i + 100).map((m) => {
      const obs = m.observations.join('\n');
      return {
        op: 'remember',
        type: TYPE_MAP[m.type] ?? 'fact',
        abstract: obs.split('\n')[0].slice(0, 240),
        body: obs,
        fields: {
          subject: `s${i}-${m.name.length}-${[...m.name].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7).toString(36)}`,
        },
        tags: m.tags,
        global: true,
      };
    });
    const rs = await bench.engine.apply(ops, BENCH_ACTOR);
    rs.forEach((r, k) => r.id && nameOf.set(r.id, w.memories[i + k].name));
  }
  return { bench, nameOf };
}
const sides = { old: await build(oldRoot), new: await build(newRoot) };
for (const q of w.warmup ?? [])
  for (const s of Object.values(sides))
    await s.bench.engine.recall(q.query, { limit: 5, logUsage: false });
const t = { old: [], new: [] };
const cpu = { old: [], new: [] };
const hit = { old: 0, new: 0 };
for (const q of w.queries)
  for (const k of ['old', 'new']) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const r = await sides[k].bench.engine.recall(q.query, { limit: 5, logUsage: false });
    t[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
    const c = process.cpuUsage(c0);
    cpu[k].push((c.user + c.system) / 1000);
    if (r.results.some((x) => sides[k].nameOf.get(x.id) === q.target)) hit[k]++;
  }
const pct = (a, p) => {
  const s = [...a].sort((x, y) => x - y);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 1000) / 1000;
};
const res = {
  n: w.memories.length,
  queries: w.queries.length,
  old: {
    commit: '30ef15e',
    recall_p50_ms: pct(t.old, 50),
    recall_p95_ms: pct(t.old, 95),
    recall_cpu_p50_ms: pct(cpu.old, 50),
    recall_cpu_total_ms: Math.round(cpu.old.reduce((a, b) => a + b, 0)),
    'hit@5': hit.old / w.queries.length,
  },
  new: {
    recall_p50_ms: pct(t.new, 50),
    recall_p95_ms: pct(t.new, 95),
    recall_cpu_p50_ms: pct(cpu.new, 50),
    recall_cpu_total_ms: Math.round(cpu.new.reduce((a, b) => a + b, 0)),
    'hit@5': hit.new / w.queries.length,
  },
  method:
    'one process, same workload (gen-workload.mjs --n 10000 --queries 200 --warmup 10 --seed 42, non-durable writes), the 200 queries asked alternately of the old and new engine (limit 5); wall and CPU time (process.cpuUsage) per recall',
  date: new Date().toISOString(),
};
console.log(JSON.stringify(res, null, 1));
if (out) fs.writeFileSync(out, JSON.stringify(res, null, 1) + '\n');
for (const s of Object.values(sides)) await s.bench.dispose();
