// Benchmark (not a test): the latency of one write (remember, abstract + body, through
// engine.apply and its tombstone gate) with 0, 1k and 10k tombstones armed in the write's scope,
// on the embedded store and on Postgres. The tombstone check should cost the same whatever their
// number. Tombstones are armed with the `arm` op; values and writes come from the shared
// synthetic vocabulary (seeded), so runs are comparable. Besides wall-clock percentiles (which a
// busy machine inflates), the CPU time each phase took, per write / per arm: this process's and,
// on Postgres, the server backends' of the benchmark's own database (their /proc stat), so runs
// on a loaded machine can still be compared. Writes a JSON result file.
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

interface Opened {
  store: Store;
  drop: () => Promise<void>;
  /** The server processes working for this store (none for the files store). */
  backends: () => Promise<number[]>;
}

async function openStore(kind: string): Promise<Opened> {
  if (kind === 'files') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-bench-tomb-'));
    const store = await FileStore.open(dir, { durable: false });
    return {
      store,
      drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
      backends: async () => [],
    };
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
    backends: async () =>
      (
        await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
          name,
        ])
      ).rows.map((r) => r.pid),
  };
}

/** CPU seconds (user + system) a process has used, from /proc (0 once it is gone). */
function procCpu(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ)
  } catch {
    return 0;
  }
}

/** A CPU meter over this process and the store's server backends. */
async function cpuMeter(opened: Opened) {
  const self = process.cpuUsage();
  const before = new Map((await opened.backends()).map((p) => [p, procCpu(p)]));
  return async () => {
    const own = process.cpuUsage(self);
    let server = 0;
    for (const p of await opened.backends()) server += procCpu(p) - (before.get(p) ?? 0);
    return { client: (own.user + own.system) / 1e6, server };
  };
}

async function run(kind: string, tombstones: number, writes: number) {
  const opened = await openStore(kind);
  const { store, drop } = opened;
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
    const armCpu = await cpuMeter(opened);
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
    const armUsed = await armCpu();
    const ms: number[] = [];
    const writeCpu = await cpuMeter(opened);
    for (let k = 0; k < writes; k++) {
      const s = performance.now();
      await engine.apply(
        [{ op: 'remember', type: 'fact', abstract: `write ${k}: ${words(9)}`, body: words(40) }],
        HUMAN,
      );
      ms.push(performance.now() - s);
    }
    const used = await writeCpu();
    ms.sort((a, b) => a - b);
    const perArm = (x: number) => (tombstones > 0 ? round((x * 1000) / tombstones) : 0);
    return {
      store: kind,
      tombstones,
      writes,
      arm_seconds: round(armSeconds),
      write_p50_ms: round(percentile(ms, 50)),
      write_p95_ms: round(percentile(ms, 95)),
      write_cpu_ms: round(((used.client + used.server) * 1000) / writes),
      write_cpu_client_ms: round((used.client * 1000) / writes),
      write_cpu_server_ms: round((used.server * 1000) / writes),
      arm_cpu_ms: perArm(armUsed.client + armUsed.server),
      arm_cpu_server_ms: perArm(armUsed.server),
      loadavg: os.loadavg().map(round),
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
    note: "one write at a time through engine.apply (remember: abstract of 10 words, body of 40), scope holding N armed tombstones; files store durable: false; *_cpu_ms: CPU time per write (per arm) of this process plus, on Postgres, the benchmark database's server backends (/proc, 10 ms ticks summed over the phase)",
    machine: { cpus: os.cpus().length, loadavg: os.loadavg().map(round), node: process.version },
    results,
  };
  fs.mkdirSync(path.dirname(path.resolve(args.out)), { recursive: true });
  fs.writeFileSync(args.out, `${JSON.stringify(out, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

void main();
