// Benchmark (not a test): wall time of one `sleep` pass and one `fsck` scan over a store of N
// memories seeded through engine.apply in batches of 500 (files: durable: false), with a usage
// log to weigh, on the embedded store or on Postgres (a throwaway database, dropped after). The
// engine and the store come from the composition root, as for any surface. fsck is timed three
// times: first (no marks), again on the unchanged store (incremental), and --full. Run:
//   node dist/bench/src/maintenance.js --n 10000 [--store files|postgres] [--admin-url URL]
//     [--label L] --out bench/results/maintenance-10k.json
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrate } from '../../src/store/postgres/schema.js';
import { createTenant } from '../../src/store/postgres/tenants.js';
import { openEngine, openStore } from '../../src/surfaces/compose.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
};

async function main() {
  const n = Number(arg('n', '10000'));
  const out = arg('out', '');
  const kind = arg('store', 'files');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-bench-maint-'));
  let now = Date.parse('2026-01-01T00:00:00.000Z');
  // The embedded store in the temp directory, whatever the caller's environment says; or a
  // throwaway Postgres database with one tenant.
  let env: NodeJS.ProcessEnv = { ...process.env, MNEME_DATABASE_URL: '', MNEME_DURABLE: '0' };
  let drop = async () => {};
  if (kind === 'postgres') {
    const adminUrl = arg(
      'admin-url',
      process.env.MNEME_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    );
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    const name = `mneme_bench_maint_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE DATABASE ${name}`);
    const u = new URL(adminUrl);
    u.pathname = `/${name}`;
    const setup = new pg.Pool({ connectionString: u.toString(), max: 1 });
    await migrate(setup);
    await createTenant(setup, 'bench');
    await setup.end();
    env = { ...process.env, MNEME_DATABASE_URL: u.toString(), MNEME_TENANT: 'bench' };
    drop = async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    };
  }
  const open = () =>
    openEngine({
      store: dir,
      cwd: dir,
      env,
      embedder: 'off',
      clock: () => new Date(now),
      binding: { project: 'bench-0000beef', identity: 'bench' },
      surface: 'human',
    });
  let e = await open();
  const words = ['billing', 'deploy', 'cache', 'queue', 'auth', 'search', 'mail', 'report'];
  const t0 = Date.now();
  const ids: string[] = [];
  for (let i = 0; i < n; i += 500) {
    const ops = [];
    for (let j = i; j < Math.min(n, i + 500); j++)
      ops.push({
        op: 'remember' as const,
        type: 'fact',
        abstract: `Service ${j} ${words[j % 8]} uses port ${3000 + (j % 997)} in region ${j % 13}`,
        provenance: ['user'],
      });
    now += 1000;
    for (const r of await e.apply(ops, { kind: 'agent', surface: 'bench' })) ids.push(r.id);
  }
  const seedMs = Date.now() - t0;
  const usage = [];
  for (let k = 0; k < 2000; k++) {
    now += 60_000;
    usage.push({
      at: new Date(now).toISOString(),
      kind: k % 5 === 0 ? ('read' as const) : ('recall' as const),
      ids: [ids[(k * 7) % n]!, ids[(k * 7 + 1) % n]!, ids[(k * 13) % n]!],
      actor: 'bench',
    });
  }
  // The usage log is a fixture (what recalls and reads over time would have left), appended to
  // the store directly while no engine holds it.
  await e.close();
  const store = await openStore({ store: dir, env });
  await store.appendUsage(usage);
  await store.close();
  e = await open();
  now += 86_400_000;
  const measure = async <T>(fn: () => Promise<T>) => {
    const s = process.hrtime.bigint();
    const r = await fn();
    return { ms: Number((process.hrtime.bigint() - s) / 1_000_000n), r };
  };
  const s1 = await measure(() => e.sleep());
  const s2 = await measure(() => e.sleep());
  const f1 = await measure(() => e.fsck());
  // Incremental by default: the second run, on an unchanged store, reads no revision again.
  const f2 = await measure(() => e.fsck());
  const f3 = await measure(() => e.fsck({ full: true }));
  const result = {
    bench: 'maintenance',
    label: arg('label', 'default'),
    store: kind,
    at: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    memories: n,
    usage_events: usage.length,
    seed_ms: seedMs,
    sleep_first_ms: s1.ms,
    sleep_first: { weights: s1.r.weights.length, steps: s1.r.steps.length },
    sleep_idle_ms: s2.ms,
    sleep_idle_changed: s2.r.changed,
    fsck_ms: f1.ms,
    fsck_issues: f1.r.issues.length,
    fsck_unchanged_ms: f2.ms,
    fsck_unchanged_checked: f2.r.checked,
    fsck_full_ms: f3.ms,
    fsck_full_issues: f3.r.issues.length,
  };
  const text = `${JSON.stringify(result, null, 2)}\n`;
  if (out) {
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, text);
  }
  process.stdout.write(text);
  await e.close();
  fs.rmSync(dir, { recursive: true, force: true });
  await drop();
}

void main();
