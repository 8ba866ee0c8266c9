// Times the Postgres search's statements (store/postgres/search-rows.ts), one by one, for the
// first N queries of the shared workload, on a kept one-tenant database (`mneme bench serve
// --tenants 1 --memories 100000 --keep`): per statement its runs, total ms and rows shipped,
// and the searches' p50/p95. One connection, no HTTP, no engine: what the store costs. Writes
// JSON to stdout (with the load average: the machine is shared). Run after `npm run build`:
//   node scripts/pg-search-probe.mjs URL [N] [dist dir of another build, to compare]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';

const [url, nArg, distArg] = process.argv.slice(2);
if (!url) {
  console.error('usage: node scripts/pg-search-probe.mjs URL [N] [DIST]');
  process.exit(2);
}
const dist = path.resolve(distArg ?? 'dist');
const { search } = await import(`${dist}/src/store/postgres/search-rows.js`);
const { contentTerms } = await import(`${dist}/src/core/text.js`);
const { namedProjectScope } = await import(`${dist}/src/core/scope.js`);
const { generateWorkload } = await import(`${dist}/bench/src/scale.js`);

const pool = new pg.Pool({ connectionString: url, max: 1 });
const { rows: meta } = await pool.query('SELECT k, v FROM bench_serve_meta');
const size = Number(meta.find((r) => r.k === 'memories_per_tenant').v);
const g = generateWorkload(size);
const wl = JSON.parse(fs.readFileSync(g.file, 'utf8'));
fs.rmSync(g.dir, { recursive: true, force: true });
const statements = {};
const query = async (text, values, name) => {
  const t0 = performance.now();
  const r = await pool.query({ text, values, name });
  const s = (statements[name] ??= { runs: 0, ms: 0, rows: 0 });
  s.runs++;
  s.ms += performance.now() - t0;
  s.rows += r.rows.length;
  return r;
};
const scope = namedProjectScope('bench');
const eligibility = {
  scopes: [scope],
  asOf: new Date().toISOString(),
  knownAt: null,
  minTrust: 'untrusted',
  includeQuarantined: false,
};
const n = Number(nArg ?? 60);
const loadBefore = os.loadavg();
const ms = [];
for (const q of wl.queries.slice(0, n)) {
  const t0 = performance.now();
  // As a recall of limit 5 asks: a pool of 50, enough when 5 are found.
  await search(query, 't1', { terms: contentTerms(q.query), eligibility, limit: 50, want: 5 });
  ms.push(performance.now() - t0);
}
await pool.end();
const sorted = [...ms].sort((a, b) => a - b);
const r2 = (x) => Math.round(x * 100) / 100;
for (const s of Object.values(statements)) s.ms = r2(s.ms);
console.log(
  JSON.stringify(
    {
      benchmark: 'pg-search-probe',
      searches: n,
      dist,
      p50_ms: r2(sorted[Math.floor(n / 2)]),
      p95_ms: r2(sorted[Math.floor(n * 0.95)]),
      max_ms: r2(sorted[n - 1]),
      statements,
      loadavg: { before: loadBefore.map(r2), after: os.loadavg().map(r2) },
    },
    null,
    2,
  ),
);
