// rankCandidates (core/ranking.ts) of two builds side by side on 10k synthetic candidates: the
// same result (checked) and the time per call.  node scripts/rank-candidates-cost.mjs BASE_DIR [AFTER_DIR]
import { URL } from 'node:url';
import { performance } from 'node:perf_hooks';
const [base, after] = await Promise.all(
  [process.argv[2], process.argv[3] ?? '.']
    .map((d) => new URL(d.startsWith('/') ? d : `${process.cwd()}/${d}`, 'file:///').pathname)
    .map((d) => import(`${d}/dist/src/core/ranking.js`)),
);
const n = 10000,
  terms = 5;
let seed = 42;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const cands = Array.from({ length: n }, (_, i) => ({
  id: `m${String(i).padStart(6, '0')}`,
  rev: 1,
  weight: 1,
  features: {
    length: 10 + Math.floor(rnd() * 40),
    tf: Array.from({ length: terms }, (_, t) => [
      t === 2 ? 1 : rnd() < 0.001 ? 1 : 0,
      rnd() < 0.3 ? 1 : 0,
      0,
    ]),
  },
}));
const idf = [7, 7, 0.1, 2, 3],
  stats = { rows: n, tokens: n * 30 };
const m = base.DEFAULT_RANKING;
for (const [label, kept] of [
  ['full', null],
  ['narrowed', [0, 1, 3]],
]) {
  const a = base.rankCandidates(cands, kept, idf, stats, m, 50),
    b = after.rankCandidates(cands, kept, idf, stats, m, 50);
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${label}: results differ`);
  for (const [name, r] of [
    ['before', base],
    ['after', after],
    ['before', base],
    ['after', after],
  ]) {
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) r.rankCandidates(cands, kept, idf, stats, m, 50);
    console.log(
      label,
      name,
      ((performance.now() - t0) / 100).toFixed(2),
      'ms per call (10k candidates, limit 50)',
    );
  }
}
