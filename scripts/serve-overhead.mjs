// The fixed cost of one recall through the HTTP API on a small tenant, for builds side by side.
//   node scripts/serve-overhead.mjs --admin postgres://postgres@127.0.0.1:5432/postgres \
//     --build before=/tmp/before --build after=. [--memories 200] [--requests 300] [--callgrind]
//     [--store files|db|both] [--out bench/results/FILE.json] [--keep-callgrind DIR]
//     [--warmup 40] [--node-args '--cpu-prof --cpu-prof-dir=DIR']
// Seeds one throwaway database (one tenant, a token bound to project `bench`, M memories, a few
// forgotten) and, for --store files, one embedded store with the same memories. Then, for each
// build in turn, starts its `mneme serve` (--db, or --store on loopback) and sends recalls one at
// a time: a warm-up, then N measured ones whose top result must be their target. Counted through
// scripts/pg-probe.mjs (every pg Client#query is one round trip) and, with --callgrind, as
// instructions of the server process (valgrind; counters zeroed after the warm-up). The database
// is dropped at the end.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { URL, fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout } from 'node:timers';

const { fetch } = globalThis;

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const require = createRequire(import.meta.url);
const pg = require('pg');

const args = process.argv.slice(2);
const opt = (name, d) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : d;
};
const builds = [];
for (let i = 0; i < args.length; i++)
  if (args[i] === '--build') {
    const [label, dir] = args[i + 1].split('=');
    builds.push({ label, root: path.resolve(dir) });
  }
if (builds.length === 0) builds.push({ label: 'this', root: repo });
const admin = opt('admin', 'postgres://postgres@127.0.0.1:5432/postgres');
const M = Number(opt('memories', '200'));
const N = Number(opt('requests', '300'));
const W = Number(opt('warmup', '40'));
const callgrind = args.includes('--callgrind');
const which = opt('store', 'both');
const out = opt('out', null);
const keepDir = opt('keep-callgrind', null); // keep the measured dumps (callgrind_annotate)
// Extra node flags for the server, e.g. --node-args '--cpu-prof --cpu-prof-dir=/tmp/prof'.
const nodeExtra = (opt('node-args', '') ?? '').split(/\s+/).filter(Boolean);

const PROJECT = 'bench';
const word = (i, k) => `w${k}x${(i * 7919 + k * 104729) % 100003}`;
const memoryText = (i) => ({
  abstract: `service ${word(i, 1)} keeps ${word(i, 2)} in store ${word(i, 3)}`,
  body: `the team decided that ${word(i, 1)} writes ${word(i, 2)} through ${word(i, 4)}; see notes ${i}`,
});
const queryOf = (i) => `where does ${word(i, 1)} keep ${word(i, 2)}`;

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : null;
};
const r2 = (n) => Math.round(n * 100) / 100;

async function seed(dist, url, storeDir) {
  const compose = await import(`${dist}/src/surfaces/compose.js`);
  const scope = (await import(`${dist}/src/core/scope.js`)).namedProjectScope(PROJECT);
  const ops = Array.from({ length: M }, (_, i) => ({
    op: 'remember',
    type: 'fact',
    ...memoryText(i),
  }));
  const actor = { kind: 'agent', session: 'serve-overhead' };
  const ids = [];
  let token = null;
  if (url) {
    await compose.withGovernance(url, async (g) => {
      await g.createTenant('t1');
      token = (await g.issueToken({ tenant: 't1', projects: [scope] })).token;
    });
  }
  const engine = await compose.openEngine({
    ...(url ? { db: url, tenant: 't1' } : { store: storeDir }),
    binding: { project: scope, identity: `name:${PROJECT}` },
    surface: 'human',
    env: { ...process.env, MNEME_DATABASE_URL: '', MNEME_HOME: '' },
    embedder: 'off',
  });
  try {
    for (let i = 0; i < ops.length; i += 50)
      for (const r of await engine.apply(ops.slice(i, i + 50), actor)) ids.push(r.id);
    // A few forgotten values: the tombstone read returns rows, as on a real tenant.
    const extra = await engine.apply(
      Array.from({ length: 10 }, (_, i) => ({
        op: 'remember',
        type: 'fact',
        abstract: `obsolete setting ${word(i, 9)} is on`,
      })),
      actor,
    );
    for (const r of extra)
      await engine.apply([{ op: 'retract', id: r.id, reason: 'wrong' }], actor);
  } finally {
    await engine.close();
  }
  return { ids, token, scope };
}

function start(build, argv, env) {
  const probeOut = path.join(os.tmpdir(), `serve-overhead-${randomBytes(4).toString('hex')}.json`);
  const cgOut = path.join(os.tmpdir(), `serve-overhead-cg-${randomBytes(4).toString('hex')}.out`);
  const nodeArgs = [
    ...nodeExtra,
    '--import',
    path.join(here, 'pg-probe.mjs'),
    path.join(build.root, 'bin', 'mneme.js'),
    ...argv,
    'serve',
    '--port',
    '0',
  ];
  const [cmd, cmdArgs] = callgrind
    ? [
        'valgrind',
        [
          '--tool=callgrind',
          `--callgrind-out-file=${cgOut}`,
          '--dump-instr=no',
          process.execPath,
          ...nodeArgs,
        ],
      ]
    : [process.execPath, nodeArgs];
  const child = spawn(cmd, cmdArgs, {
    env: {
      ...process.env,
      ...env,
      MNEME_DATABASE_URL: '',
      MNEME_PROBE_OUT: probeOut,
      MNEME_PROBE_ROOT: build.root,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let text = '';
    let err = '';
    child.stdout.on('data', (d) => {
      text += d;
      const m = /mneme serving (http:\/\/\S+)/.exec(text);
      if (m) resolve({ child, base: m[1], probeOut, cgOut });
    });
    child.stderr.on('data', (d) => (err += d));
    child.once('exit', (c) => reject(new Error(`serve exited ${c}: ${err.slice(-800)}`)));
  });
}

async function probe(s) {
  fs.rmSync(s.probeOut, { force: true });
  s.child.kill('SIGUSR2');
  // Under valgrind on a loaded machine the file can be seen before it is whole: read until it parses.
  for (let i = 0; i < 1200; i++) {
    await new Promise((r) => setTimeout(r, 50));
    try {
      return JSON.parse(fs.readFileSync(s.probeOut, 'utf8'));
    } catch {
      // not written yet, or not whole yet
    }
  }
  throw new Error(`the server wrote no probe file ${s.probeOut}`);
}

function cgControl(pid, flag) {
  return new Promise((resolve, reject) => {
    const c = spawn('callgrind_control', [flag, String(pid)], { stdio: 'ignore' });
    c.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`callgrind_control ${flag}: ${code}`)),
    );
  });
}

