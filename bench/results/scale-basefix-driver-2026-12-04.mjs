// Scratch driver (helper basefix): scripts/scale-quality.mjs's method for either dist layout
// (main: dist/bench/src, 5240d05: dist/src/bench), writing per-query top-5 subject names.
//   node sq.mjs DIST W.json STOREDIR ingest
//   node sq.mjs DIST W.json STOREDIR eval '' out.json      (or a ranker JSON for main)
import fs from 'node:fs';
import path from 'node:path';

const [dist, wfile, dir, mode, rankerJson, out] = process.argv.slice(2);
const root = path.resolve(dist);
const mainLayout = fs.existsSync(path.join(root, 'bench/src/harness.js'));
const bdir = mainLayout ? path.join(root, 'bench/src') : path.join(root, 'src/bench');
const { freshStore, BENCH_ACTOR } = await import(path.join(bdir, 'harness.js'));
const { opaqueKey } = await import(path.join(bdir, 'ingest.js'));
const TYPE_MAP = {
  note: 'fact',
  fact: 'fact',
  decision: 'decision',
  pattern: 'procedure',
  lesson_learned: 'lesson',
};
// Same op as main's rememberOp and 5240d05's runScaleOne.
const rememberOp = (m) => {
  const obs = m.observations.join('\n');
  return {
    op: 'remember',
    type: TYPE_MAP[m.type] ?? 'fact',
    abstract: obs.split('\n')[0].slice(0, 240),
    body: obs,
    fields: { subject: opaqueKey(m.name) },
    tags: m.tags,
  };
};
const w = JSON.parse(fs.readFileSync(wfile, 'utf8'));
const ids = path.join(dir, 'ids.json');
if (mode === 'ingest-distinct') {
  // Every memory written alone, memory i at 2026-01-01T00:00:00Z + i ms: no two share a moment,
  // and the store is the same whatever the machine's speed.
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  let now = base;
  fs.mkdirSync(dir, { recursive: true });
  const b = await freshStore({ durable: false, dir, clock: () => new Date(now) });
  const names = {};
  for (const [i, m] of w.memories.entries()) {
    now = base + i;
    const [r] = await b.engine.apply([{ ...rememberOp(m), global: true }], BENCH_ACTOR);
    names[r.id] = m.name;
  }
  await b.close();
  fs.writeFileSync(ids, JSON.stringify(names));
  console.log(`ingested ${w.memories.length} memories into ${dir}, one millisecond apart`);
} else if (mode === 'ingest-replay') {
  // Every memory written alone, at the valid_from the reference store (rankerJson = its dir)
  // gave the memory of the same name: both builds' stores then hold identical moments.
  const { default: Database } = await import(path.join(root, '..', 'node_modules/better-sqlite3/lib/index.js'));
  const refDir = rankerJson;
  const refNames = JSON.parse(fs.readFileSync(path.join(refDir, 'ids.json'), 'utf8'));
  const db = new Database(path.join(refDir, '.index/mneme.db'), { readonly: true });
  const at = {};
  for (const r of db.prepare('SELECT id, valid_from FROM rev').all()) at[refNames[r.id]] = r.valid_from;
  db.close();
  let now = at[w.memories[0].name];
  fs.mkdirSync(dir, { recursive: true });
  const b = await freshStore({ durable: false, dir, clock: () => new Date(now) });
  const names = {};
  for (const m of w.memories) {
    now = at[m.name];
    const [r] = await b.engine.apply([{ ...rememberOp(m), global: true }], BENCH_ACTOR);
    names[r.id] = m.name;
  }
  await b.close();
  fs.writeFileSync(ids, JSON.stringify(names));
  console.log(`ingested ${w.memories.length} memories into ${dir} at ${refDir}'s times`);
} else if (mode === 'ingest') {
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
  console.log(`ingested ${w.memories.length} memories into ${dir} (${mainLayout ? 'main' : 'old'} layout)`);
} else {
  const ranker = rankerJson ? JSON.parse(rankerJson) : undefined;
  const b = await freshStore({ durable: false, dir, ...(ranker && mainLayout ? { ranker } : {}) });
  const ropt = ranker && !mainLayout ? { ranker } : {};
  const names = JSON.parse(fs.readFileSync(ids, 'utf8'));
  for (const q of w.warmup ?? []) await b.engine.recall(q.query, { limit: 5, logUsage: false, ...ropt });
  let hits = 0;
  const ranks = [];
  const tops = [];
  for (const q of w.queries) {
    const r = await b.engine.recall(q.query, { limit: 5, logUsage: false, ...ropt });
    const top = r.results.slice(0, 5).map((x) => names[x.id]);
    const rank = top.indexOf(q.target);
    ranks.push(rank < 0 ? null : rank + 1);
    tops.push(top);
    if (rank >= 0) hits++;
  }
  await b.close();
  const res = { n: w.memories.length, queries: w.queries.length, ranker: ranker ?? {}, hits, 'recall_hit@5': hits / w.queries.length };
  console.log(JSON.stringify(res));
  if (out) fs.writeFileSync(out, JSON.stringify({ ...res, ranks, tops }));
}
