// The Postgres half of a purge (engine/purge.ts decides it), inside the caller's transaction and
// write lock: the purge entry appended (arming the purge tombstone, vouching for each earlier
// journal row it rewrites), then the needles erased from every row of the tenant that holds
// text — journal rows (hash kept), tombstone events of the purged value (dropped: the purge
// tombstone replaces them), the purged revisions (their skeleton docs, every derived column and
// the tsvector re-derived), proposals, usage events, the session archive and session state.
// Other memories' revisions are left as they are. Also the tenant's purge secret and the scan
// of every table mneme owns that `--verify` and `--find` read.
import crypto from 'node:crypto';
import type pg from 'pg';
import type { JournalEntry } from '../../core/journal.js';
import { eraseJsonText, eraser, newPurgeSecret, redactedEntries } from '../../core/purge.js';
import { toRevision } from '../../core/revision.js';
import type { PurgeReport, PurgeRequest, ScanPlace } from '../port.js';
import { vouchingBody } from '../purge-body.js';
import { commitIn } from './commit-rows.js';
import { rederiveLineages } from './lineage-rows.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

/** Text columns a purge erases in, per table (row identity by ctid, under the write lock). */
const TEXT_TABLES: [table: string, column: string][] = [
  ['proposals', 'doc'],
  ['usage_events', 'doc'],
  ['session_archive', 'text'],
  ['session_state', 'doc'],
];

export async function purgeIn(
  c: pg.PoolClient,
  t: string,
  req: PurgeRequest,
): Promise<PurgeReport> {
  const e = eraser(req.needles);
  const { rows: jrows } = await c.query<{ entry: string }>(
    'SELECT entry FROM journal WHERE tenant_id = $1 ORDER BY seq',
    [t],
  );
  const entries: JournalEntry[] = [];
  for (const r of jrows) {
    try {
      entries.push(JSON.parse(r.entry) as JournalEntry);
    } catch {
      /* an unreadable row: the chain check refuses the commit below */
    }
  }
  const rewritten = redactedEntries(entries, e);
  const { entry } = await commitIn(
    c,
    t,
    { body: vouchingBody(req.body, rewritten), revision: null, tombstone: { arm: req.tombstone } },
    null,
  );
  const places = new Set<string>();
  for (const [seq, en] of rewritten) {
    await c.query('UPDATE journal SET entry = $3 WHERE tenant_id = $1 AND seq = $2', [
      t,
      seq,
      JSON.stringify(en),
    ]);
    places.add('table:journal');
  }

  // Tombstone events of the purged value (as a value tombstone) go, with any lift of them.
  const { rows: tombs } = await c.query<{ key: string; doc: string }>(
    "SELECT key, doc FROM tombstone_events WHERE tenant_id = $1 AND event = 'arm'",
    [t],
  );
  const drop = tombs
    .filter((r) => {
      const d = JSON.parse(r.doc) as { kind?: string; memory?: string };
      return d.kind !== 'purged' && (d.memory === req.id || e.holds(r.doc));
    })
    .map((r) => r.key);
  if (drop.length > 0) {
    await c.query(
      `DELETE FROM tombstone_events WHERE tenant_id = $1 AND key = ANY($2::text[])
         AND doc NOT LIKE '%"kind":"purged"%'`,
      [t, drop],
    );
    await c.query(
      `DELETE FROM tombstone_grams g WHERE tenant_id = $1 AND key = ANY($2::text[])
         AND NOT EXISTS (SELECT 1 FROM tombstone_events e
                         WHERE e.tenant_id = g.tenant_id AND e.scope = g.scope AND e.key = g.key)`,
      [t, drop],
    );
    places.add('table:tombstone_events');
  }

  // The purged revisions become their skeletons; every derived column follows.
  for (const s of req.skeletons) {
    await c.query('UPDATE revisions SET doc = $4 WHERE tenant_id = $1 AND id = $2 AND rev = $3', [
      t,
      s.id,
      s.rev,
      JSON.stringify(toRevision(s)),
    ]);
    places.add('table:revisions');
  }
  await rederiveLineages(c, t, undefined, [req.id]);
  places.add('table:memories');
  // The search counts' queue (migration 9) holds the purged words until it is folded, at
  // commit: folded now, so nothing this transaction reads afterwards still holds them.
  await c.query('SET CONSTRAINTS fts_dirty_fold IMMEDIATE');

  for (const [table, column] of TEXT_TABLES) {
    const { rows } = await c.query<{ ctid: string; v: string }>(
      `SELECT ctid::text AS ctid, ${column} AS v FROM ${table} WHERE tenant_id = $1`,
      [t],
    );
    for (const r of rows) {
      const next = eraseJsonText(r.v, e);
      if (next === null) continue;
      await c.query(`UPDATE ${table} SET ${column} = $2 WHERE tenant_id = $1 AND ctid = $3::tid`, [
        t,
        next,
        r.ctid,
      ]);
      places.add(`table:${table}`);
    }
  }
  // Until the VACUUM after the commit is done, the old row versions are still on disk.
  await c.query('UPDATE purge_secrets SET vacuum_due = true WHERE tenant_id = $1', [t]);
  return { entry, redactedEntries: [...rewritten.keys()], places: [...places] };
}

