// `mneme bench serve`: the team server under load, measured from outside. A throwaway database;
// T tenants, each seeded with the same M memories of the shared workload generator (seed 42) in
// a project named plainly (`bench`); N `mneme serve --db` processes; C concurrent HTTP clients
// with each tenant's token, for a fixed duration, doing recall 80%, remember 15% and
// supersede/forget 5% through the real API. Then: every acknowledged write is in the database,
// every tenant's journal and the operator journal verify (the real CLI), and no id in any
// response belongs to another tenant.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { MnemeError } from '../../src/core/errors.js';
import { namedProjectScope } from '../../src/core/scope.js';
import { openEngine, withGovernance } from '../../src/surfaces/compose.js';
import { BENCH_ACTOR, readDataFile } from './harness.js';
import { percentile } from './metrics.js';
import { BIN, generateWorkload, rememberOp, type Workload } from './scale.js';
import { syntheticText } from './synthetic-text.js';

export interface ServeConfig {
  admin: string;
  instances: number;
  tenants: number;
  memories: number;
  clients: number;
  durationS: number;
  /** Ops per seeding transaction (engine.apply of a batch: one transaction, one commit each). */
  seedBatch: number;
  /** Shares of the load's operations (default: recall 0.8, remember 0.15, supersede/forget 0.05). */
  mix?: Mix;
  workload?: string;
  keep: boolean;
}

const PROJECT = 'bench';
const r2 = (n: number) => Math.round(n * 100) / 100;

type OpName = 'recall' | 'remember' | 'supersede' | 'forget';
export type Mix = Record<OpName, number>;

export const DEFAULT_MIX: Mix = { recall: 0.8, remember: 0.15, supersede: 0.035, forget: 0.015 };

/** `recall=0.8,remember=0.2`: the named shares (the rest 0), scaled to sum to 1. */
export function parseMix(text: string): Mix {
  const mix: Mix = { recall: 0, remember: 0, supersede: 0, forget: 0 };
  for (const part of text.split(',')) {
    const m = /^\s*(recall|remember|supersede|forget)\s*=\s*(\d+(?:\.\d+)?)\s*$/.exec(part);
    if (!m)
      throw new MnemeError('invalid', `--mix: "${part}" is not op=share`, {
        hint: 'name ops of recall, remember, supersede, forget: --mix recall=0.8,remember=0.2',
      });
    mix[m[1] as OpName] = Number(m[2]);
  }
  const total = Object.values(mix).reduce((a, b) => a + b, 0);
  if (total <= 0)
    throw new MnemeError('invalid', '--mix: the shares add up to 0', {
      hint: 'give at least one op a positive share: --mix remember=1',
    });
  for (const k of Object.keys(mix) as OpName[]) mix[k] = mix[k] / total;
  return mix;
}

