// Benchmark (not a test): the latency of one write (remember, abstract + body, through
// engine.apply and its tombstone gate) with 0, 1k and 10k tombstones armed in the write's scope,
// on the embedded store and on Postgres. The tombstone check should cost the same whatever their
// number. Tombstones are armed with the `arm` op; values and writes come from the shared
// synthetic vocabulary (seeded), so runs are comparable. Writes a JSON result file.
//
//   node dist/bench/src/tombstones.js [--stores files,postgres] [--t 0,1000,10000]
//     [--writes 200] [--admin-url URL] [--label after] [--out bench/results/tombstones.json]
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { SchemaRegistry } from '../../src/core/schema.js';
import { projectScope } from '../../src/core/scope.js';
import { Engine } from '../../src/engine/engine.js';
import type { Store } from '../../src/store/port.js';
import { FileStore } from '../../src/store/files/file-store.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { migrate } from '../../src/store/postgres/schema.js';
import { createTenant } from '../../src/store/postgres/tenants.js';
import { percentile } from './metrics.js';
import { syntheticText } from './synthetic-text.js';

const { values: args } = parseArgs({
  options: {
    'admin-url': {
      type: 'string',
      default: process.env.MNEME_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    },
    stores: { type: 'string', default: 'files,postgres' },
    t: { type: 'string', default: '0,1000,10000' },
    writes: { type: 'string', default: '200' },
    label: { type: 'string', default: 'default' },
    out: { type: 'string', default: 'bench/results/tombstones.json' },
  },
});

const BINDING = { project: projectScope('bench:tombstones', 'bench'), identity: 'bench' };
const HUMAN = { kind: 'human' as const, surface: 'cli' };
const round = (n: number) => Math.round(n * 100) / 100;

async function openStore(kind: string): Promise<{ store: Store; drop: () => Promise<void> }> {
  if (kind === 'files') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-bench-tomb-'));
    const store = await FileStore.open(dir, { durable: false });
    return { store, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const admin = new pg.Client({ connectionString: args['admin-url'] });
  await admin.connect();
  const name = `mneme_bench_${randomBytes(4).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(args['admin-url']);
  u.pathname = `/${name}`;
  const setup = new pg.Pool({ connectionString: u.toString(), max: 1 });
  await migrate(setup);
  await createTenant(setup, 'bench');
  await setup.end();
  const store = await PostgresStore.open(u.toString(), { tenant: 'bench' });
  return {
    store,
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

async function run(kind: string, tombstones: number, writes: number) {
  const { store, drop } = await openStore(kind);
  let now = Date.parse('2026-01-01T00:00:00.000Z');
  const engine = new Engine({
    store,
    clock: () => new Date((now += 1000)),
    registry: new SchemaRegistry(),
    binding: BINDING,
    surface: 'human',
  });
  try {
    const { words, rand } = syntheticText(42);
    const armStart = performance.now();
    for (let i = 0; i < tombstones; i += 500) {
      const ops = [];
      for (let j = i; j < Math.min(tombstones, i + 500); j++)
        ops.push({
          op: 'arm' as const,
          value: `${words(3 + Math.floor(rand() * 5))} ${j}`,
          scope: BINDING.project,
        });
      await engine.apply(ops, HUMAN);
    }
    const armSeconds = (performance.now() - armStart) / 1000;
    const ms: number[] = [];
    for (let k = 0; k < writes; k++) {
      const s = performance.now();
      await engine.apply(
        [{ op: 'remember', type: 'fact', abstract: `write ${k}: ${words(9)}`, body: words(40) }],
        HUMAN,
      );
      ms.push(performance.now() - s);
    }
    ms.sort((a, b) => a - b);
    return {
      store: kind,
      tombstones,
      writes,
      arm_seconds: round(armSeconds),
      write_p50_ms: round(percentile(ms, 50)),
      write_p95_ms: round(percentile(ms, 95)),
    };
  } finally {
    await store.close();
    await drop();
  }
}

async function main() {
  const results = [];
  for (const kind of args.stores.split(','))
    for (const t of args.t.split(',').map(Number)) {
      const r = await run(kind, t, Number(args.writes));
      process.stderr.write(`${JSON.stringify(r)}\n`);
      results.push(r);
    }
  const out = {
    bench: 'tombstones',
    label: args.label,
    at: new Date().toISOString(),
    note: 'one write at a time through engine.apply (remember: abstract of 10 words, body of 40), scope holding N armed tombstones; files store durable: false',
    machine: { cpus: os.cpus().length, loadavg: os.loadavg().map(round), node: process.version },
    results,
  };
  fs.mkdirSync(path.dirname(path.resolve(args.out)), { recursive: true });
  fs.writeFileSync(args.out, `${JSON.stringify(out, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

void main();
