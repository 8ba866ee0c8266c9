// `mneme bench serve`: the team server under load, measured from outside. A throwaway database;
// T tenants, each seeded with the same M memories of the shared workload generator (seed 42) in
// a project named plainly (`bench`); N `mneme serve --db` processes; C concurrent HTTP clients
// with each tenant's token, for a fixed duration, doing recall 80%, remember 15% and
// supersede/forget 5% through the real API. Then: every acknowledged write is in the database,
// every tenant's journal and the operator journal verify (the real CLI), and no id in any
// response belongs to another tenant.
//
// Two ways to drive it: closed loop (the default: C clients, each sending its next request when
// the last one answered — the saturation throughput; its latency is C ÷ throughput by Little's
// law) and open loop (`rate`: Poisson arrivals at R requests/s in total, each request's latency
// measured from its scheduled start, so a server that falls behind shows it as latency).
// `keep` leaves the seeded database behind with what a later run needs to reuse it (`reuseDb`:
// the schema version and the workload's hash are checked, the seeding is skipped).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { MnemeError } from '../../src/core/errors.js';
import { namedProjectScope } from '../../src/core/scope.js';
import { SCHEMA_VERSION } from '../../src/store/postgres/schema.js';
import { openEngine, withGovernance } from '../../src/surfaces/compose.js';
import { BENCH_ACTOR, readDataFile } from './harness.js';
import { percentile } from './metrics.js';
import { opaqueKey } from './ingest.js';
import { BIN, generateWorkload, rememberOp, type Workload } from './scale.js';
import { syntheticText } from './synthetic-text.js';
import { DEFAULT_MIX, type Mix, type OpName } from './serve-mix.js';

export { DEFAULT_MIX, type Mix };

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
  /** A database a run with `keep` left: reused, not seeded (same workload, tenants, size). */
  reuseDb?: string;
  /** Open loop: Poisson arrivals at this many requests per second in total (default: closed). */
  rate?: number;
}

/** What a kept database records of its seeding, checked before it is reused. */
const META_TABLE = 'bench_serve_meta';

const PROJECT = 'bench';
const r2 = (n: number) => Math.round(n * 100) / 100;

