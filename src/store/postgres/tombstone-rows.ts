// The Postgres tombstone lookup index (core/normalize.ts, "Indexed lookup"): one row per armed
// tombstone in tombstone_grams, under the gram of it the fewest tombstones of its scope were
// indexed under when it was armed, with all its grams (`grams`); a lookup reads the rows of the
// write's grams and keeps those whose every gram the write holds. Rows are only added (a lift is
// read from tombstone_events; a purge deletes the rows of the keys it drops). The store answers
// from its in-memory index instead while the tenant's tombstone version is the one it was read
// at (tombstoneLookup reads the version first; postgres-store.ts tombstoneCandidates).
import type pg from 'pg';
import {
  pickTombstoneGram,
  tombstoneGrams,
  type Tombstone,
  type TombstoneProbe,
} from '../../core/normalize.js';
import type { Query } from './reads.js';

type Run = Pick<pg.PoolClient, 'query'>;

/** The index entry of a tombstone armed now: its grams and the one it is indexed under. */
export async function tombstoneEntry(
  c: Run,
  tenant: string,
  t: Tombstone,
): Promise<{ gram: string; grams: string[] }> {
  const grams = tombstoneGrams(t);
  if (grams.length <= 1) return { gram: grams[0] ?? '', grams };
  // How many tombstones each gram indexes now (index-only reads of the primary key).
  const { rows } = await c.query<{ gram: string; n: string }>(
    `SELECT q.gram, (SELECT count(*) FROM tombstone_grams g
                     WHERE g.tenant_id = $1 AND g.scope = $2 AND g.gram = q.gram COLLATE "C") AS n
     FROM unnest($3::text[]) AS q(gram)`,
    [tenant, t.scope, grams],
  );
  const n = new Map(rows.map((r) => [r.gram, Number(r.n)]));
  return { gram: pickTombstoneGram(grams, (g) => n.get(g) ?? 0), grams };
}

/** The armed tombstones of `scope` the probe finds, in key order. */
export async function tombstoneCandidates(
  query: Query,
  tenant: string,
  scope: string,
  probe: TombstoneProbe,
): Promise<Tombstone[]> {
  return (await tombstoneCandidatesMany(query, tenant, [{ scope, probe }]))[0]!;
}

/**
 * tombstoneCandidates for several lookups in one statement (the scopes a value is checked in),
 * answered in the order asked. Each lookup is its own branch with its own constants: one index
 * descent per gram of the write into its scope's rows (a LATERAL fenced with OFFSET 0, so the
 * planner can neither pull it up nor turn it into a scan of the scope's rows, whatever it knows
 * of the table: on a table not yet analyzed it did); a row found is kept when the write holds
 * every gram of it, tested against the same constant (a hashed `= ANY`: one probe per gram of
 * the row, not a pass over the write's grams as array containment made); then the latest event
 * of each key found, or asked for by its exact key.
 *
 * A scope with no index rows skips its descents (a one-time EXISTS, one descent): the write gate
 * asks global beside the value's scope, and an empty scope's descents still cost the depth of
 * the index the other scopes fill. The grams are unnested from a scalar subquery, so the planner
 * costs the branch by a nominal row count rather than the array's length: costed by its length,
 * a long body's lookup (14 000 grams) crossed jit_above_cost and spent most of a second compiling
 * itself. Asks with the same grams (each scope's probe of the same texts) share one parameter.
 */
export async function tombstoneCandidatesMany(
  query: Query,
  tenant: string,
  asks: readonly { scope: string; probe: TombstoneProbe }[],
): Promise<Tombstone[][]> {
  if (asks.length === 0) return [];
  return (await tombstoneLookup(query, tenant, asks, null)).found!;
}

/**
 * tombstoneCandidatesMany unless the tenant's tombstone version (its latest tombstone event,
 * the primary key's last entry: see armedTombstonesSince) is still `known`, in one statement:
 * the version is read first, and every branch is a one-time filter on it, so a lookup at an
 * unchanged version costs one descent and reads no index row (`found` is null: the caller
 * answers from the index it built at that version).
 */
