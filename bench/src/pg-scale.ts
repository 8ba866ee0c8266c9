// Benchmark (not a test): write throughput and recall latency of the Postgres store at 10k and
// 100k memories, with two store instances (two pools, as two server processes would have) under
// concurrent load. Every write goes through the one write path. Writes a JSON result file.
//
//   node dist/bench/src/pg-scale.js [--admin-url URL] [--n 10000,100000] [--queries 400]
//     [--concurrency 4] [--out bench/results/pg-scale.json] [--keep]
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { SchemaRegistry } from '../../src/core/schema.js';
import { projectScope } from '../../src/core/scope.js';
import { Engine } from '../../src/engine/engine.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { migrate } from '../../src/store/postgres/schema.js';
import { createTenant } from '../../src/store/postgres/tenants.js';
import { syntheticText } from './synthetic-text.js';
import { percentile } from './metrics.js';

const { values: args } = parseArgs({
  options: {
    'admin-url': {
      type: 'string',
      default: process.env.MNEME_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    },
    n: { type: 'string', default: '10000,100000' },
    queries: { type: 'string', default: '400' },
    concurrency: { type: 'string', default: '4' },
    out: { type: 'string', default: 'bench/results/pg-scale.json' },
    keep: { type: 'boolean', default: false },
  },
});

const sizes = args.n.split(',').map(Number);
const queries = Number(args.queries);
const concurrency = Number(args.concurrency);
const BINDING = { project: projectScope('bench:pg', 'bench'), identity: 'bench' };
const ACTOR = { kind: 'human' as const, surface: 'cli' };

const { rand, word, words } = syntheticText(42);

const round = (n: number) => Math.round(n * 100) / 100;

async function pool<T>(items: T[], width: number, fn: (x: T, i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

async function main() {
  const admin = new pg.Client({ connectionString: args['admin-url'] });
  await admin.connect();
  const name = `mneme_bench_${randomBytes(4).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(args['admin-url']);
  u.pathname = `/${name}`;
  const url = u.toString();
  const version = (
    await admin.query<{ v: string }>("SELECT current_setting('server_version') AS v")
  ).rows[0]!.v;
  const vector =
    (await admin.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).rows.length >
    0;
  const setup = new pg.Pool({ connectionString: url, max: 1 });
  await migrate(setup);
  await createTenant(setup, 'bench');
  await setup.end();

  const stores = [
    await PostgresStore.open(url, { tenant: 'bench', poolSize: 4 }),
    await PostgresStore.open(url, { tenant: 'bench', poolSize: 4 }),
  ];
  const engines = stores.map(
    (store) =>
      new Engine({
        store,
        clock: () => new Date(),
        registry: new SchemaRegistry(),
        binding: BINDING,
        surface: 'human',
      }),
  );

  const results: Record<string, unknown>[] = [];
  const save = () => {
    const out = {
      bench: 'pg-scale',
      at: new Date().toISOString(),
      postgres: version,
      pgvector_available: vector,
      instances: 2,
      concurrency,
      note: 'two PostgresStore instances (separate pools) in one process; every write through engine.apply; recall logs usage; ANALYZE after each load',
      machine: { cpus: os.cpus().length, loadavg: os.loadavg().map(round), node: process.version },
      database: args.keep ? name : null,
      results,
    };
    fs.mkdirSync(path.dirname(path.resolve(args.out)), { recursive: true });
    fs.writeFileSync(args.out, `${JSON.stringify(out, null, 2)}\n`);
  };
  let written = 0;
  try {
    for (const n of sizes) {
      const todo = Array.from({ length: n - written }, (_, i) => written + i);
      const started = performance.now();
      let chunkStart = started;
      let lastChunk = 0;
      await pool(todo, concurrency, async (i) => {
        const e = engines[i % 2]!;
        await e.apply(
          [
            {
              op: 'remember',
              type: 'fact',
              abstract: `note ${i}: ${words(9)}`,
              body: words(30),
              tags: [word()],
            },
          ],
          ACTOR,
        );
        written++;
        if (written % 1000 === 0) {
          const now = performance.now();
          lastChunk = 1000 / ((now - chunkStart) / 1000);
          chunkStart = now;
          process.stderr.write(`\rwrote ${written}/${n} (${lastChunk.toFixed(0)}/s)   `);
        }
      });
      const loadSeconds = (performance.now() - started) / 1000;
      process.stderr.write('\n');
      // What autovacuum would have done by now (it is off on some CI servers, this one included).
      const analyze = new pg.Client({ connectionString: url });
      await analyze.connect();
      await analyze.query('ANALYZE');
      await analyze.end();
      const qs = Array.from({ length: queries }, () => words(1 + Math.floor(rand() * 3)));
      const lat: number[] = [];
      let hits = 0;
      const rStart = performance.now();
      await pool(qs, concurrency, async (q, i) => {
        const t0 = performance.now();
        const r = await engines[i % 2]!.recall(q, { limit: 10 });
        lat.push(performance.now() - t0);
        if (r.results.length > 0) hits++;
      });
      const rSeconds = (performance.now() - rStart) / 1000;
      lat.sort((a, b) => a - b);
      const status = await stores[0]!.status();
      const verify = await stores[1]!.verifyJournal();
      const row = {
        memories: status.memories,
        writes: {
          count: todo.length,
          seconds: round(loadSeconds),
          per_second: round(todo.length / loadSeconds),
          last_1000_per_second: round(lastChunk),
        },
        recall: {
          queries,
          concurrency,
          with_results: hits,
          p50_ms: round(percentile(lat, 50)),
          p95_ms: round(percentile(lat, 95)),
          p99_ms: round(percentile(lat, 99)),
          per_second: round(queries / rSeconds),
        },
        journal: { ok: verify.ok, entries: verify.entries },
      };
      results.push({ ...row, loadavg: os.loadavg().map(round) });
      save(); // after each size, so a long run that is stopped keeps what it measured
      process.stderr.write(`${JSON.stringify(row)}\n`);
    }
  } finally {
    for (const s of stores) await s.close();
    if (!args.keep) await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.end();
  }
  process.stderr.write(`wrote ${args.out}\n`);
}

await main();
