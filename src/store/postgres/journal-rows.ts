// The journal in Postgres: journal rows and the head row that anchors them. Appending an entry
// moves the head in the same statement; a commit checks the journal's last row against the head
// (O(1)); evaluate reads the whole chain in one snapshot and judges it; the damage a person's
// repair acknowledges, and the repair entries chained onto the readable tail.
import type pg from 'pg';
import { MnemeError } from '../../core/errors.js';
import {
  EMPTY_HEAD,
  chainEntry,
  entryHashValid,
  judgeChain,
  passphraseSetBy,
  verifyChain,
  type AnchorRecord,
  type ChainProblem,
  type ChainScan,
  type JournalEntry,
  type PassphraseRecord,
} from '../../core/journal.js';
import type { JournalAnchor, JournalDamage, RepairReport, RepairRequest } from '../port.js';
import { damageOf, repairBody, restoredPassphraseBody } from '../journal-guard.js';
import { connectionError, fromDb } from './errors.js';
import type { Query } from './reads.js';

export type Queryable = Pick<pg.PoolClient, 'query'>;

export const HEAD_NAME = 'the journal head row';

export interface HeadRow {
  seq: string;
  hash: string;
  passphrase: string | null;
  broken: string | null;
}

export interface Evaluation {
  head: HeadRow | null;
  anchor: AnchorRecord | null;
  scan: ChainScan;
  problem: ChainProblem | null;
  /** The highest seq of any row (an unreadable last row is past the scan's tail). */
  maxSeq: number;
}

/** One journal row and the head row moved to it, in one statement (one transaction). */
export async function appendRow(
  c: Queryable,
  tenant: string,
  entry: JournalEntry,
  passphrase: PassphraseRecord | null,
): Promise<void> {
  await c.query(
    `WITH j AS (
       INSERT INTO journal(tenant_id, seq, at, op, actor_kind, target_id, idem, entry)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING tenant_id, seq)
     INSERT INTO journal_head(tenant_id, seq, hash, passphrase, broken)
     SELECT tenant_id, seq, $9, $10, NULL FROM j
     ON CONFLICT (tenant_id) DO UPDATE
       SET seq = EXCLUDED.seq, hash = EXCLUDED.hash, passphrase = EXCLUDED.passphrase,
           broken = NULL`,
    [
      tenant,
      entry.seq,
      entry.at,
      entry.op,
      entry.actor.kind,
      entry.target?.id ?? null,
      entry.idem,
      JSON.stringify(entry),
      entry.hash,
      passphrase ? JSON.stringify({ salt: passphrase.salt, hash: passphrase.hash }) : null,
    ],
  );
}

export async function evaluate(
  tenant: string,
  inTx: Queryable | undefined,
  pool: pg.Pool,
  location: string,
): Promise<Evaluation> {
  const run = async (db: Queryable) => {
    const h = await db.query<HeadRow>(
      'SELECT seq, hash, passphrase, broken FROM journal_head WHERE tenant_id = $1',
      [tenant],
    );
    const j = await db.query<{ entry: string; seq: string }>(
      'SELECT seq, entry FROM journal WHERE tenant_id = $1 ORDER BY seq',
      [tenant],
    );
    const m = await db.query<{ x: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM memories WHERE tenant_id = $1) AS x',
      [tenant],
    );
    return { head: h.rows[0] ?? null, rows: j.rows, hasData: m.rows[0]?.x === true };
  };
  let got: Awaited<ReturnType<typeof run>>;
  if (inTx) got = await run(inTx);
  else {
    // One snapshot, so a commit landing between the statements cannot look like a cut tail.
    const client = await pool.connect().catch((e: unknown) => {
      throw connectionError(e, location);
    });
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      got = await run(client);
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      throw fromDb(e);
    } finally {
      client.release();
    }
  }
  const { head, rows, hasData } = got;
  const anchor: AnchorRecord | null = head
    ? { seq: Number(head.seq), hash: head.hash, passphrase: parsePassphrase(head.passphrase) }
    : null;
  const parsed = function* () {
    for (const r of rows) {
      let entry: JournalEntry | null = null;
      try {
        entry = JSON.parse(r.entry) as JournalEntry;
        if (typeof entry?.seq !== 'number' || typeof entry.hash !== 'string') entry = null;
      } catch {
        entry = null;
      }
      yield { entry, where: `journal #${r.seq}`, raw: r.entry };
    }
  };
  const scan = verifyChain(parsed(), { anchor });
  const problem = judgeChain(scan, anchor, {
    allowExtension: false,
    hasData: () => hasData,
    name: HEAD_NAME,
  });
  const maxSeq = rows.length ? Number(rows[rows.length - 1]!.seq) : 0;
  return { head, anchor, scan, problem, maxSeq };
}