/**
 * Dead row versions the purge left: vacuumed (outside the transaction), then the tenant's
 * vacuum_due mark cleared — left set if a VACUUM failed, so the next write tries again.
 */
export async function vacuumAfterPurge(db: Pick<pg.Pool, 'query'>, t: string): Promise<void> {
  let ok = true;
  // Every table that holds a tenant's rows (a new one, such as the postings, is never missed).
  for (const table of await tenantTables(db))
    await db.query(`VACUUM ${table}`).catch(() => (ok = false));
  if (ok) await db.query('UPDATE purge_secrets SET vacuum_due = false WHERE tenant_id = $1', [t]);
}

/** The tables mneme owns that carry a tenant_id (the purge secrets aside), by name. */
async function tenantTables(c: Pick<pg.Pool, 'query'>): Promise<string[]> {
  const { rows } = await c.query<{ table_name: string }>(
    `SELECT c.table_name FROM information_schema.columns c
     JOIN information_schema.tables t USING (table_schema, table_name)
     WHERE c.table_schema = current_schema() AND c.column_name = 'tenant_id'
       AND t.table_type = 'BASE TABLE' AND c.table_name <> 'purge_secrets'
     ORDER BY c.table_name`,
  );
  return rows.map((r) => r.table_name);
}

/** Whether a committed purge of this tenant still waits for its VACUUM (a crash after COMMIT). */
export async function vacuumDue(db: Pick<pg.Pool, 'query'>, t: string): Promise<boolean> {
  const { rows } = await db.query<{ due: boolean }>(
    'SELECT vacuum_due AS due FROM purge_secrets WHERE tenant_id = $1',
    [t],
  );
  return rows[0]?.due === true;
}

export async function purgeSecretRow(
  c: Queryable,
  t: string,
  create: boolean,
): Promise<string | null> {
  if (create)
    await c.query(
      'INSERT INTO purge_secrets(tenant_id, secret) VALUES ($1, $2) ON CONFLICT (tenant_id) DO NOTHING',
      [t, newPurgeSecret((n) => crypto.randomBytes(n))],
    );
  const { rows } = await c.query<{ secret: string }>(
    'SELECT secret FROM purge_secrets WHERE tenant_id = $1',
    [t],
  );
  return rows[0]?.secret ?? null;
}

/** Every row of every table mneme owns that carries this tenant (its purge secret aside). */
export async function scanRows(
  c: Queryable,
  t: string,
  visit: (place: ScanPlace, text: string) => void,
): Promise<void> {
  for (const name of await tenantTables(c)) {
    const { rows } = await c.query<Record<string, unknown>>(
      `SELECT * FROM ${name} WHERE tenant_id = $1`,
      [t],
    );
    rows.forEach((row, i) => {
      const id = typeof row.id === 'string' ? row.id : undefined;
      const rev = typeof row.rev === 'number' ? row.rev : undefined;
      const place = {
        where: `table:${name}`,
        line: i + 1,
        ...(id ? { id } : {}),
        ...(rev ? { rev } : {}),
      };
      visit(place, JSON.stringify(row));
      // Bytes (artifact chunks) also as text, as the file store reads its binary files.
      for (const v of Object.values(row))
        if (Buffer.isBuffer(v)) {
          visit(place, v.toString('utf8'));
          visit(place, v.toString('latin1'));
        }
    });
  }
}