export async function tombstoneLookup(
  query: Query,
  tenant: string,
  asks: readonly { scope: string; probe: TombstoneProbe }[],
  known: string | null,
): Promise<{ version: string; found: Tombstone[][] | null }> {
  const values: unknown[] = [tenant, known];
  const add = (v: unknown) => `$${values.push(v)}`;
  const gramParams: { grams: readonly string[]; param: string }[] = [];
  const gramsParam = (grams: readonly string[]) => {
    let p = gramParams.find((x) => sameStrings(x.grams, grams));
    if (!p) gramParams.push((p = { grams, param: add(grams) }));
    return p.param;
  };
  const moved = '(SELECT version FROM v) IS DISTINCT FROM $2::text';
  const branches = asks.map((a, i) => {
    const scope = add(a.scope);
    const grams = gramsParam(a.probe.grams);
    const keys = add(a.probe.keys);
    return `SELECT ${i + 1} AS i, ${scope}::text COLLATE "C" AS scope, g.key
       FROM unnest((SELECT ${grams}::text[])) AS q(gram), LATERAL (
         SELECT key, grams FROM tombstone_grams
         WHERE tenant_id = $1 AND scope = ${scope} COLLATE "C" AND gram = q.gram COLLATE "C"
         OFFSET 0) g
       WHERE ${moved}
         AND EXISTS (SELECT FROM tombstone_grams WHERE tenant_id = $1 AND scope = ${scope} COLLATE "C")
         AND NOT EXISTS (SELECT FROM unnest(g.grams) AS x(gram)
                         WHERE NOT x.gram = ANY(${grams}::text[] COLLATE "C"))
       UNION
       SELECT ${i + 1}, ${scope}::text COLLATE "C", k.key
       FROM unnest(${keys}::text[]) AS k(key) WHERE ${moved}`;
  });
  const { rows } = await query<{
    version: string;
    i: number | null;
    event: string | null;
    doc: string | null;
  }>(
    `WITH v AS MATERIALIZED (
       SELECT coalesce(max(seq), 0)::text AS version FROM tombstone_events WHERE tenant_id = $1),
     k AS (${asks.length > 0 ? branches.join('\n       UNION ALL\n       ') : 'SELECT 0 AS i, NULL::text COLLATE "C" AS scope, NULL::text COLLATE "C" AS key WHERE false'})
     SELECT v.version, f.i, f.event, f.doc FROM v LEFT JOIN (
       SELECT k.i, k.key, e.event, e.doc FROM k, LATERAL (
         SELECT event, doc FROM tombstone_events
         WHERE tenant_id = $1 AND scope = k.scope AND key = k.key
         ORDER BY seq DESC LIMIT 1) e) f ON true
     ORDER BY f.i, f.key COLLATE "C"`,
    values,
  );
  const version = rows[0]!.version;
  if (version === known) return { version, found: null };
  const found: Tombstone[][] = asks.map(() => []);
  for (const r of rows)
    if (r.i !== null && r.event === 'arm') found[r.i - 1]!.push(JSON.parse(r.doc!) as Tombstone);
  return { version, found };
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  return a === b || (a.length === b.length && a.every((x, i) => x === b[i]));
}

/**
 * Indexes every armed tombstone again (migration 12: their grams): in arming order per scope,
 * each under its gram with the fewest entries then, as arming them one by one would have.
 */
