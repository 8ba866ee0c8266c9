// fsck's integrity phase for the Postgres adapter: the journal chain (judged by the store's
// verifyJournal, passed in), each revision row's document against the hash its journal entry
// recorded, revision rows no journal entry records, derived columns (lifecycle, full-text) that
// differ from what the lineage derives (a cache repair: reindex), and unreadable proposal rows.
// There are no files here, so no hand edits, orphan files or half-done writes: a commit is one
// transaction.
import type pg from 'pg';
import { sha256 } from '../../core/hash.js';
import { journaledHashes, type JournalEntry } from '../../core/journal.js';
import { deriveLineage } from '../../core/lineage.js';
import { serializeRevision } from '../../core/markdown.js';
import { toRevision } from '../../core/revision.js';
import type { Revision } from '../../core/types.js';
import { chainFindings } from '../derived.js';
import type { IntegrityFinding, VerifyReport } from '../port.js';
import { ROW_COLUMNS, rowValues } from './sql.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

const DERIVED = ROW_COLUMNS.filter((k) => k !== 'doc');

export async function integrityFindings(
  c: Queryable,
  t: string,
  v: VerifyReport,
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
  const { rows } = await c.query<
    Record<string, unknown> & { id: string; rev: number; doc: string }
  >(
    `SELECT id, rev, ${ROW_COLUMNS.join(', ')} FROM revisions WHERE tenant_id = $1
     ORDER BY id, rev`,
    [t],
  );
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
