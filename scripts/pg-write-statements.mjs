// Probe (not a product command): what one Postgres remember and a group of N queued remembers
// cost, through the real pg client and the real engine. Counts every Client#query (one round
// trip each) by statement head, times it client-side, and reads the database's backends' CPU
// from /proc and the trigger functions' time from pg_stat_user_functions (track_functions=pl).
//   node scripts/pg-write-statements.mjs [DIST] [--seed N] [--groups 1,4,16] [--rounds R]
// DIST: a build's dist directory (default: this worktree's). Prints one JSON object.
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(
  args[0] && !args[0].startsWith('--') ? args[0] : path.join(here, '../dist'),
);
const imp = (p) => import(pathToFileURL(path.join(dist, p)).href);
const pgMod = await import(pathToFileURL(path.join(dist, '../node_modules/pg/lib/index.js')).href);
const pg = pgMod.default ?? pgMod;
const { PostgresStore } = await imp('src/store/postgres/postgres-store.js');
const { throwawayDb, ADMIN_URL } = await imp('test/pg-fixtures.js');
const { AGENT, engineFor } = await imp('test/helpers.js');

const SEED = Number(opt('--seed', '500'));
const GROUPS = opt('--groups', '1,4,16').split(',').map(Number);
const ROUNDS = Number(opt('--rounds', '5'));
const PROJECT = 'api-00000001';

const head = (text) => {
  const t = text.replace(/\s+/g, ' ').trim();
  if (/^BEGIN/.test(t)) return 'BEGIN+lock+head';
  if (t.startsWith('SELECT r.id, r.rev') || t.includes('FROM memories m JOIN revisions r'))
    return 'findLiveBySlug';
  if (t.startsWith('WITH k AS') || t.includes('tombstone_grams')) return 'tombstone lookup';
  if (t.startsWith('WITH m AS') || t.startsWith('WITH j AS')) return 'commit';
  if (
    t.startsWith('WITH x AS') ||
    (t.includes('unnest($2::text[]') && t.includes('INSERT INTO journal'))
  )
    return 'group commit';
  return t.slice(0, 40);
};

let counting = false;
const sent = [];
const clientQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (...a) {
  const c = a[0];
  const text = typeof c === 'string' ? c : (c.text ?? c.name ?? '?');
  if (!counting) return clientQuery.apply(this, a);
  const t0 = process.hrtime.bigint();
  const rec = { head: head(text), ms: 0 };
  sent.push(rec);
  const p = clientQuery.apply(this, a);
  if (p && typeof p.then === 'function')
    p.then(
      () => (rec.ms = Number(process.hrtime.bigint() - t0) / 1e6),
      () => (rec.ms = Number(process.hrtime.bigint() - t0) / 1e6),
    );
  return p;
};

const db = await throwawayDb(['acme']);
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`ALTER DATABASE ${db.name} SET track_functions = 'pl'`);
const inDb = new pg.Client({ connectionString: db.url });
await inDb.connect();
const store = await PostgresStore.open(db.url, { tenant: 'acme', poolSize: 4 });
const e = engineFor(store, PROJECT, () => new Date());
const out = { dist, seed: SEED, rounds: ROUNDS, groups: {} };
try {
  for (let i = 0; i < SEED; i += 50)
    await e.apply(
      Array.from({ length: Math.min(50, SEED - i) }, (_, k) => ({
        op: 'remember',
        type: 'fact',
        abstract: `Seed note ${i + k} about the ${['ledger', 'invoice', 'export', 'search'][k % 4]} service ${i * 7 + k}`,
      })),
      AGENT,
    );
  const backendCpu = async () => {
    const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
      db.name,
    ]);
    const tick = 100; // CLK_TCK
    let ms = 0;
    for (const { pid } of rows) {
      try {
        const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
        ms += ((Number(f[11]) + Number(f[12])) * 1000) / tick;
      } catch {
        /* gone */
      }
    }
    return ms;
  };
  const fnTimes = async () => {
    const { rows } = await inDb.query(
      `SELECT funcname, calls, total_time, self_time FROM pg_stat_user_functions`,
    );
    return Object.fromEntries(rows.map((r) => [r.funcname, r]));
  };
  let n0 = 0;
  for (const n of GROUPS) {
    const per = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Holds the write lock so the N writers queue and form one group.
      let release;
      const gate = new Promise((r) => (release = r));
      let started;
      const inside = new Promise((r) => (started = r));
      const holder = store.withWriteLock(async () => {
        started();
        await gate;
      });
      await inside;
      const writes = Array.from({ length: n }, (_, i) =>
        e.apply(
          [
            {
              op: 'remember',
              type: 'fact',
              abstract: `Group ${n} round ${round} note ${i} about the ${['ledger', 'invoice', 'export'][i % 3]} job ${n0++}`,
            },
          ],
          AGENT,
        ),
      );
      await sleep(20);
      const cpu0 = await backendCpu();
      const fn0 = await fnTimes();
      sent.length = 0;
      counting = true;
      const t0 = process.hrtime.bigint();
      release();
      await holder;
      const results = await Promise.all(writes);
      const wall = Number(process.hrtime.bigint() - t0) / 1e6;
      counting = false;
      await sleep(1100); // backends flush function stats at most once a second
      const cpu1 = await backendCpu();
      const fn1 = await fnTimes();
      if (results.some((r) => !r[0] || r[0].seq == null)) throw new Error('a write did not land');
      // The holder's COMMIT is the first statement: not the group's.
      const group = sent.slice(1);
      const byHead = {};
      for (const s of group) {
        byHead[s.head] ??= { n: 0, ms: 0 };
        byHead[s.head].n++;
        byHead[s.head].ms += s.ms;
      }
      const trig = {};
      for (const [k, v] of Object.entries(fn1)) {
        const b = fn0[k] ?? { calls: 0, total_time: 0 };
        trig[k] = { calls: Number(v.calls) - Number(b.calls), ms: v.total_time - b.total_time };
      }
      per.push({
        statements: group.length,
        wall_ms: wall,
        backend_cpu_ms: cpu1 - cpu0,
        byHead,
        trig,
      });
    }
    const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    out.groups[n] = {
      statements: per.map((p) => p.statements),
      statements_per_write: per[0].statements / n,
      wall_ms_median: med(per.map((p) => p.wall_ms)),
      backend_cpu_ms_total: per.reduce((a, p) => a + p.backend_cpu_ms, 0),
      by_statement_last_round: per[per.length - 1].byHead,
      trigger_functions_last_round: per[per.length - 1].trig,
    };
  }
  const v = await store.verifyJournal();
  out.journal_ok = v.ok;
} finally {
  await store.close();
  await admin.end();
  await inDb.end();
  await db.drop();
}
console.log(JSON.stringify(out, null, 1));
