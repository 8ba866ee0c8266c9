// Revision rows beside the commit (commit-rows.ts writes a new one): a lineage's stored
// revisions, the derived columns of given rows rewritten in one statement, and every lineage of
// a tenant re-derived for rebuild and reindex.
import type pg from 'pg';
import { deriveLineage } from '../../core/lineage.js';
import type { Revision, RevisionView } from '../../core/types.js';
import { Params, ROW_COLUMNS, ROW_TYPES, rowValues } from './sql.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

/** Rewrites every column but the truth (doc) of the given rows, in one statement. */
export async function updateRows(
  c: Queryable,
  tenant: string,
  views: readonly RevisionView[],
): Promise<void> {
  if (views.length === 0) return;
  const cols = ROW_COLUMNS.filter((k) => k !== 'doc');
  const p = new Params();
  const t = p.add(tenant);
  const ids = p.add(views.map((v) => v.id));
  const revs = p.add(views.map((v) => v.rev));
  const values = views.map((v) => rowValues(v, '')); // once per view: tokenizing is not free
  const arrays = cols.map((k) => {
    const i = ROW_COLUMNS.indexOf(k);
    return `${p.add(values.map((row) => row[i]))}::${ROW_TYPES[k]}[]`;
  });
  await c.query(
    `UPDATE revisions r SET ${cols.map((k) => `${k} = u.${k}`).join(', ')}
     FROM unnest(${ids}::text[], ${revs}::int[], ${arrays.join(', ')})
       AS u(id, rev, ${cols.join(', ')})
     WHERE r.tenant_id = ${t} AND r.id = u.id AND r.rev = u.rev`,
    p.values,
  );
}

/** A lineage's revisions, oldest first (the truth a new revision is derived onto). */
export async function lineageRevisions(
  c: Queryable,
  tenant: string,
  id: string,
): Promise<Revision[]> {
  const { rows } = await c.query<{ doc: string }>(
    'SELECT doc FROM revisions WHERE tenant_id = $1 AND id = $2 ORDER BY rev',
    [tenant, id],
  );
  return rows.map((x) => JSON.parse(x.doc) as Revision);
}

/**
 * Re-derives lineage columns, the memories table and the full-text columns of every lineage
 * (or of the lineages `only` names: fsck's reindex).
 */
export async function rederiveLineages(
  c: Queryable,
  tenant: string,
  onProgress?: (done: number, total: number) => void,
  only?: readonly string[],
): Promise<{ memories: number; revisions: number; problems: string[] }> {
  const report = { memories: 0, revisions: 0, problems: [] as string[] };
  const { rows: idRows } = await c.query<{ id: string }>(
    `SELECT DISTINCT id FROM revisions WHERE tenant_id = $1
       AND ($2::text[] IS NULL OR id = ANY($2::text[])) ORDER BY id`,
    [tenant, only ?? null],
  );
  const ids = idRows.map((r) => r.id);
  const BATCH = 500;
  for (let i = 0; i < ids.length; i += BATCH) {
    const chunk = ids.slice(i, i + BATCH);
    const { rows } = await c.query<{ id: string; doc: string }>(
      `SELECT id, doc FROM revisions WHERE tenant_id = $1 AND id = ANY($2::text[])
       ORDER BY id, rev`,
      [tenant, chunk],
    );
    const byId = new Map<string, Revision[]>();
    for (const r of rows) {
      try {
        const rev = JSON.parse(r.doc) as Revision;
        byId.set(r.id, [...(byId.get(r.id) ?? []), rev]);
      } catch (e) {
        report.problems.push(`${r.id}: unreadable revision (${(e as Error).message})`);
      }
    }
    const views: RevisionView[] = [];
    const heads: RevisionView[] = [];
    for (const lineage of byId.values()) {
      const derived = deriveLineage(lineage);
      views.push(...derived);
      heads.push(derived[derived.length - 1]!);
      report.memories++;
      report.revisions += lineage.length;
    }
    await updateRows(c, tenant, views);
    await c.query(
      `UPDATE memories m SET scope = u.scope, type = u.type, slug = u.slug,
         current_rev = u.rev, status = u.status
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[])
         AS u(id, scope, type, slug, rev, status)
       WHERE m.tenant_id = $1 AND m.id = u.id`,
      [
        tenant,
        heads.map((v) => v.id),
        heads.map((v) => v.scope),
        heads.map((v) => v.type),
        heads.map((v) => v.slug),
        heads.map((v) => v.rev),
        heads.map((v) => v.status),
      ],
    );
    onProgress?.(Math.min(i + BATCH, ids.length), ids.length);
  }
  return report;
}
