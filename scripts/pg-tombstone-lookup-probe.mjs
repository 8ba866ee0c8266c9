// The tombstone lookup statement of the tombstones benchmark's writes, on a database armed as the
// benchmark arms it: backend CPU per call (/proc, median of 3 rounds of CALLS calls, interleaved)
// and EXPLAIN (ANALYZE, BUFFERS) of write 0's, for a base build (tombstoneCandidatesMany) and
// this one (tombstoneLookup at a moved version: the rows; at the version the caller holds).
//
//   node scripts/pg-tombstone-lookup-probe.mjs mkdb T DBNAME        (T tombstones, events + reindex)
//   node scripts/pg-tombstone-lookup-probe.mjs probe DBNAME T CALLS BASE_DIST AFTER_DIST [OUT]
import pg from 'pg';
import fs from 'node:fs';
import { URL } from 'node:url';
const ADMIN = process.env.PG_PROBE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const urlOf = (name) => {
  const u = new URL(ADMIN);
  u.pathname = `/${name}`;
  return u.toString();
};
const [mode, ...rest] = process.argv.slice(2);
if (mode === 'mkdb') await mkdb(Number(rest[0]), rest[1], rest[2] ?? 'dist');
else await probe(rest[0], Number(rest[1]), Number(rest[2] ?? 100), rest[3], rest[4], rest[5]);

async function mkdb(T, name, dist) {
  const at = (m) => import(`${fs.realpathSync(dist)}/${m}`);
  const N = await at('src/core/normalize.js');
  const { syntheticText } = await at('bench/src/synthetic-text.js');
  const { migrate } = await at('src/store/postgres/schema.js');
  const { createTenant } = await at('src/store/postgres/tenants.js');
  const { reindexTombstones } = await at('src/store/postgres/tombstone-rows.js');
  const { projectScope } = await at('src/core/scope.js');
  const admin = new pg.Client({ connectionString: ADMIN });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: urlOf(name), max: 1 });
  await migrate(pool);
  await createTenant(pool, 'bench');
  const scope = projectScope('bench:tombstones', 'bench');
  const { words, rand } = syntheticText(42);
  const docs = [];
  for (let j = 0; j < T; j++) {
    const v = `${words(3 + Math.floor(rand() * 5))} ${j}`;
    docs.push({
      key: N.tombstoneKey(scope, v),
      scope,
      kind: 'value',
      value_norm: N.normalizeValue(v),
      reason: null,
      actor: { kind: 'human' },
      at: '2026-01-01T00:00:00.000Z',
      from_op: 'arm',
      memory: null,
    });
  }
  for (let i = 0; i < docs.length; i += 1000) {
    const b = docs.slice(i, i + 1000);
    await pool.query(
      `INSERT INTO tombstone_events(tenant_id, journal_seq, event, scope, key, doc)
       SELECT 'bench', 1, 'arm', s, k, d FROM unnest($1::text[], $2::text[], $3::text[]) u(s, k, d)`,
      [b.map((x) => x.scope), b.map((x) => x.key), b.map((x) => JSON.stringify(x))],
    );
  }
  const c = await pool.connect();
  await c.query('BEGIN');
  await reindexTombstones(c);
  await c.query('COMMIT');
  c.release();
  await pool.end();
}

async function probe(name, T, R, base, after, out) {
  base = fs.realpathSync(base);
  after = fs.realpathSync(after);
  const N = await import(`${after}/src/core/normalize.js`);
  const { syntheticText } = await import(`${after}/bench/src/synthetic-text.js`);
  const { projectScope } = await import(`${after}/src/core/scope.js`);
  const B = await import(`${base}/src/store/postgres/tombstone-rows.js`);
  const A = await import(`${after}/src/store/postgres/tombstone-rows.js`);
  const scope = projectScope('bench:tombstones', 'bench');
  const { words, rand } = syntheticText(42);
  for (let j = 0; j < T; j++) words(3 + Math.floor(rand() * 5));
  const writes = [];
  for (let k = 0; k < 200; k++) writes.push([`write ${k}: ${words(9)}`, words(40)]);
  const asksOf = (k) =>
    [scope, 'global'].map((s) => ({
      scope: s,
      probe: N.tombstoneProbe(s, [writes[k][0]], [writes[k][1]]),
    }));
  const pool = new pg.Pool({ connectionString: urlOf(name), max: 1 });
  const c = await pool.connect();
  const pid = (await c.query('select pg_backend_pid() p')).rows[0].p;
  const cpu = () => {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(x[11]) + Number(x[12])) * 10;
  };
  const version = (
    await c.query(
      "SELECT coalesce(max(seq),0)::text v FROM tombstone_events WHERE tenant_id='bench'",
    )
  ).rows[0].v;
  const modes = {
    before: (q, k) => B.tombstoneCandidatesMany(q, 'bench', asksOf(k)),
    after_moved: (q, k) => A.tombstoneLookup(q, 'bench', asksOf(k), null),
    after_unchanged: (q, k) => A.tombstoneLookup(q, 'bench', asksOf(k), version),
  };
  const res = { database: name, tombstones: T, calls_per_round: R, rounds: [], plans: {} };
  const q = (sql, params) => c.query(sql, params);
  for (let round = 0; round < 3; round++) {
    const r = {};
    for (const [m, f] of Object.entries(modes)) {
      const t0 = cpu();
      for (let i = 0; i < R; i++) await f(q, i % 200);
      r[m] = (cpu() - t0) / R;
    }
    res.rounds.push(r);
  }
  for (const [m, f] of Object.entries(modes)) {
    let cap;
    await f((sql, params) => {
      cap = { sql, params };
      return c.query(sql, params);
    }, 0);
    const plan = (await c.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${cap.sql}`, cap.params))
      .rows[0]['QUERY PLAN'][0];
    const text = (
      await c.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${cap.sql}`, cap.params)
    ).rows
      .map((x) => x['QUERY PLAN'])
      .join('\n');
    // tombstone_grams index scans: loops and rows
    let loops = 0,
      rows = 0;
    const walk = (n) => {
      if (n['Relation Name'] === 'tombstone_grams' && n['Node Type'] === 'Index Scan') {
        loops += n['Actual Loops'];
        rows += n['Actual Rows'] * n['Actual Loops'];
      }
      for (const ch of n.Plans ?? []) walk(ch);
    };
    walk(plan.Plan);
    res.plans[m] = {
      execution_ms: plan['Execution Time'],
      planning_ms: plan['Planning Time'],
      shared_hit: plan.Plan['Shared Hit Blocks'],
      shared_read: plan.Plan['Shared Read Blocks'],
      grams_descents: loops,
      grams_rows: rows,
      text: text.replace(/'\{[^']{200,}\}'/g, "'{…grams…}'"),
    };
  }
  res.median_server_cpu_ms = Object.fromEntries(
    Object.keys(modes).map((m) => [m, res.rounds.map((r) => r[m]).sort((a, b) => a - b)[1]]),
  );
  c.release();
  await pool.end();
  console.log(
    JSON.stringify({
      T,
      median: res.median_server_cpu_ms,
      plans: Object.fromEntries(
        Object.entries(res.plans).map(([k, v]) => [k, { ...v, text: undefined }]),
      ),
    }),
  );
  if (out) fs.writeFileSync(out, JSON.stringify(res, null, 2) + '\n');
}
