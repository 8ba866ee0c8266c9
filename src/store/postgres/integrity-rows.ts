// fsck's integrity phase for the Postgres adapter: the journal chain (judged by the store's
// verifyJournal, passed in), each revision row's document against the hash its journal entry
// recorded, revision rows no journal entry records, derived columns (lifecycle, full-text) that
// differ from what the lineage derives (a cache repair: reindex), and unreadable proposal rows.
// There are no files here, so no hand edits, orphan files or half-done writes: a commit is one
// transaction.
// Incremental (the default for fsck): a lineage whose rows are unchanged since it was last checked
// clean — each row's xmin (which any UPDATE or re-INSERT moves) and the hash its journal entry
// records, as they were — is not read again. The marks are rows of fsck_marks, in the tenant's
// database (every instance and machine running fsck shares them, and they go with the tenant),
// written after each batch of CHECKPOINT_EVERY lineages so an interrupted run resumes.
import type pg from 'pg';
import { sha256 } from '../../core/hash.js';
import { journaledHashes, type JournalEntry } from '../../core/journal.js';
import { deriveLineage } from '../../core/lineage.js';
import { serializeRevision } from '../../core/markdown.js';
import { toRevision } from '../../core/revision.js';
import type { Revision } from '../../core/types.js';
import { chainFindings } from '../derived.js';
import type { IntegrityFinding, IntegrityOptions, VerifyReport } from '../port.js';
import { ROW_COLUMNS, rowValues } from './sql.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

const DERIVED = ROW_COLUMNS.filter((k) => k !== 'doc');

/** How many lineages an incremental check reads between two saves of its marks. */
export const CHECKPOINT_EVERY = 200;

type Row = Record<string, unknown> & { id: string; rev: number; doc: string; x: string };

/** A lineage's fingerprint: each row's xmin and journaled hash. */
const fingerprint = (revs: [number, string][], journaled: Map<string, string>, id: string) =>
  sha256(JSON.stringify(revs.map(([rev, x]) => [rev, x, journaled.get(`${id}#${rev}`) ?? null])));

export async function integrityFindings(
  c: Queryable,
  t: string,
  v: VerifyReport,
  opts: IntegrityOptions = {},
): Promise<IntegrityFinding[]> {
  const out: IntegrityFinding[] = chainFindings(v);
  const { rows: entries } = await c.query<{ entry: string }>(
    `SELECT entry FROM journal WHERE tenant_id = $1 AND target_id IS NOT NULL
       AND (entry LIKE '%"after":{%' OR op = 'purge') ORDER BY seq`,
    [t],
  );
  const parsed: JournalEntry[] = [];
  for (const r of entries) {
    try {
      parsed.push(JSON.parse(r.entry) as JournalEntry);
    } catch {
      /* the chain check names an unreadable row */
    }
  }
  // What each revision must hash to (a purged one: the skeleton its purge entry recorded).
  const journaled = journaledHashes(parsed);
  const stats = opts.stats ?? { checked: 0, skipped: 0 };
  // Which lineages changed since their mark: xmin only, no documents read.
  const { rows: heads } = await c.query<{ id: string; rev: number; x: string }>(
    'SELECT id, rev, xmin::text AS x FROM revisions WHERE tenant_id = $1 ORDER BY id, rev',
    [t],
  );
  const now = new Map<string, [number, string][]>();
  for (const h of heads) {
    const l = now.get(h.id);
    if (l) l.push([h.rev, h.x]);
    else now.set(h.id, [[h.rev, h.x]]);
  }
  const marks = new Map<string, string>();
  if (!opts.full) {
    const { rows: m } = await c.query<{ lineage_id: string; fp: string }>(
      'SELECT lineage_id, fp FROM fsck_marks WHERE tenant_id = $1',
      [t],
    );
    for (const r of m) marks.set(r.lineage_id, r.fp);
  }
  const changed = [...now].filter(
    ([id, revs]) => marks.get(id) !== fingerprint(revs, journaled, id),
  );
  stats.skipped += now.size - changed.length;
  stats.checked += changed.length;
  await c.query(
    'DELETE FROM fsck_marks WHERE tenant_id = $1 AND NOT (lineage_id = ANY($2::text[]))',
    [t, [...now.keys()]],
  );
  for (let i = 0; i < changed.length; i += CHECKPOINT_EVERY) {
    const ids = changed.slice(i, i + CHECKPOINT_EVERY).map(([id]) => id);
    const { rows } = await c.query<Row>(
      `SELECT id, rev, xmin::text AS x, ${ROW_COLUMNS.join(', ')} FROM revisions
       WHERE tenant_id = $1 AND id = ANY($2::text[]) ORDER BY id, rev`,
      [t, ids],
    );
    const before = out.length;
    checkRows(rows, journaled, out);
    const dirty = new Set(out.slice(before).map((f) => f.memory));
    const byId = new Map<string, [number, string][]>();
    for (const r of rows) byId.set(r.id, [...(byId.get(r.id) ?? []), [r.rev, r.x]]);
    const clean = ids.filter((id) => !dirty.has(id) && byId.has(id));
    await c.query(
      `INSERT INTO fsck_marks(tenant_id, lineage_id, fp)
       SELECT $1::text, * FROM unnest($2::text[], $3::text[])
       ON CONFLICT (tenant_id, lineage_id) DO UPDATE SET fp = EXCLUDED.fp`,
      [t, clean, clean.map((id) => fingerprint(byId.get(id)!, journaled, id))],
    );
    await c.query('DELETE FROM fsck_marks WHERE tenant_id = $1 AND lineage_id = ANY($2::text[])', [
      t,
      ids.filter((id) => dirty.has(id)),
    ]);
  }
  const { rows: proposals } = await c.query<{ id: string; doc: string }>(
    'SELECT id, doc FROM proposals WHERE tenant_id = $1 ORDER BY id',
    [t],
  );
  for (const p of proposals) {
    try {
      JSON.parse(p.doc);
    } catch {
      out.push({
        kind: 'proposal_unreadable',
        severity: 'warning',
        message: `proposal ${p.id} is not valid JSON`,
      });
    }
  }
  return out;
}