export async function anchorOf(query: Query, tenant: string): Promise<JournalAnchor> {
  const { rows } = await query<HeadRow & { any: boolean }>(
    `SELECT h.seq, h.hash, h.passphrase, h.broken,
            EXISTS (SELECT 1 FROM journal WHERE tenant_id = $1) AS any
     FROM (SELECT 1) one LEFT JOIN journal_head h ON h.tenant_id = $1`,
    [tenant],
  );
  const h = rows[0]!;
  if (h.seq !== null)
    return {
      present: true,
      head: { seq: Number(h.seq), hash: h.hash },
      passphrase: parsePassphrase(h.passphrase),
    };
  return h.any ? { present: false } : { present: true, head: EMPTY_HEAD, passphrase: null };
}

/** Under the write lock (on `c`): re-anchors a chain that does not verify, recording the loss. */
export async function repairIn(
  c: Queryable,
  tenant: string,
  req: RepairRequest,
  evaluateNow: () => Promise<Evaluation>,
): Promise<RepairReport> {
  const ev = await evaluateNow();
  const damage = damageFor(ev);
  if (damage.ok) return { damage, entries: [] };
  if (ev.maxSeq > ev.scan.tail.seq)
    throw new MnemeError(
      'refused',
      `the journal's last row (#${ev.maxSeq}) is unreadable, so a repair entry has nothing to chain to`,
      { hint: 'restore that row from a backup, or delete it by hand, then repair again' },
    );
  const bodies = [repairBody(damage, req, HEAD_NAME)];
  if (damage.restorePassphrase) bodies.push(restoredPassphraseBody(damage.restorePassphrase, req));
  let tail = ev.scan.tail;
  let pp = damage.journalPassphrase;
  const entries: JournalEntry[] = [];
  for (const body of bodies) {
    const entry = chainEntry(tail, body);
    pp = passphraseSetBy(entry) ?? pp;
    await appendRow(c, tenant, entry, pp);
    entries.push(entry);
    tail = { seq: entry.seq, hash: entry.hash };
  }
  const after = await evaluateNow();
  if (after.problem)
    throw new MnemeError('internal', `the repair did not verify: ${after.problem.problem}`);
  return { damage, entries };
}

export interface TailRow {
  h_seq: string | null;
  h_hash: string | null;
  h_pp: string | null;
  h_broken: string | null;
  t_seq: string | null;
  t_entry: string | null;
  orphaned: boolean;
}

/** The journal's last row against the head row (O(1)); null when they agree. */
export function tailProblem(row: TailRow): ChainProblem | null {
  if (row.h_broken !== null) {
    try {
      const p = JSON.parse(row.h_broken) as ChainProblem;
      if (typeof p?.problem === 'string') return p;
    } catch {
      /* fall through */
    }
    return { seq: null, position: 0, problem: 'a chain break was recorded' };
  }
  const tailSeq = row.t_seq === null ? null : Number(row.t_seq);
  if (row.h_seq === null) {
    if (tailSeq === null)
      return row.orphaned
        ? {
            seq: 1,
            position: 1,
            problem: `the journal and ${HEAD_NAME} are both missing, but the tenant holds memories (the journal was deleted)`,
          }
        : null;
    return {
      seq: tailSeq + 1,
      position: tailSeq + 1,
      problem: `${HEAD_NAME} is missing, so nothing shows whether entries were cut from the journal's tail`,
    };
  }
  const headSeq = Number(row.h_seq);
  if (tailSeq === null || tailSeq < headSeq)
    return {
      seq: (tailSeq ?? 0) + 1,
      position: (tailSeq ?? 0) + 1,
      problem:
        tailSeq === null
          ? `${HEAD_NAME} records seq ${headSeq} but the journal is empty (its entries were deleted)`
          : `${HEAD_NAME} records seq ${headSeq} but the journal ends at seq ${tailSeq} (entries were deleted from the tail)`,
    };
  if (tailSeq > headSeq)
    return {
      seq: headSeq + 1,
      position: headSeq + 1,
      problem: `the journal runs past ${HEAD_NAME} (seq ${headSeq}) to seq ${tailSeq}`,
    };
  let e: JournalEntry | null = null;
  try {
    e = JSON.parse(row.t_entry ?? '') as JournalEntry;
  } catch {
    e = null;
  }
  if (!e || e.seq !== tailSeq || e.hash !== row.h_hash || !entryHashValid(e))
    return {
      seq: tailSeq,
      position: tailSeq,
      problem: `the journal's last entry (seq ${tailSeq}) does not match ${HEAD_NAME}: it was replaced or edited`,
    };
  return null;
}

export function parsePassphrase(text: string | null): PassphraseRecord | null {
  if (text === null) return null;
  try {
    const p = JSON.parse(text) as Partial<PassphraseRecord>;
    return typeof p.salt === 'string' && typeof p.hash === 'string'
      ? { salt: p.salt, hash: p.hash }
      : null;
  } catch {
    return null;
  }
}

export function damageFor(ev: Evaluation): JournalDamage {
  const d = damageOf(ev.scan, ev.anchor, ev.problem);
  // A recorded break nothing shows any more still needs a person's word to lift it.
  return d.ok && ev.head?.broken ? { ...d, ok: false } : d;
}
