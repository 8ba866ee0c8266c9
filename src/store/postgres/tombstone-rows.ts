// The Postgres tombstone lookup index (core/normalize.ts, "Indexed lookup"): one row per armed
// tombstone in tombstone_grams, under the gram of it the fewest tombstones of its scope were
// indexed under when it was armed, with all its grams (`grams`); a lookup reads the rows of the
// write's grams and keeps those whose every gram the write holds. Rows are only added (a lift is
// read from tombstone_events; a purge deletes the rows of the keys it drops).
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
  // Index lookups only, one per gram of the write and one per key found (LATERAL, collation
  // "C" as the columns have it, so the planner cannot turn either into a scan of the tenant's
  // tombstones); a row found is kept only when the write holds every gram of it (`= ANY` of
  // the write's grams, a constant here: hashed); then the latest event of each key.
  const { rows } = await query<{ event: string; doc: string }>(
    `WITH k AS (
       SELECT g.key FROM unnest($3::text[]) AS q(gram), LATERAL (
         SELECT key, grams FROM tombstone_grams
         WHERE tenant_id = $1 AND scope = $2 AND gram = q.gram COLLATE "C") g
       WHERE g.grams <@ $3::text[]
       UNION
       SELECT unnest($4::text[]) COLLATE "C"
     )
     SELECT e.event, e.doc FROM k, LATERAL (
       SELECT event, doc FROM tombstone_events
       WHERE tenant_id = $1 AND scope = $2 AND key = k.key
       ORDER BY seq DESC LIMIT 1) e
     ORDER BY k.key COLLATE "C"`,
    [tenant, scope, probe.grams, probe.keys],
  );
  return rows.filter((r) => r.event === 'arm').map((r) => JSON.parse(r.doc) as Tombstone);
}

/**
 * tombstoneCandidates for several lookups in one statement (the scopes a value is checked in):
 * the same index lookups and the same "every gram held" filter (array containment) per lookup, tagged with its
 * position; answers in the order asked.
 */
export async function tombstoneCandidatesMany(
  query: Query,
  tenant: string,
  asks: readonly { scope: string; probe: TombstoneProbe }[],
): Promise<Tombstone[][]> {
  if (asks.length === 1)
    return [await tombstoneCandidates(query, tenant, asks[0]!.scope, asks[0]!.probe)];
  const ki: number[] = [];
  const keys: string[] = [];
  asks.forEach((a, i) => {
    for (const k of a.probe.keys) {
      ki.push(i + 1);
      keys.push(k);
    }
  });
  const { rows } = await query<{ i: number; event: string; doc: string }>(
    `WITH calls AS (
       SELECT c.i::int AS i, c.s COLLATE "C" AS scope,
              ARRAY(SELECT jsonb_array_elements_text($3::jsonb -> (c.i::int - 1))) AS held
       FROM unnest($2::text[]) WITH ORDINALITY AS c(s, i)),
     k AS (
       SELECT calls.i, g.key FROM calls, unnest(calls.held) AS q(gram), LATERAL (
         SELECT key, grams FROM tombstone_grams
         WHERE tenant_id = $1 AND scope = calls.scope AND gram = q.gram COLLATE "C") g
       WHERE g.grams <@ calls.held
       UNION
       SELECT x.i, x.key COLLATE "C" FROM unnest($4::int[], $5::text[]) AS x(i, key)
     )
     SELECT k.i, e.event, e.doc FROM k JOIN calls USING (i), LATERAL (
       SELECT event, doc FROM tombstone_events
       WHERE tenant_id = $1 AND scope = calls.scope AND key = k.key
       ORDER BY seq DESC LIMIT 1) e
     ORDER BY k.i, k.key COLLATE "C"`,
    [tenant, asks.map((a) => a.scope), JSON.stringify(asks.map((a) => a.probe.grams)), ki, keys],
  );
  const out: Tombstone[][] = asks.map(() => []);
  for (const r of rows) if (r.event === 'arm') out[r.i - 1]!.push(JSON.parse(r.doc) as Tombstone);
  return out;
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