function startInstance(url: string): Promise<{ child: ChildProcess; base: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, '--db', url, 'serve', '--port', '0'], {
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

export async function runServe(cfg: ServeConfig, stderr: (s: string) => void) {
  let workloadFile = cfg.workload;
  let tmp: string | null = null;
  if (!workloadFile) {
    const g = generateWorkload(cfg.memories);
    workloadFile = g.file;
    tmp = g.dir;
  }
  const data = readDataFile(workloadFile);
  const w = data.json as Workload;
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  const memories = w.memories.slice(0, cfg.memories);

  const admin = new pg.Client({ connectionString: cfg.admin });
  await admin.connect().catch((e: unknown) => {
    throw new MnemeError(
      'invalid',
      `cannot reach Postgres at ${cfg.admin}: ${(e as Error).message}`,
      {
        hint: 'pass --db postgres://user@host/db (an account that may create databases)',
      },
    );
  });
  const dbName = `mneme_bench_serve_${randomBytes(4).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${dbName}`);
  const u = new URL(cfg.admin);
  u.pathname = `/${dbName}`;
  const url = u.toString();
  const postgres = (
    await admin.query<{ v: string }>("SELECT current_setting('server_version') AS v")
  ).rows[0]!.v;
  const children: ChildProcess[] = [];
  const scope = namedProjectScope(PROJECT);
  try {
    // Tenants and tokens through governance (journaled), each token allowed only `bench`.
    const tenants = Array.from({ length: cfg.tenants }, (_, i) => `t${i + 1}`);
    const tokens = new Map<string, string>();
    await withGovernance(url, async (g) => {
      for (const t of tenants) {
        await g.createTenant(t);
        tokens.set(t, (await g.issueToken({ tenant: t, projects: [scope] })).token);
      }
    });

    // Seeding: through the engine's write path, a batch of ops per transaction; the tenants
    // side by side (each has its own write lock, so they do not queue on each other).
    const nameOf = new Map<string, Map<string, string>>(); // tenant → workload name → id
    const seeded = new Map<string, number>(tenants.map((t) => [t, 0]));
    const progress = () =>
      stderr(`\rseed ${tenants.map((t) => `${t} ${seeded.get(t)}/${memories.length}`).join(', ')}`);
    const seedStart = performance.now();
    await Promise.all(
      tenants.map(async (t) => {
        const engine = await openEngine({
          db: url,
          tenant: t,
          binding: { project: scope, identity: `name:${PROJECT}` },
          surface: 'human',
          env: { ...process.env, MNEME_DATABASE_URL: '' },
          embedder: 'off',
        });
        const names = new Map<string, string>();
        try {
          for (let i = 0; i < memories.length; i += cfg.seedBatch) {
            const batch = memories.slice(i, i + cfg.seedBatch);
            const res = await engine.apply(batch.map(rememberOp), BENCH_ACTOR);
            res.forEach((r, k) => names.set(batch[k]!.name, r.id));
            seeded.set(t, Math.min(i + cfg.seedBatch, memories.length));
            progress();
          }
        } finally {
          await engine.close();
        }
        nameOf.set(t, names);
      }),
    );
    stderr('\n');
    const seedS = (performance.now() - seedStart) / 1000;
    let dbBytes = 0;
    await admin.query('SELECT 1'); // keep the admin connection alive across a long seed
    {
      const p = new pg.Pool({ connectionString: url, max: 1 });
      await p.query('ANALYZE');
      dbBytes = Number(
        (await p.query<{ b: string }>('SELECT pg_database_size(current_database()) AS b')).rows[0]!
          .b,
      );
      await p.end();
    }

    const instances = await Promise.all(
      Array.from({ length: cfg.instances }, () => startInstance(url)),
    );
    children.push(...instances.map((x) => x.child));

    const lat: Record<OpName, number[]> = { recall: [], remember: [], supersede: [], forget: [] };
    const errors: string[] = [];
    const acks: { tenant: string; id: string; rev: number }[] = [];
    const seen = new Map<string, Set<string>>(tenants.map((t) => [t, new Set()]));
    let hits = 0;
    let asked = 0;
    const mix = cfg.mix ?? DEFAULT_MIX;
    const deadline = performance.now() + cfg.durationS * 1000;
    const loadavgBefore = os.loadavg().map(r2);
    const loadStart = performance.now();
    await Promise.all(
      Array.from({ length: cfg.clients }, async (_, c) => {
        const tenant = tenants[c % tenants.length]!;
        const base = instances[c % instances.length]!.base;
        const headers = {
          authorization: `Bearer ${tokens.get(tenant)}`,
          'content-type': 'application/json',
        };
        const { rand, words } = syntheticText(1000 + c);
        const mine: { id: string; rev: number }[] = [];
        let q = c * 7;
        while (performance.now() < deadline) {
          const x = rand();
          const picked: OpName =
            x < mix.recall
              ? 'recall'
              : x < mix.recall + mix.remember
                ? 'remember'
                : x < mix.recall + mix.remember + mix.supersede
                  ? 'supersede'
                  : 'forget';
          // Nothing of this client's to revise yet: it remembers first.
          const op: OpName = picked !== 'recall' && mine.length === 0 ? 'remember' : picked;
          const t0 = performance.now();
          try {
            if (op === 'recall') {
              const query = w.queries[q++ % w.queries.length]!;
              const r = await fetch(
                `${base}/api/recall?q=${encodeURIComponent(query.query)}&project=${PROJECT}&limit=5`,
                { headers },
              );
              const b = (await r.json()) as { results?: { id: string }[] };
              if (r.status !== 200 || !b.results) throw new Error(`recall ${r.status}`);
              lat.recall.push(performance.now() - t0);
              for (const m of b.results) seen.get(tenant)!.add(m.id);
              asked++;
              const target = nameOf.get(tenant)!.get(query.target);
              if (b.results.slice(0, 5).some((m) => m.id === target)) hits++;
              continue;
            }
            let path: string;
            let body: Record<string, unknown>;
            let extra: Record<string, string> = {};
            let pick = -1;
            if (op === 'remember') {
              path = '/api/memories';
              body = {
                type: 'fact',
                abstract: `load ${words(8)}`,
                body: words(30),
                project: PROJECT,
              };
            } else {
              pick = Math.floor(rand() * mine.length);
              const m = mine[pick]!;
              path = `/api/memories/${m.id}/${op === 'supersede' ? 'supersede' : 'retract'}`;
              body =
                op === 'supersede'
                  ? { abstract: `load revised ${words(8)}`, project: PROJECT }
                  : { reason: 'bench forget', project: PROJECT };
              extra = { 'if-match': `"${m.rev}"` };
            }
            const r = await fetch(`${base}${path}`, {
              method: 'POST',
              headers: { ...headers, ...extra },
              body: JSON.stringify(body),
            });
            const b = (await r.json()) as {
              id?: string;
              rev?: number;
              error?: { message: string };
            };
            if ((r.status !== 201 && r.status !== 200) || !b.id || typeof b.rev !== 'number')
              throw new Error(`${op} ${r.status} ${b.error?.message ?? ''}`.trim());
            lat[op].push(performance.now() - t0);
            acks.push({ tenant, id: b.id, rev: b.rev });
            seen.get(tenant)!.add(b.id);
            if (op === 'remember') mine.push({ id: b.id, rev: b.rev });
            else if (op === 'supersede') mine[pick] = { id: b.id, rev: b.rev };
            else mine.splice(pick, 1);
          } catch (e) {
            errors.push((e as Error).message.slice(0, 200));
          }
        }
      }),
    );
    const loadS = (performance.now() - loadStart) / 1000;

    // After the run: acknowledged writes, tenant isolation of every returned id, journals.
    const check = new pg.Pool({ connectionString: url, max: 1 });
    let lost = 0;
    let foreign = 0;
    try {
      for (const t of tenants) {
        const { rows } = await check.query<{ k: string }>(
          "SELECT id || ':' || rev AS k FROM revisions WHERE tenant_id = $1",
          [t],
        );
        const have = new Set(rows.map((r) => r.k));
        lost += acks.filter((a) => a.tenant === t && !have.has(`${a.id}:${a.rev}`)).length;
        const ids = [...seen.get(t)!];
        const own = await check.query<{ id: string }>(
          'SELECT id FROM memories WHERE tenant_id = $1 AND id = ANY($2::text[])',
          [t, ids],
        );
        foreign += ids.length - own.rows.length;
      }
    } finally {
      await check.end();
    }
    const verify = (args: string[]) => {
      const r = spawnSync(process.execPath, [BIN, '--json', '--db', url, ...args], {
        encoding: 'utf8',
        env: { ...process.env, MNEME_DATABASE_URL: '' },
      });
      return r.status === 0 && (JSON.parse(r.stdout) as { ok: boolean }).ok === true;
    };
    const journals = Object.fromEntries(
      tenants.map((t) => [t, verify(['--tenant', t, 'journal', 'verify'])]),
    );
    const operatorOk = verify(['journal', 'verify', '--operator']);

    const ops = Object.fromEntries(
      (Object.keys(lat) as OpName[]).map((k) => {
        const v = [...lat[k]].sort((a, b) => a - b);
        return [
          k,
          {
            count: v.length,
            per_s: r2(v.length / loadS),
            p50_ms: v.length ? r2(percentile(v, 50)) : null,
            p95_ms: v.length ? r2(percentile(v, 95)) : null,
            p99_ms: v.length ? r2(percentile(v, 99)) : null,
          },
        ];
      }),
    ) as Record<
      OpName,
      {
        count: number;
        per_s: number;
        p50_ms: number | null;
        p95_ms: number | null;
        p99_ms: number | null;
      }
    >;
    const writes = ops.remember.count + ops.supersede.count + ops.forget.count;
    const journalsOk = Object.values(journals).every(Boolean) && operatorOk;
    return {
      benchmark: 'serve',
      n: cfg.memories,
      config: {
        instances: cfg.instances,
        tenants: cfg.tenants,
        memories_per_tenant: memories.length,
        clients: cfg.clients,
        duration_s: cfg.durationS,
        mix: Object.fromEntries(
          Object.entries(mix).map(([k, v]) => [k, Math.round(v * 1e4) / 1e4]),
        ),
        seeding: `engine.apply in batches of ${cfg.seedBatch} ops (one transaction per batch, each op its own journaled commit), the tenants side by side, from the composition root, before the servers start`,
        workload: { file: data.path, sha256: data.sha256, generator: 'gen-workload.mjs --seed 42' },
        postgres,
      },
      metrics: {
        recall_p50_ms: ops.recall.p50_ms,
        recall_p95_ms: ops.recall.p95_ms,
        recall_p99_ms: ops.recall.p99_ms,
        recall_per_s: ops.recall.per_s,
        'recall_hit@5': asked ? r2(hits / asked) : null,
        write_p50_ms: writes
          ? r2(
              percentile(
                [...lat.remember, ...lat.supersede, ...lat.forget].sort((a, b) => a - b),
                50,
              ),
            )
          : null,
        writes_per_s: r2(writes / loadS),
        errors: errors.length,
        lost_writes: lost,
        foreign_results: foreign,
        journals_ok: journalsOk ? 1 : 0,
        // The database after seeding (every tenant, indexes included), per 1,000 memories.
        db_mb_per_1k_memories: r2(dbBytes / 2 ** 20 / ((memories.length * cfg.tenants) / 1000)),
        seed_writes_per_s: r2((memories.length * cfg.tenants) / seedS),
      },
      ops,
      load_s: r2(loadS),
      // The machine is shared: its 1/5/15-minute load averages as the load began and ended.
      loadavg: { before: loadavgBefore, after: os.loadavg().map(r2) },
      seed_s: r2(seedS),
      journals: { ...journals, _operator: operatorOk },
      error_samples: [...new Set(errors)].slice(0, 8),
      database: cfg.keep ? dbName : null,
    };
  } finally {
    for (const ch of children) ch.kill('SIGTERM');
    await Promise.all(
      children.map((ch) =>
        ch.exitCode === null ? new Promise((r) => ch.once('exit', r)) : Promise.resolve(),
      ),
    );
    if (!cfg.keep) await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  }
}
