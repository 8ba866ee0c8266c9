// The Postgres write path's storage half, inside the caller's transaction and write lock: the
// head row locked and the journal's tail checked against it, the revision rows, the journal row
// (moving the head), the freshness and weights it derives, then the tombstone event and
// proposal row the entry carries.
import type pg from 'pg';
import {
  EMPTY_HEAD,
  commitEntry,
  passphraseSetBy,
  type ChainHead,
  type JournalEntry,
} from '../../core/journal.js';
import { tombstoneGram } from '../../core/normalize.js';
import type { CommitRequest } from '../port.js';
import { chainRefused } from '../journal-guard.js';
import { appendRow, parsePassphrase, tailProblem, type TailRow } from './journal-rows.js';
import { applyDerived } from './derived-rows.js';
import { writeRevision } from './lineage-rows.js';

export async function commitIn(
  c: pg.PoolClient,
  t: string,
  req: CommitRequest,
): Promise<JournalEntry> {
  // The chain head, row-locked (even a writer that skipped the advisory lock would queue
  // here), with the journal's last row beside it: in one round trip, by primary key, the tail
  // is checked against its anchor before anything is written.
  const { rows } = await c.query<TailRow>(
    `WITH h AS (SELECT seq, hash, passphrase, broken FROM journal_head
                WHERE tenant_id = $1 FOR UPDATE)
     SELECT h.seq AS h_seq, h.hash AS h_hash, h.passphrase AS h_pp, h.broken AS h_broken,
            t.seq AS t_seq, t.entry AS t_entry,
            (h.seq IS NULL AND t.seq IS NULL
               AND EXISTS (SELECT 1 FROM memories m WHERE m.tenant_id = $1)) AS orphaned
     FROM (SELECT 1) one
     LEFT JOIN h ON true
     LEFT JOIN LATERAL (SELECT seq, entry FROM journal WHERE tenant_id = $1
                        ORDER BY seq DESC LIMIT 1) t ON true`,
    [t],
  );
  const row = rows[0]!;
  const bad = tailProblem(row);
  if (bad) throw chainRefused(bad);
  const head: ChainHead =
    row.h_seq !== null ? { seq: Number(row.h_seq), hash: row.h_hash! } : EMPTY_HEAD;
  const r = req.revision;
  if (r) await writeRevision(c, t, r);
  const entry = commitEntry(head, req);
  await appendRow(c, t, entry, passphraseSetBy(entry) ?? parsePassphrase(row.h_pp));
  // Freshness and weights the entry changes (a sleep_pass recomputes its scopes' weights).
  await applyDerived(c, t, entry);
  if (req.tombstone) {
    const [event, scope, key, doc] =
      'arm' in req.tombstone
        ? ['arm', req.tombstone.arm.scope, req.tombstone.arm.key, req.tombstone.arm]
        : ['lift', req.tombstone.lift.scope, req.tombstone.lift.key, req.tombstone.lift];
    await c.query(
      `INSERT INTO tombstone_events(tenant_id, journal_seq, event, scope, key, doc)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [t, entry.seq, event, scope, key, JSON.stringify(doc)],
    );
    // Its entry in the lookup index (a lift leaves it: the lookup reads the latest event).
    if ('arm' in req.tombstone)
      await c.query(
        `INSERT INTO tombstone_grams(tenant_id, scope, gram, key) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING`,
        [t, scope, tombstoneGram(req.tombstone.arm), key],
      );
  }
  if (req.proposal) {
    const p = req.proposal;
    await c.query(
      `INSERT INTO proposals(tenant_id, id, scope, state, created_at, doc)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (tenant_id, id) DO UPDATE
         SET scope = EXCLUDED.scope, state = EXCLUDED.state, doc = EXCLUDED.doc`,
      [t, p.id, p.scope, p.state, p.created_at, JSON.stringify(p)],
    );
  }
  return entry;
}
