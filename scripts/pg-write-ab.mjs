// Side-by-side write throughput on Postgres: two builds of mneme (A = --a DIR, B = this
// checkout) in ONE process, each on its own throwaway database, their turns interleaved so a
// busy machine slows both alike. Three shapes of writes through the engine: seeding batches
// (one engine.apply of --batch remembers), single remembers one after another, and --writers
// concurrent single remembers (an HTTP server's writers). Statements are counted per write.
// Writes a result file (--out). Usage:
//   node scripts/pg-write-ab.mjs --a /path/to/base/checkout --out bench/results/pg-writes-ab.json
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';

const { values: o } = parseArgs({
  options: {
    a: { type: 'string' },
    b: {
      type: 'string',
      default: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'),
    },
    rounds: { type: 'string', default: '4' },
    batch: { type: 'string', default: '250' },
    singles: { type: 'string', default: '60' },
    writers: { type: 'string', default: '8' },
    out: { type: 'string' },
  },
});
if (!o.a) throw new Error('pass --a DIR: a built checkout to compare against');
const rounds = Number(o.rounds);
const batch = Number(o.batch);
const singles = Number(o.singles);
const writers = Number(o.writers);

let statements = 0;
const orig = pg.Client.prototype.query;
pg.Client.prototype.query = function (...args) {
  statements++;
  return orig.apply(this, args);
};

const actor = { kind: 'human', surface: 'cli' };
let k = 0;
const op = () => ({
  op: 'remember',
  type: 'fact',
  abstract: `write ${++k} about the deploy cache ${k % 97} and the queue ${k % 31}`,
  body: `body of write ${k}: words ${k % 13} more ${k % 7} text`,
  tags: ['ab'],
});

async function side(name, root) {
  const { throwawayDb } = await import(path.join(root, 'dist/test/pg-fixtures.js'));
  const { openEngine } = await import(path.join(root, 'dist/src/surfaces/compose.js'));
  const { namedProjectScope } = await import(path.join(root, 'dist/src/core/scope.js'));
  const db = await throwawayDb(['acme']);
  const engine = await openEngine({
    db: db.url,
    tenant: 'acme',
    binding: { project: namedProjectScope('ab'), identity: 'name:ab' },
    surface: 'human',
    env: { ...process.env, MNEME_DATABASE_URL: '' },
    embedder: 'off',
  });
  const t = { seed: [0, 0, 0], single: [0, 0, 0], concurrent: [0, 0, 0] }; // writes, ms, statements
  const timed = async (key, n, fn) => {
    const s0 = statements;
    const t0 = performance.now();
    await fn();
    t[key][0] += n;
    t[key][1] += performance.now() - t0;
    t[key][2] += statements - s0;
  };
  return {
    name,
    root,
    t,
    seed: () => timed('seed', batch, () => engine.apply(Array.from({ length: batch }, op), actor)),
    single: () =>
      timed('single', singles, async () => {
        for (let i = 0; i < singles; i++) await engine.apply([op()], actor);
      }),
    concurrent: () =>
      timed('concurrent', singles, async () => {
        for (let i = 0; i < singles; i += writers)
          await Promise.all(
            Array.from({ length: Math.min(writers, singles - i) }, () =>
              engine.apply([op()], actor),
            ),
          );
      }),
    async close() {
      const v = await engine.verifyJournal();
      await engine.close();
      await db.drop();
      return v.ok;
    },
  };
}

const A = await side('a', path.resolve(o.a));
const B = await side('b', path.resolve(o.b));
for (let r = 0; r < rounds; r++) {
  for (const shape of ['seed', 'single', 'concurrent'])
    for (const s of r % 2 ? [B, A] : [A, B]) await s[shape]();
  process.stderr.write(`\rround ${r + 1}/${rounds}`);
}
process.stderr.write('\n');
const report = (s) =>
  Object.fromEntries(
    Object.entries(s.t).map(([k, [n, ms, st]]) => [
      k,
      {
        writes: n,
        per_s: Math.round((n / ms) * 1e5) / 100,
        statements_per_write: Math.round((st / n) * 100) / 100,
      },
    ]),
  );
const result = {
  benchmark: 'pg-writes-ab',
  at: new Date().toISOString(),
  command: `node scripts/pg-write-ab.mjs ${process.argv.slice(2).join(' ')}`,
  config: { rounds, batch, singles, writers },
  loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
  a: { root: A.root, ...report(A), journal_ok: await A.close() },
  b: { root: B.root, ...report(B), journal_ok: await B.close() },
};
result.ratio_b_over_a = Object.fromEntries(
  ['seed', 'single', 'concurrent'].map((k) => [
    k,
    Math.round((result.b[k].per_s / result.a[k].per_s) * 100) / 100,
  ]),
);
const text = `${JSON.stringify(result, null, 1)}\n`;
if (o.out) fs.writeFileSync(o.out, text);
process.stdout.write(text);
