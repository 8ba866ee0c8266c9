// A/B of the Postgres search statements (store/postgres/search-rows.ts) of two builds on one
// database: the calls a recall probe captured (`PG_PROBE_EXPLAIN=1 PG_PROBE_CALLS=FILE
// node scripts/pg-recall-probe.mjs URL`) replayed under EXPLAIN (ANALYZE, BUFFERS) with each
// build's statement text for the same parameters, A and B interleaved call by call, REPS times;
// per statement the sum over calls of each call's fastest execution time, and buffers. The
// builds must bind the same parameters. Writes JSON to stdout:
//   node scripts/pg-search-ab.mjs URL CALLS DIST_A DIST_B [REPS]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

const [url, callsFile, distA, distB, repsArg] = process.argv.slice(2);
if (!url || !callsFile || !distA || !distB) {
  console.error('usage: node scripts/pg-search-ab.mjs URL CALLS DIST_A DIST_B [REPS]');
  process.exit(2);
}
const reps = Number(repsArg ?? 3);
const calls = JSON.parse(fs.readFileSync(callsFile, 'utf8'));
// Each build's statement text for a call: the corpus statement, or the postings statement for
// the call's number of candidate terms (a build before postingsName had one text for one term,
// one for more).
const load = async (dist) => {
  const m = await import(`${path.resolve(dist)}/src/store/postgres/search-rows.js`);
  return (c) => {
    if (c.name === 'mneme_search_corpus') return m.CORPUS;
    if (!c.name.startsWith('mneme_search_eligible_postings')) return null;
    const k = c.values[1].length;
    return m.postingsName ? m.postingsSql(k) : m.postingsSql(k === 1);
  };
};
/** Calls grouped by statement, the postings ones by their number of candidate terms. */
const group = (c) =>
  c.name.startsWith('mneme_search_eligible_postings')
    ? `postings, ${Math.min(c.values[1].length, 5)}${c.values[1].length >= 5 ? '+' : ''} terms`
    : c.name;
const texts = { A: await load(distA), B: await load(distB) };
// B_DROP=i: B's postings statements bind the calls' parameters without the i-th (from 0).
const drop = process.env.B_DROP === undefined ? -1 : Number(process.env.B_DROP);
const valuesOf = (k, c) =>
  k === 'B' && drop >= 0 && c.name.includes('postings')
    ? c.values.filter((_, i) => i !== drop)
    : c.values;
const client = new pg.Client({ connectionString: url });
await client.connect();
// Whether the two builds' rows agree (the same ids and revs in the same order, the same counts).
let differ = 0;
const out = {};
const loadBefore = os.loadavg();
for (const c of calls) {
  const text = { A: texts.A(c), B: texts.B(c) };
  if (!text.A) continue;
  const best = { A: Infinity, B: Infinity };
  const bufs = { A: 0, B: 0 };
  for (let r = 0; r < reps; r++)
    for (const k of r % 2 ? ['B', 'A'] : ['A', 'B']) {
      const { rows } = await client.query(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text[k]}`,
        valuesOf(k, c),
      );
      const plan = rows[0]['QUERY PLAN'][0];
      best[k] = Math.min(best[k], plan['Execution Time']);
      bufs[k] = plan.Plan['Shared Hit Blocks'] + plan.Plan['Shared Read Blocks'];
    }
  const [a, b] = await Promise.all(
    ['A', 'B'].map(async (k) => (await client.query(text[k], valuesOf(k, c))).rows),
  );
  const key = (rows) => JSON.stringify(rows.map((x) => [x.id, x.rev, x.len, x.n, x.df]));
  if (key(a) !== key(b)) differ++;
  const s = (out[group(c)] ??= { calls: 0, A_ms: 0, B_ms: 0, A_buffers: 0, B_buffers: 0 });
  s.calls++;
  s.A_ms += best.A;
  s.B_ms += best.B;
  s.A_buffers += bufs.A;
  s.B_buffers += bufs.B;
}
await client.end();
const r2 = (x) => Math.round(x * 100) / 100;
for (const s of Object.values(out)) [s.A_ms, s.B_ms] = [r2(s.A_ms), r2(s.B_ms)];
console.log(
  JSON.stringify(
    {
      benchmark: 'pg-search-ab',
      A: path.resolve(distA),
      B: path.resolve(distB),
      reps,
      rows_differ: differ,
      statements: out,
      loadavg: { before: loadBefore.map(r2), after: os.loadavg().map(r2) },
    },
    null,
    2,
  ),
);
