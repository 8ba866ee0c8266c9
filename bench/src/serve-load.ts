// Benchmark (not a test): two `mneme serve --db` processes on one Postgres database under a
// bounded, concurrent loopback load mixing recall and remember. Seeds the store through
// engine.apply first, then sends a fixed number of requests alternating between the instances,
// and checks afterwards that every acknowledged write is in the store (lost writes) and that the
// journal chain is intact. Writes a JSON result file.
//
//   node dist/bench/src/serve-load.js [--admin-url URL] [--seed 10000] [--requests 2000]
//     [--concurrency 8] [--write-ratio 0.2] [--out bench/results/serve-load.json] [--keep]
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { SchemaRegistry } from '../../src/core/schema.js';
import { Engine } from '../../src/engine/engine.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { migrate } from '../../src/store/postgres/schema.js';
import { createTenant, createToken } from '../../src/store/postgres/tenants.js';
import { percentile } from './metrics.js';
import { syntheticText } from './synthetic-text.js';
import { BIN } from './scale.js';

const { values: args } = parseArgs({
  options: {
    'admin-url': {
      type: 'string',
      default: process.env.MNEME_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    },
    seed: { type: 'string', default: '10000' },
    requests: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '8' },
    'write-ratio': { type: 'string', default: '0.2' },
    out: { type: 'string', default: 'bench/results/serve-load.json' },
    keep: { type: 'boolean', default: false },
  },
});
const SEED = Number(args.seed);
const REQUESTS = Number(args.requests);
const CONCURRENCY = Number(args.concurrency);
const WRITE_RATIO = Number(args['write-ratio']);
const PROJECT = 'bench-0000beef';

const { rand, word, words } = syntheticText(7);
const ms = (n: number) => Math.round(n * 100) / 100;

async function pool(n: number, width: number, fn: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

/** Starts `mneme serve --db URL --port 0` and resolves with its URL. */
function startInstance(url: string): Promise<{ child: ChildProcess; base: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--db', url, '--port', '0'], {
      env: { ...process.env, MNEME_DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /mneme serving (http:\/\/\S+)/.exec(out);
      if (m) resolve({ child, base: m[1]! });
    });
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => reject(new Error(`serve exited (${code}): ${err.slice(0, 500)}`)));
  });
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
  const children: ChildProcess[] = [];
  try {
    const setup = new pg.Pool({ connectionString: url, max: 1 });
    await migrate(setup);
    await createTenant(setup, 'bench');
    const token = await createToken(setup, { tenant: 'bench', projects: [PROJECT] });

    // Seed through the one write path, directly on the store.
    const store = await PostgresStore.open(url, { tenant: 'bench', poolSize: 4 });
    const engine = new Engine({
      store,
      clock: () => new Date(),
      registry: new SchemaRegistry(),
      binding: { project: PROJECT, identity: PROJECT },
      surface: 'human',
    });
    const seedStart = performance.now();
    await pool(SEED, 4, async (i) => {
      await engine.apply(
        [{ op: 'remember', type: 'fact', abstract: `seed ${i}: ${words(9)}`, body: words(30) }],
        { kind: 'human', surface: 'cli' },
      );
      if ((i + 1) % 2000 === 0) process.stderr.write(`seeded ${i + 1}/${SEED}\n`);
    });
    const seedSeconds = (performance.now() - seedStart) / 1000;
    await setup.query('ANALYZE');
    await setup.end();

    const instances = await Promise.all([startInstance(url), startInstance(url)]);
    children.push(...instances.map((x) => x.child));
    const headers = { authorization: `Bearer ${token}` };

    const recallMs: number[] = [];
    const writeMs: number[] = [];
    const written: string[] = [];
    const errors: string[] = [];
    const plan = Array.from({ length: REQUESTS }, () => (rand() < WRITE_RATIO ? 'w' : 'r'));
    const queries = plan.map(() => `${word()} ${word()}`);
    const loadStart = performance.now();
    await pool(REQUESTS, CONCURRENCY, async (i) => {
      const base = instances[i % 2]!.base;
      const t0 = performance.now();
      try {
        if (plan[i] === 'w') {
          const r = await fetch(`${base}/api/memories`, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({
              type: 'fact',
              abstract: `load ${i}: ${words(9)}`,
              project: PROJECT,
            }),
          });
          const b = (await r.json()) as { id?: string };
          if (r.status !== 201 || !b.id) throw new Error(`remember ${r.status}`);
          writeMs.push(performance.now() - t0);
          written.push(b.id);
        } else {
          const q = encodeURIComponent(queries[i]!);
          const r = await fetch(`${base}/api/recall?q=${q}&project=${PROJECT}&limit=10`, {
            headers,
          });
          await r.arrayBuffer();
          if (r.status !== 200) throw new Error(`recall ${r.status}`);
          recallMs.push(performance.now() - t0);
        }
      } catch (e) {
        errors.push((e as Error).message);
      }
    });
    const loadSeconds = (performance.now() - loadStart) / 1000;

    // Every acknowledged write must be in the store, and the chain must verify.
    const current = new Set((await store.listCurrent([PROJECT])).map((v) => v.id));
    const lost = written.filter((id) => !current.has(id)).length;
    const chain = await store.verifyJournal();
    await store.close();

    recallMs.sort((x, y) => x - y);
    writeMs.sort((x, y) => x - y);
    const result = {
      bench: 'serve-load',
      at: new Date().toISOString(),
      postgres: version,
      instances: 2,
      note: 'two `mneme serve --db` child processes on one database; one loopback client process alternating between them; seed via engine.apply on the store',
      machine: { cpus: os.cpus().length, loadavg: os.loadavg().map(ms), node: process.version },
      seeded: SEED,
      seed_writes_per_s: ms(SEED / seedSeconds),
      requests: REQUESTS,
      concurrency: CONCURRENCY,
      write_ratio: WRITE_RATIO,
      load_seconds: ms(loadSeconds),
      requests_per_s: ms(REQUESTS / loadSeconds),
      recall: {
        count: recallMs.length,
        p50_ms: ms(percentile(recallMs, 50)),
        p95_ms: ms(percentile(recallMs, 95)),
        p99_ms: ms(percentile(recallMs, 99)),
      },
      write: {
        count: written.length,
        per_s: ms(written.length / loadSeconds),
        p50_ms: ms(percentile(writeMs, 50)),
        p95_ms: ms(percentile(writeMs, 95)),
      },
      errors: errors.length,
      error_samples: [...new Set(errors)].slice(0, 5),
      lost_writes: lost,
      journal: { ok: chain.ok, entries: chain.entries },
      database: args.keep ? name : null,
    };
    fs.mkdirSync(path.dirname(path.resolve(args.out)), { recursive: true });
    fs.writeFileSync(args.out, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    if (errors.length > 0 || lost > 0 || !chain.ok) process.exitCode = 1;
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(
      children.map((c) =>
        c.exitCode === null ? new Promise((r) => c.once('exit', r)) : Promise.resolve(),
      ),
    );
    if (!args.keep) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

await main();
