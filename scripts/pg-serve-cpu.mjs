// Probe (not a product command): CPU time a `bench serve` run's servers spend, beside it, from
// /proc: the `serve --db` node processes and the Postgres backends that connected once the first
// server ran (the servers' pools; the seeding's backends started before). Waits for the next
// mneme_bench_serve_* database, samples every 200 ms until it is dropped, writes JSON to OUT.
//   node scripts/pg-serve-cpu.mjs OUT [ADMIN_URL]
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

const [out, url = 'postgres://postgres@127.0.0.1:5432/postgres'] = process.argv.slice(2);
const TICK = 100; // CLK_TCK
const cpuOf = (pid) => {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / TICK;
  } catch {
    return null;
  }
};
const c = new pg.Client({ connectionString: url });
await c.connect();
let db = null;
for (let i = 0; i < 3000 && !db; i++) {
  const { rows } = await c.query(
    "SELECT datname FROM pg_database WHERE datname LIKE 'mneme_bench_serve_%'",
  );
  db = rows[0]?.datname ?? null;
  if (!db) await sleep(200);
}
if (!db) throw new Error('no bench serve database appeared');
const servers = new Map(); // pid -> last cpu ms
const backends = new Map(); // pid -> { cpu, start }
let firstServer = null;
for (;;) {
  const { rows: dbs } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [db]);
  if (dbs.length === 0) break;
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let cmd;
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmd.includes(`/${db}`) && cmd.includes('serve\u0000--port')) {
      const v = cpuOf(pid);
      if (v !== null) servers.set(pid, v);
      firstServer ??= new Date();
    }
  }
  if (firstServer) {
    const { rows } = await c.query(
      'SELECT pid, backend_start FROM pg_stat_activity WHERE datname = $1 AND backend_start >= $2',
      [db, firstServer],
    );
    for (const r of rows) {
      const v = cpuOf(r.pid);
      if (v !== null) backends.set(r.pid, v);
    }
  }
  await sleep(200);
}
await c.end();
const sum = (m) => [...m.values()].reduce((a, b) => a + b, 0);
fs.writeFileSync(
  out,
  JSON.stringify(
    {
      database: db,
      server_processes: servers.size,
      server_cpu_ms: sum(servers),
      backends: backends.size,
      backend_cpu_ms: sum(backends),
    },
    null,
    1,
  ),
);