export async function reindexTombstones(client: Run): Promise<void> {
  const { rows } = await client.query<{
    tenant_id: string;
    scope: string;
    key: string;
    doc: string;
  }>(
    `SELECT tenant_id, scope, key, doc FROM (
       SELECT DISTINCT ON (tenant_id, scope, key) tenant_id, scope, key, event, doc, seq
       FROM tombstone_events ORDER BY tenant_id, scope, key, seq DESC) l
     WHERE event = 'arm' ORDER BY seq`,
  );
  await client.query('DELETE FROM tombstone_grams');
  const postings = new Map<string, number>();
  const out: { tenant: string; scope: string; gram: string; key: string; grams: string[] }[] = [];
  for (const r of rows) {
    const grams = tombstoneGrams(JSON.parse(r.doc) as Tombstone);
    const at = (g: string) => `${r.tenant_id}\u0000${r.scope}\u0000${g}`;
    const gram = pickTombstoneGram(grams, (g) => postings.get(at(g)) ?? 0);
    postings.set(at(gram), (postings.get(at(gram)) ?? 0) + 1);
    out.push({ tenant: r.tenant_id, scope: r.scope, gram, key: r.key, grams });
  }
  for (let i = 0; i < out.length; i += 500) {
    const batch = out.slice(i, i + 500);
    await client.query(
      `INSERT INTO tombstone_grams(tenant_id, scope, gram, key, grams)
       SELECT tenant_id, scope, gram, key,
              ARRAY(SELECT jsonb_array_elements_text(grams::jsonb)) COLLATE "C"
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
         AS u(tenant_id, scope, gram, key, grams)
       ON CONFLICT DO NOTHING`,
      [
        batch.map((r) => r.tenant),
        batch.map((r) => r.scope),
        batch.map((r) => r.gram),
        batch.map((r) => r.key),
        batch.map((r) => JSON.stringify(r.grams)),
      ],
    );
  }
}

/**
 * The tombstone events of `scope` after `since` (a version armedTombstonesSince or this returned
 * before), in the order they were written, beside the tenant's version now, in one statement:
 * what brings an index read at `since` up to `version` (the primary key's range after it).
 */
export async function tombstoneEventsSince(
  query: Query,
  tenant: string,
  scope: string,
  since: string,
): Promise<{ version: string; events: { event: string; key: string; doc: string }[] }> {
  const { rows } = await query<{
    version: string;
    event: string | null;
    key: string | null;
    doc: string | null;
  }>(
    `WITH v AS MATERIALIZED (
       SELECT coalesce(max(seq), 0)::text AS version FROM tombstone_events WHERE tenant_id = $1)
     SELECT v.version, e.event, e.key, e.doc FROM v LEFT JOIN tombstone_events e
       ON e.tenant_id = $1 AND e.seq > $3::bigint AND e.scope = $2 COLLATE "C"
     ORDER BY e.seq`,
    [tenant, scope, since],
  );
  const events: { event: string; key: string; doc: string }[] = [];
  for (const r of rows)
    if (r.event !== null) events.push({ event: r.event, key: r.key!, doc: r.doc! });
  return { version: rows[0]!.version, events };
}

/**
 * The armed tombstones of `scopes` unless none was armed, lifted or dropped in the tenant since
 * `known` (a version this returned before), in one statement: the version is the tenant's
 * latest tombstone event (the primary key's last entry), and the rows are read only when it
 * moved. Every event is written under the tenant's write lock, so a later commit always carries
 * a higher seq than any a reader saw, and a purge that drops events arms its own tombstone in the
 * same transaction: an unchanged version means unchanged tombstones.
 */
export async function armedTombstonesSince(
  query: Query,
  tenant: string,
  scopes: readonly string[],
  known: string | null,
): Promise<{ version: string; tombstones: Tombstone[] | null }> {
  const { rows } = await query<{ version: string; event: string | null; doc: string | null }>(
    `WITH v AS MATERIALIZED (
       SELECT coalesce(max(seq), 0)::text AS version FROM tombstone_events WHERE tenant_id = $1)
     SELECT v.version, t.event, t.doc FROM v LEFT JOIN (
       SELECT DISTINCT ON (scope, key) scope, key, event, doc FROM tombstone_events
       WHERE tenant_id = $1 AND scope = ANY($2::text[])
         AND (SELECT version FROM v) IS DISTINCT FROM $3::text
       ORDER BY scope, key, seq DESC) t ON true
     ORDER BY t.scope, t.key`,
    [tenant, scopes, known],
    'mneme_tombstones_since',
  );
  const version = rows[0]!.version;
  if (version === known) return { version, tombstones: null };
  const tombstones: Tombstone[] = [];
  for (const r of rows) if (r.event === 'arm') tombstones.push(JSON.parse(r.doc!) as Tombstone);
  return { version, tombstones };
}