/** `recall=0.8,remember=0.2`: the named shares (the rest 0), scaled to sum to 1. */
export function parseMix(text: string): Mix {
  const mix: Mix = { recall: 0, remember: 0, supersede: 0, forget: 0, health: 0 };
  for (const part of text.split(',')) {
    const m = /^\s*(recall|remember|supersede|forget|health)\s*=\s*(\d+(?:\.\d+)?)\s*$/.exec(part);
    if (!m)
      throw new MnemeError('invalid', `--mix: "${part}" is not op=share`, {
        hint: 'name ops of recall, remember, supersede, forget, health: --mix recall=0.8,remember=0.2',
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
  const reuse = cfg.reuseDb !== undefined;
  if (reuse && !/^[a-z_][a-z0-9_]*$/.test(cfg.reuseDb!))
    throw new MnemeError('invalid', `--reuse-db: "${cfg.reuseDb}" is not a database name`, {
      hint: 'pass the name a run with --keep printed (its result has it under "database")',
    });
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
  const dbName = cfg.reuseDb ?? `mneme_bench_serve_${randomBytes(4).toString('hex')}`;
  if (!reuse) await admin.query(`CREATE DATABASE ${dbName}`);
  const u = new URL(cfg.admin);
  u.pathname = `/${dbName}`;
  const url = u.toString();
  const postgres = (
    await admin.query<{ v: string }>("SELECT current_setting('server_version') AS v")
  ).rows[0]!.v;
  const children: ChildProcess[] = [];
  const scope = namedProjectScope(PROJECT);
  const tenants = Array.from({ length: cfg.tenants }, (_, i) => `t${i + 1}`);
  const meta = {
    schema_version: SCHEMA_VERSION,
    workload_sha256: data.sha256,
    tenants: cfg.tenants,
    memories_per_tenant: memories.length,
  };
  let runsBefore = 0;
  try {
    if (reuse) runsBefore = await checkReusable(url, dbName, meta);
    // Tenants and tokens through governance (journaled), each token allowed only `bench`.
    // A reused database keeps its tenants; each run issues its own tokens.
    const tokens = new Map<string, string>();
    await withGovernance(url, async (g) => {
      for (const t of tenants) {
        if (!reuse) await g.createTenant(t);
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
    if (reuse) for (const t of tenants) nameOf.set(t, await seededNames(url, t, memories));
    await Promise.all(
      (reuse ? [] : tenants).map(async (t) => {
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
    if (!reuse) stderr('\n');
    const seedS = (performance.now() - seedStart) / 1000;
    let dbBytes = 0;
    await admin.query('SELECT 1'); // keep the admin connection alive across a long seed
    {
      const p = new pg.Pool({ connectionString: url, max: 1 });
      if (cfg.keep && !reuse) {
        await p.query(`CREATE TABLE ${META_TABLE}(k text PRIMARY KEY, v text NOT NULL)`);
        await p.query(`INSERT INTO ${META_TABLE} SELECT * FROM unnest($1::text[], $2::text[])`, [
          Object.keys(meta),
          Object.values(meta).map(String),
        ]);
      }
      if (reuse) await p.query(`UPDATE ${META_TABLE} SET v = (v::int + 1)::text WHERE k = 'runs'`);
      else if (cfg.keep) await p.query(`INSERT INTO ${META_TABLE} VALUES ('runs', '1')`);
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

    const lat: Record<OpName, number[]> = {
      recall: [],
      remember: [],
      supersede: [],
      forget: [],
      health: [],
    };
    const errors: string[] = [];
    const acks: { tenant: string; id: string; rev: number }[] = [];
    const seen = new Map<string, Set<string>>(tenants.map((t) => [t, new Set()]));
    let hits = 0;
    let asked = 0;
    const mix = cfg.mix ?? DEFAULT_MIX;
    // One client identity per --clients: its tenant, instance, token, text and its own memories
    // (the only ones it revises; in the open loop one in flight is not picked again).
    const clients = Array.from({ length: cfg.clients }, (_, c) => {
      const tenant = tenants[c % tenants.length]!;
      return {
        tenant,
        base: instances[c % instances.length]!.base,
        headers: {
          authorization: `Bearer ${tokens.get(tenant)}`,
          'content-type': 'application/json',
        },
        // A reused database holds the earlier runs' writes: new texts, or they would collide.
        ...syntheticText(1000 + c + 100_003 * runsBefore),
        mine: [] as { id: string; rev: number; busy: boolean }[],
        q: c * 7,
      };
    });
    type Client = (typeof clients)[number];
    const pickOp = (cl: Client): OpName => {
      const x = cl.rand();
      const picked: OpName =
        x < mix.health
          ? 'health'
          : x < mix.health + mix.recall
            ? 'recall'
            : x < mix.health + mix.recall + mix.remember
              ? 'remember'
              : x < mix.health + mix.recall + mix.remember + mix.supersede
                ? 'supersede'
                : 'forget';
      // Nothing of this client's to revise (or all of it in flight): it remembers instead.
      const revises = picked === 'supersede' || picked === 'forget';
      return revises && !cl.mine.some((m) => !m.busy) ? 'remember' : picked;
    };
    /** One request; its latency counted from `t0` (the scheduled start in the open loop). */
    const runOp = async (cl: Client, op: OpName, t0: number): Promise<void> => {
      const { tenant, base, headers } = cl;
      try {
        if (op === 'health') {
          const r = await fetch(`${base}/api/health`);
          const b = (await r.json()) as { ok?: boolean };
          if (r.status !== 200 || b.ok !== true) throw new Error(`health ${r.status}`);
          lat.health.push(performance.now() - t0);
          return;
        }
        if (op === 'recall') {
          const query = w.queries[cl.q++ % w.queries.length]!;
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
          return;
        }
        let path: string;
        let body: Record<string, unknown>;
        let extra: Record<string, string> = {};
        let m: Client['mine'][number] | undefined;
        if (op === 'remember') {
          path = '/api/memories';
          body = {
            type: 'fact',
            abstract: `load ${cl.words(8)}`,
            body: cl.words(30),
            project: PROJECT,
          };
        } else {
          const free = cl.mine.filter((x) => !x.busy);
          m = free[Math.floor(cl.rand() * free.length)]!;
          m.busy = true;
          path = `/api/memories/${m.id}/${op === 'supersede' ? 'supersede' : 'retract'}`;
          body =
            op === 'supersede'
              ? { abstract: `load revised ${cl.words(8)}`, project: PROJECT }
              : { reason: 'bench forget', project: PROJECT };
          extra = { 'if-match': `"${m.rev}"` };
        }
        try {
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
          if (op === 'remember') cl.mine.push({ id: b.id, rev: b.rev, busy: false });
          else if (op === 'supersede') m!.rev = b.rev;
          else cl.mine.splice(cl.mine.indexOf(m!), 1);
        } finally {
          if (m) m.busy = false;
        }
      } catch (e) {
        errors.push((e as Error).message.slice(0, 200));
      }
    };
    const loadavgBefore = os.loadavg().map(r2);
    const loadStart = performance.now();
    const deadline = loadStart + cfg.durationS * 1000;
    let late = 0;
    let maxInFlight = 0;
    if (cfg.rate === undefined) {
      await Promise.all(
        clients.map(async (cl) => {
          while (performance.now() < deadline) await runOp(cl, pickOp(cl), performance.now());
        }),
      );
    } else {
      // Poisson arrivals (exponential gaps, a seeded generator), the clients in turn; a request
      // is sent at its scheduled time whether or not the earlier ones have answered.
      const { rand } = syntheticText(7);
      const pending: Promise<void>[] = [];
      let inFlight = 0;
      let at = loadStart;
      for (let i = 0; ; i++) {
        at += (-Math.log(1 - rand()) / cfg.rate) * 1000;
        if (at >= deadline) break;
        const wait = at - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        else if (wait < -5) late++; // the generator itself fell behind (the machine is busy)
        const cl = clients[i % clients.length]!;
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        pending.push(runOp(cl, pickOp(cl), at).finally(() => inFlight--));
      }
      await Promise.all(pending);
    }
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
        // closed: each client waits for its answer (saturation throughput); open: Poisson
        // arrivals at rate_per_s, latency from each request's scheduled start.
        loop: cfg.rate === undefined ? 'closed' : 'open',
        rate_per_s: cfg.rate ?? null,
        reused_db: reuse ? { database: dbName, runs_before: runsBefore } : null,
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
        seed_writes_per_s: reuse ? null : r2((memories.length * cfg.tenants) / seedS),
      },
      ops,
      load_s: r2(loadS),
      // The machine is shared: its 1/5/15-minute load averages as the load began and ended.
      loadavg: { before: loadavgBefore, after: os.loadavg().map(r2) },
      seed_s: reuse ? null : r2(seedS),
      journals: { ...journals, _operator: operatorOk },
      error_samples: [...new Set(errors)].slice(0, 8),
      // Open loop: arrivals sent over 5 ms late (the load generator behind), most in flight.
      open_loop:
        cfg.rate === undefined ? null : { late_arrivals: late, max_in_flight: maxInFlight },
      database: cfg.keep || reuse ? dbName : null,
    };
  } finally {
    for (const ch of children) ch.kill('SIGTERM');
    await Promise.all(
      children.map((ch) =>
        ch.exitCode === null ? new Promise((r) => ch.once('exit', r)) : Promise.resolve(),
      ),
    );
    if (!cfg.keep && !reuse) await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  }
}

/**
 * Whether a kept database can serve this run: made by a run with --keep (its meta table), at
 * this code's schema version (a migration would change what is measured, and a newer one
 * cannot be opened), seeded from the same workload with the same tenants and size. Returns how
 * many runs it has served.
 */
async function checkReusable(
  url: string,
  name: string,
  want: Record<string, string | number>,
): Promise<number> {
  const p = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const have = new Map<string, string>();
    try {
      const { rows } = await p.query<{ k: string; v: string }>(`SELECT k, v FROM ${META_TABLE}`);
      for (const r of rows) have.set(r.k, r.v);
    } catch (e) {
      throw new MnemeError(
        'invalid',
        `--reuse-db ${name}: not a database a bench serve --keep run left (${(e as Error).message})`,
        { hint: 'seed one with `mneme bench serve --keep …` and pass the name its result gives' },
      );
    }
    const { rows } = await p.query<{ v: number | null }>(
      'SELECT max(version) AS v FROM schema_migrations',
    );
    have.set('schema_version', String(rows[0]?.v ?? 0));
    const wrong = Object.entries(want).filter(([k, v]) => have.get(k) !== String(v));
    if (wrong.length > 0)
      throw new MnemeError(
        'invalid',
        `--reuse-db ${name}: seeded for another run (${wrong.map(([k, v]) => `${k} ${have.get(k) ?? 'missing'}, this run ${v}`).join('; ')})`,
        {
          hint: 'pass the same --tenants, --memories and --workload it was seeded with, on the same schema; or seed a new one with --keep',
        },
      );
    return Number(have.get('runs') ?? 0);
  } finally {
    await p.end();
  }
}

/** A reused tenant's workload names → memory ids, from the subject every seeded memory carries. */
async function seededNames(
  url: string,
  tenant: string,
  memories: Workload['memories'],
): Promise<Map<string, string>> {
  const p = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const { rows } = await p.query<{ id: string; s: string | null }>(
      `SELECT id, (doc::json -> 'fields' ->> 'subject') AS s FROM revisions
       WHERE tenant_id = $1 AND rev = 1`,
      [tenant],
    );
    const bySubject = new Map(rows.flatMap((r) => (r.s === null ? [] : [[r.s, r.id] as const])));
    const names = new Map<string, string>();
    let missing = 0;
    for (const m of memories) {
      const id = bySubject.get(opaqueKey(m.name));
      if (id === undefined) missing++;
      else names.set(m.name, id);
    }
    if (missing > 0)
      throw new MnemeError(
        'invalid',
        `--reuse-db: tenant ${tenant} lacks ${missing} of the ${memories.length} seeded memories`,
        { hint: 'the database was not seeded completely: seed a new one with --keep' },
      );
    return names;
  } finally {
    await p.end();
  }
}
