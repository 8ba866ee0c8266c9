// Times a whole recall on Postgres statement by statement: the engine's recall (limit 5, as
// `mneme bench serve` asks) over PostgresStore.forTenant on a kept `bench serve` database, for
// the first N queries of the shared workload, one connection, no HTTP. Per statement (by
// prepared name, or the text's first words) its runs, total ms and rows; the recalls' p50/p95
// and the process's CPU time. Writes JSON to stdout (with the load average). Run after
// `npm run build`:
//   node scripts/pg-recall-probe.mjs URL [N] [TENANT] [dist dir of another build, to compare]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';

const [url, nArg, tenantArg, distArg] = process.argv.slice(2);
if (!url) {
  console.error('usage: node scripts/pg-recall-probe.mjs URL [N] [TENANT] [DIST]');
  process.exit(2);
}
const dist = path.resolve(distArg ?? 'dist');
const tenant = tenantArg ?? 't1';
const { PostgresStore } = await import(`${dist}/src/store/postgres/postgres-store.js`);
const { createEngine } = await import(`${dist}/src/engine/engine.js`);
const { SchemaRegistry } = await import(`${dist}/src/core/schema.js`);
const { namedProjectScope } = await import(`${dist}/src/core/scope.js`);
// The workload from this checkout (next to ../shared/bench), whichever build is timed.
const { generateWorkload } = await import(`${path.resolve('dist')}/bench/src/scale.js`);

const pool = new pg.Pool({ connectionString: url, max: 1 });
const { rows: meta } = await pool.query('SELECT k, v FROM bench_serve_meta');
const size = Number(meta.find((r) => r.k === 'memories_per_tenant').v);
const g = generateWorkload(size);
const wl = JSON.parse(fs.readFileSync(g.file, 'utf8'));
fs.rmSync(g.dir, { recursive: true, force: true });
const statements = {};
/** With PG_PROBE_EXPLAIN=1: every search statement run, replayed under EXPLAIN after. */
const calls = [];
let recording = false;
const raw = pool.query.bind(pool);
pool.query = async (a, b) => {
  const name =
    typeof a === 'string'
      ? a.replace(/\s+/g, ' ').slice(0, 40)
      : (a.name ?? a.text.replace(/\s+/g, ' ').slice(0, 40));
  const t0 = performance.now();
  const r = await raw(a, b);
  const s = (statements[name] ??= { runs: 0, ms: 0, rows: 0 });
  const took = performance.now() - t0;
  s.runs++;
  s.ms += took;
  if (process.env.PG_PROBE_EXPLAIN && name.startsWith('mneme_search') && recording)
    calls.push({ name, text: typeof a === 'string' ? a : a.text, values: b ?? a.values });
  // The slowest run's parameters (for EXPLAIN), with PG_PROBE_SLOWEST=1.
  if (process.env.PG_PROBE_SLOWEST && took > (s.slowest?.ms ?? 0))
    s.slowest = { ms: took, text: typeof a === 'string' ? a : a.text, values: b ?? a.values };
  s.rows += r.rows?.length ?? 0;
  return r;
};
const store = PostgresStore.forTenant(pool, { tenant });
const engine = createEngine({
  store,
  clock: () => new Date(),
  registry: new SchemaRegistry(),
  binding: { project: namedProjectScope('bench'), identity: 'name:bench' },
  surface: 'human',
});
const n = Number(nArg ?? 60);
// Warm: the statements prepared on the connection, as on a running server.
for (const q of wl.queries.slice(n, n + 5)) await engine.recall(q.query, { limit: 5 });
for (const k of Object.keys(statements)) delete statements[k];
const loadBefore = os.loadavg();
const cpu0 = process.cpuUsage();
recording = true;
const ms = [];
for (const q of wl.queries.slice(0, n)) {
  const t0 = performance.now();
  await engine.recall(q.query, { limit: 5 });
  ms.push(performance.now() - t0);
}
const cpu = process.cpuUsage(cpu0);
recording = false;
// How the server planned the prepared statements (custom plans: planned at every run).
const { rows: plans } = await raw(
  'SELECT name, generic_plans, custom_plans FROM pg_prepared_statements ORDER BY name',
);
// Each search statement again under EXPLAIN (ANALYZE, BUFFERS): its time in the server and
// the buffers it touched, summed per statement (the recalls' own timings include the queueing
// of a busy machine; these do not include the round trip).
const explained = {};
for (const c of calls) {
  const { rows } = await raw(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${c.text}`, c.values);
  const plan = rows[0]['QUERY PLAN'][0];
  const e = (explained[c.name] ??= { runs: 0, exec_ms: 0, shared_hit: 0, shared_read: 0 });
  e.runs++;
  e.exec_ms += plan['Execution Time'];
  e.shared_hit += plan.Plan['Shared Hit Blocks'];
  e.shared_read += plan.Plan['Shared Read Blocks'];
}
if (process.env.PG_PROBE_CALLS) fs.writeFileSync(process.env.PG_PROBE_CALLS, JSON.stringify(calls));
await pool.end();
const sorted = [...ms].sort((a, b) => a - b);
const r2 = (x) => Math.round(x * 100) / 100;
for (const s of Object.values(statements)) s.ms = r2(s.ms);
for (const e of Object.values(explained)) e.exec_ms = r2(e.exec_ms);
console.log(
  JSON.stringify(
    {
      benchmark: 'pg-recall-probe',
      recalls: n,
      tenant,
      dist,
      p50_ms: r2(sorted[Math.floor(n / 2)]),
      p95_ms: r2(sorted[Math.floor(n * 0.95)]),
      max_ms: r2(sorted[n - 1]),
      total_ms: r2(ms.reduce((a, b) => a + b, 0)),
      node_cpu_ms: r2((cpu.user + cpu.system) / 1000),
      statements,
      plans,
      ...(calls.length > 0 ? { explained } : {}),
      loadavg: { before: loadBefore.map(r2), after: os.loadavg().map(r2) },
    },
    null,
    2,
  ),
);
