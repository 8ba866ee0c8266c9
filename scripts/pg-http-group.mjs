/* global fetch */
// Probe (not a product command): the statements one `serve --db` process sends for a group of
// N HTTP remembers of one tenant, queued behind the tenant's write lock held by another
// connection meanwhile, counted through the real pg client. Prints each round's statuses, the
// count and the statement heads (the holder's own COMMIT among them).
//   node scripts/pg-http-group.mjs DIST [N]
import path from 'node:path';
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
const dist = path.resolve(process.argv[2]);
const N = Number(process.argv[3] ?? 4);
const imp = (p) => import(pathToFileURL(path.join(dist, p)).href);
const pg = (await import(pathToFileURL(path.join(dist, '../node_modules/pg/lib/index.js')).href))
  .default;
const { throwawayDb } = await imp('test/pg-fixtures.js');
const { issueToken } = await imp('src/store/postgres/tenants.js');
const { startDbServer } = await imp('src/surfaces/http/server.js');
const sent = [];
let counting = false;
const cq = pg.Client.prototype.query;
pg.Client.prototype.query = function (...a) {
  const c = a[0];
  const t = typeof c === 'string' ? c : (c.text ?? c.name ?? '?');
  if (counting) sent.push(t.replace(/\s+/g, ' ').trim().slice(0, 60));
  return cq.apply(this, a);
};
const db = await throwawayDb(['acme']);
const pool = new pg.Pool({ connectionString: db.url, max: 2 });
const API = 'api-00000001';
const { token } = await issueToken(pool, { tenant: 'acme', projects: [API] });
const server = await startDbServer({ db: db.url, port: 0, poolSize: 4, log: () => {} });
const post = (i) =>
  fetch(`${server.url}/api/memories`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      type: 'fact',
      abstract: `load note ${i} alpha beta`,
      body: `words ${i} gamma delta`,
      project: API,
    }),
  }).then(async (r) => [r.status, await r.json()]);
console.log(await post(-1));
for (let round = 0; round < 3; round++) {
  const key = createHash('sha256').update('acme').digest().readInt32BE(0);
  const holder = await pool.connect();
  await holder.query('BEGIN');
  await holder.query('SELECT pg_advisory_xact_lock($1, $2)', [0x6d6e6d77, key]);
  sent.length = 0;
  counting = true;
  const ps = [...Array(N)].map((_, i) => post(round * 100 + i));
  await sleep(300);
  await holder.query('COMMIT');
  holder.release();
  const rs = await Promise.all(ps);
  counting = false;
  console.log(rs.map((r) => r[0]).join(','), sent.length, JSON.stringify(sent, null, 0));
}
await server.close();
await pool.end();
await db.drop();
