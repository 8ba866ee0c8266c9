// Scale recall_hit@5 only, fast: the seeded workload (gen-workload.mjs, as `bench scale` makes it)
// written to a non-durable store in batches of 500, kept in STOREDIR, then asked the same 200
// queries (limit 5, after the 10 warm-ups) as `bench scale`, once per ranking variant, without
// re-ingesting. Gives the same hit@5 as `bench scale` (checked at 10k and 100k on d4af875: 0.71 and
// 0.39; at 10k on 5240d05 with its dist/src/bench paths: 0.72), in seconds per variant instead of
// a durable ingest per run.
//   node ../shared/bench/gen-workload.mjs --n 10000 --queries 200 --warmup 10 --seed 42 --out W.json
//   node scripts/scale-quality.mjs dist W.json STOREDIR ingest
//   node scripts/scale-quality.mjs dist W.json STOREDIR eval '{"leftOut":"saturated"}' [ranks.json]
import fs from 'node:fs';
import path from 'node:path';

const [dist, wfile, dir, mode, rankerJson, outRanks] = process.argv.slice(2);
if (!dist || !wfile || !dir || !['ingest', 'eval'].includes(mode)) {
  console.error(
    'usage: scale-quality.mjs DIST WORKLOAD STOREDIR ingest|eval [rankerJSON] [ranks.json]',
  );
  process.exit(2);
}
const root = path.resolve(dist);
const { freshStore, BENCH_ACTOR } = await import(path.join(root, 'bench/src/harness.js'));
const { rememberOp } = await import(path.join(root, 'bench/src/scale.js'));
const w = JSON.parse(fs.readFileSync(wfile, 'utf8'));
const ids = path.join(dir, 'ids.json');
if (mode === 'ingest') {
  fs.mkdirSync(dir, { recursive: true });
  const b = await freshStore({ durable: false, dir });
  const names = {};
  for (let i = 0; i < w.memories.length; i += 500) {
    const batch = w.memories.slice(i, i + 500);
    const ops = batch.map((m) => ({ ...rememberOp(m), global: true }));
    const rs = await b.engine.apply(ops, BENCH_ACTOR);
    rs.forEach((r, j) => (names[r.id] = batch[j].name));
  }
  await b.close();
  fs.writeFileSync(ids, JSON.stringify(names));
  console.log(`ingested ${w.memories.length} memories into ${dir}`);
} else {
  const ranker = rankerJson ? JSON.parse(rankerJson) : undefined;
  const b = await freshStore({ durable: false, dir, ranker });
  const names = JSON.parse(fs.readFileSync(ids, 'utf8'));
  for (const q of w.warmup ?? []) await b.engine.recall(q.query, { limit: 5, logUsage: false });
  let hits = 0;
  const ranks = [];
  for (const q of w.queries) {
    const r = await b.engine.recall(q.query, { limit: 5, logUsage: false });
    const rank = r.results.map((x) => names[x.id]).indexOf(q.target);
    ranks.push(rank < 0 ? null : rank + 1);
    if (rank >= 0) hits++;
  }
  await b.close();
  console.log(
    JSON.stringify({
      n: w.memories.length,
      ranker: ranker ?? {},
      'recall_hit@5': hits / w.queries.length,
    }),
  );
  if (outRanks) fs.writeFileSync(outRanks, JSON.stringify(ranks));
}