function cgTotal(prefix, keep, label) {
  // The dumps of this process: the one written by -d after the zeroing holds the measured part.
  const dir = path.dirname(prefix);
  const files = fs.readdirSync(dir).filter((f) => f.startsWith(path.basename(prefix)));
  let best = null;
  for (const f of files) {
    const t = /\n(?:summary|totals): (\d+)/.exec(fs.readFileSync(path.join(dir, f), 'utf8'));
    const part = /\npart: (\d+)/.exec(fs.readFileSync(path.join(dir, f), 'utf8'));
    if (t && part && Number(part[1]) === 1) best = Number(t[1]);
  }
  for (const f of files)
    if (keep && /\.1$/.test(f))
      fs.renameSync(path.join(dir, f), path.join(keep, `${label}.callgrind.out`));
    else fs.rmSync(path.join(dir, f), { force: true });
  return best;
}

async function drive(build, kind, ctx) {
  const argv = kind === 'db' ? ['--db', ctx.url] : ['--store', ctx.storeDir];
  const s = await start(build, argv, kind === 'files' ? { MNEME_HOME: ctx.storeDir } : {});
  const headers = kind === 'db' ? { authorization: `Bearer ${ctx.token}` } : {};
  const ask = async (i) => {
    const k = i % M;
    const t0 = performance.now();
    const r = await fetch(
      `${s.base}/api/recall?q=${encodeURIComponent(queryOf(k))}&project=${kind === 'db' ? PROJECT : ctx.scope}&limit=5`,
      { headers },
    );
    const b = await r.json();
    const ms = performance.now() - t0;
    if (r.status !== 200)
      throw new Error(
        `${build.label} ${kind}: recall ${r.status} ${JSON.stringify(b).slice(0, 300)}`,
      );
    return { ms, hit: b.results[0]?.id === ctx.ids[k] };
  };
  try {
    for (let i = 0; i < W; i++) await ask(i + 1000);
    await probe(s);
    if (callgrind) await cgControl(s.child.pid, '-z');
    const ms = [];
    let hits = 0;
    for (let i = 0; i < N; i++) {
      const a = await ask(i);
      ms.push(a.ms);
      if (a.hit) hits++;
    }
    if (callgrind) await cgControl(s.child.pid, '-d');
    const counted = await probe(s);
    const res = {
      build: build.label,
      store: kind,
      requests: N,
      top1: hits / N,
      roundTripsPerRecall: r2(counted.queries / N),
      connectsPerRecall: r2(counted.connects / N),
      statements: Object.fromEntries(
        Object.entries(counted.statements).map(([k, v]) => [k, r2(v / N)]),
      ),
      latencyMs: {
        p50: r2(pct(ms, 50)),
        p95: r2(pct(ms, 95)),
        mean: r2(ms.reduce((a, b) => a + b, 0) / N),
      },
    };
    if (callgrind) {
      s.child.kill('SIGTERM');
      await new Promise((r) => s.child.once('exit', r));
      const total = cgTotal(s.cgOut, keepDir, `${build.label}-${kind}`);
      res.instructionsPerRecall = total === null ? null : Math.round(total / N);
    }
    return res;
  } finally {
    if (s.child.exitCode === null) s.child.kill('SIGTERM');
  }
}

const client = new pg.Client({ connectionString: admin });
await client.connect();
const db = `serveoverhead_${randomBytes(4).toString('hex')}`;
await client.query(`CREATE DATABASE ${db}`);
const u = new URL(admin);
u.pathname = `/${db}`;
const url = u.toString();
const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-overhead-store-'));
const results = [];
try {
  const seedDist = path.join(builds[0].root, 'dist');
  const dbSeed = which !== 'files' ? await seed(seedDist, url, null) : null;
  const fileSeed = which !== 'db' ? await seed(seedDist, null, storeDir) : null;
  for (const kind of which === 'both' ? ['db', 'files'] : [which])
    for (const b of builds) {
      const sd = kind === 'db' ? dbSeed : fileSeed;
      const r = await drive(b, kind, { url, storeDir, ...sd });
      process.stderr.write(`${JSON.stringify(r)}\n`);
      results.push(r);
    }
} finally {
  await client.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => {});
  await client.end();
  fs.rmSync(storeDir, { recursive: true, force: true });
}
const report = {
  name: 'serve-overhead',
  date: new Date().toISOString(),
  memories: M,
  requests: N,
  warmup: W,
  loadavg: os.loadavg().map(r2),
  cpus: os.cpus().length,
  node: process.version,
  results,
};
if (out) fs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
else process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