/** The checks of these lineages' rows (all rows of each), findings appended to `out`. */
function checkRows(rows: Row[], journaled: Map<string, string>, out: IntegrityFinding[]): void {
  const lineages = new Map<string, { revs: Revision[]; rows: typeof rows }>();
  for (const row of rows) {
    const where = `revision ${row.id} rev ${row.rev}`;
    let r: Revision;
    try {
      r = JSON.parse(row.doc) as Revision;
      serializeRevision(toRevision(r));
    } catch (e) {
      out.push({
        kind: 'revision_unreadable',
        severity: 'error',
        memory: row.id,
        rev: row.rev,
        message: `${where} cannot be read: ${(e as Error).message}`,
      });
      continue;
    }
    const want = journaled.get(`${row.id}#${row.rev}`);
    if (want === undefined)
      out.push({
        kind: 'revision_unjournaled',
        severity: 'error',
        memory: row.id,
        rev: row.rev,
        message: `${where} has no journal entry (its entry was deleted, or the row was inserted by hand). Repair: restore the journal from a backup`,
      });
    else if (sha256(serializeRevision(toRevision(r))) !== want)
      out.push({
        kind: 'revision_hash',
        severity: 'error',
        memory: row.id,
        rev: row.rev,
        message: `${where} does not match the hash its journal entry recorded (edited or damaged)`,
      });
    const l = lineages.get(row.id) ?? { revs: [], rows: [] };
    l.revs.push(r);
    l.rows.push(row);
    lineages.set(row.id, l);
  }
  for (const [id, l] of lineages) {
    let views: ReturnType<typeof deriveLineage>;
    try {
      views = deriveLineage(l.revs);
    } catch (e) {
      out.push({
        kind: 'revision_unreadable',
        severity: 'error',
        memory: id,
        message: `the lineage of ${id} cannot be derived: ${(e as Error).message}`,
      });
      continue;
    }
    views.forEach((view, i) => {
      const stored = l.rows[i]!;
      const values = rowValues(view, stored.doc);
      const differs = DERIVED.some((k) => {
        const a = stored[k] ?? null;
        const b = values[ROW_COLUMNS.indexOf(k)] ?? null;
        return String(a) !== String(b);
      });
      if (differs)
        out.push({
          kind: 'index_stale',
          severity: 'warning',
          memory: id,
          rev: view.rev,
          message: `the derived columns of ${id} rev ${view.rev} differ from what its lineage derives`,
        });
    });
  }
}
