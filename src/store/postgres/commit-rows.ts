// The Postgres write path's storage half, inside the caller's transaction and write lock. The
// first commit of a transaction locks the head row and checks the journal's tail against it;
// every commit then writes in ONE statement: the revision row with its lineage header
// (memories) and its predecessors' derived columns, the journal row, the head row moved to it,
// and the tombstone event and proposal row the entry carries. The freshness and weights an
// entry derives follow in their own statements, only for the entries that change them. In a
// write group run bare, plain first revisions are deferred instead (deferCommit) and the rows
// of all of them written by one statement (flushDeferred).
import type pg from 'pg';
import { MnemeError } from '../../core/errors.js';
import {
  EMPTY_HEAD,
  commitEntry,
  passphraseSetBy,
  type ChainHead,
  type JournalEntry,
  type PassphraseRecord,
} from '../../core/journal.js';
import { deriveLineage } from '../../core/lineage.js';
import { toRevision } from '../../core/revision.js';
import type { Revision } from '../../core/types.js';
import type { CommitRequest } from '../port.js';
import { chainRefused } from '../journal-guard.js';
import { parsePassphrase, tailProblem, type TailRow } from './journal-rows.js';
import { freshnessFrom, weightPasses } from '../derived.js';
import { applyDerived } from './derived-rows.js';
import { pgError } from './errors.js';
import { lineageRevisions } from './lineage-rows.js';
import { Params, ROW_COLUMNS, ROW_TYPES, rowValues } from './sql.js';
import { tombstoneEntry } from './tombstone-rows.js';

/**
 * The chain head as this transaction last left it: the head row is row-locked by the first
 * commit of the transaction and every later commit of it moves the head itself, so what the
 * transaction wrote need not be read back.
 */
export interface HeldHead {
  head: ChainHead;
  passphrase: PassphraseRecord | null;
}

/**
 * The chain head, row-locked (even a writer that skipped the advisory lock would queue here),
 * with the journal's last row beside it: by primary key, so the tail is checked against its
 * anchor before anything is written. `tenant` is `$1` or a quoted literal (beginHoldingHead).
 */
const headStatement = (tenant: string) =>
  `WITH h AS (SELECT seq, hash, passphrase, broken FROM journal_head
              WHERE tenant_id = ${tenant} FOR UPDATE)
   SELECT h.seq AS h_seq, h.hash AS h_hash, h.passphrase AS h_pp, h.broken AS h_broken,
          t.seq AS t_seq, t.entry AS t_entry,
          (h.seq IS NULL AND t.seq IS NULL
             AND EXISTS (SELECT 1 FROM memories m WHERE m.tenant_id = ${tenant})) AS orphaned
   FROM (SELECT 1) one
   LEFT JOIN h ON true
   LEFT JOIN LATERAL (SELECT seq, entry FROM journal WHERE tenant_id = ${tenant}
                      ORDER BY seq DESC LIMIT 1) t ON true`;

/** The head a locked head row gives, or the chain's problem (thrown as its refusal). */
function heldOf(row: TailRow): HeldHead {
  const bad = tailProblem(row);
  if (bad) throw chainRefused(bad);
  return {
    head: row.h_seq !== null ? { seq: Number(row.h_seq), hash: row.h_hash! } : EMPTY_HEAD,
    passphrase: parsePassphrase(row.h_pp),
  };
}

/** Reads and row-locks the chain head, with the journal's tail checked against it. */
async function lockHead(c: pg.PoolClient, t: string): Promise<HeldHead> {
  const { rows } = await c.query<TailRow>(headStatement('$1'), [t]);
  return heldOf(rows[0]!);
}

/**
 * Runs `prelude` (the transaction's BEGIN and lock, SQL holding no caller text) and then reads
 * the head row-locked, in ONE round trip, so the first commit of the transaction needs neither
 * the read nor a savepoint (needsSavepoint). The head comes back null when the tail does not
 * check out against it: the first commit then reads it again and refuses with the chain's
 * problem, as without this. A failing prelude (the lock not granted) throws, as the head read's
 * own failure does.
 */
export async function beginHoldingHead(
  c: pg.PoolClient,
  t: string,
  prelude: string,
): Promise<HeldHead | null> {
  // A simple query (several statements) takes no parameters: the tenant goes in as a quoted
  // literal (its name is checked on open, and escapeLiteral quotes whatever it holds).
  const results = (await c.query(
    `${prelude};\n${headStatement(c.escapeLiteral(t))}`,
  )) as unknown as pg.QueryResult<TailRow>[];
  const last = results[results.length - 1]!;
  try {
    return heldOf(last.rows[0]!);
  } catch (e) {
    if (e instanceof MnemeError) return null;
    throw e;
  }
}

/** The stored bytes of a revision: its fields in the canonical order of core/revision.ts. */
const docOf = (r: Revision) => JSON.stringify(toRevision(r));

/**
 * Commits one request. `held` is the head this transaction left (null: read and lock it); the
 * head after the commit is returned beside the entry, for the transaction's next commit.
 */
export async function commitIn(
  c: pg.PoolClient,
  t: string,
  req: CommitRequest,
  held: HeldHead | null,
): Promise<{ entry: JournalEntry; held: HeldHead }> {
  const { head, passphrase: before } = held ?? (await lockHead(c, t));
  const r = req.revision;
  // Only this lineage's rows are re-derived (invariant 11).
  const prior = r && r.rev > 1 ? await lineageRevisions(c, t, r.id) : [];
  const entry = commitEntry(head, req);
  const passphrase = passphraseSetBy(entry) ?? before;
  const p = new Params();
  const tenant = p.add(t);
  const ctes: string[] = [];
  // With a revision, the journal row is written only if the revision row was.
  let gate = '';
  if (r) {
    const views = deriveLineage([...prior, r]);
    const [id, rev, scope, type, slug, status] = [
      r.id,
      r.rev,
      r.scope,
      r.type,
      r.slug,
      r.status,
    ].map((v) => p.add(v));
    // A new lineage inserts its memories row (a duplicate id or a live slug taken by a
    // concurrent writer is a unique violation); a later revision moves it from rev N-1 to N, or
    // matches nothing, and then no revision row is inserted (the optimistic check).
    // A new lineage inserts its memories row unless its id or its live slug is taken, or the
    // entry's idempotency key was used (nothing is written then, and the conflict is named
    // below); a later revision moves it from rev N-1 to N, or matches nothing, and then no
    // revision row is inserted (the optimistic check).
    // (Only a first revision's statement reads the key: a parameter no statement uses has no
    // type Postgres can determine, and the whole commit would fail.)
    const idemFree =
      entry.idem === null || r.rev !== 1
        ? ''
        : `WHERE NOT EXISTS (SELECT 1 FROM journal WHERE tenant_id = ${tenant} AND idem = ${p.add(entry.idem)})`;
    ctes.push(
      r.rev === 1
        ? `m AS (INSERT INTO memories(tenant_id, id, scope, type, slug, current_rev, status)
             SELECT ${tenant}, ${id}, ${scope}, ${type}, ${slug}, ${rev}, ${status} ${idemFree}
             ON CONFLICT DO NOTHING RETURNING id)`
        : `m AS (UPDATE memories SET scope = ${scope}, type = ${type}, slug = ${slug},
             current_rev = ${rev}, status = ${status}
           WHERE tenant_id = ${tenant} AND id = ${id} AND current_rev = ${rev}::int - 1
           RETURNING id)`,
    );
    const values = rowValues(views[views.length - 1]!, docOf(r)).map((v) => p.add(v));
    ctes.push(`r AS (INSERT INTO revisions(tenant_id, id, rev, ${ROW_COLUMNS.join(', ')})
      SELECT ${tenant}, ${id}, ${rev}, ${values.join(', ')} FROM m RETURNING 1)`);
    const olds = views.slice(0, -1);
    if (olds.length > 0) {
      // Every column but the truth (doc) of the predecessors, from arrays of their values.
      const cols = ROW_COLUMNS.filter((k) => k !== 'doc');
      const rows = olds.map((v) => rowValues(v, ''));
      const arrays = cols.map((k) => {
        const i = ROW_COLUMNS.indexOf(k);
        return `${p.add(rows.map((row) => row[i]))}::${ROW_TYPES[k]}[]`;
      });
      ctes.push(`u AS (UPDATE revisions o SET ${cols.map((k) => `${k} = x.${k}`).join(', ')}
        FROM unnest(${p.add(olds.map((v) => v.id))}::text[], ${p.add(olds.map((v) => v.rev))}::int[],
                    ${arrays.join(', ')}) AS x(id, rev, ${cols.join(', ')})
        WHERE o.tenant_id = ${tenant} AND o.id = x.id AND o.rev = x.rev
          AND EXISTS (SELECT 1 FROM r))`);
    }
    gate = 'WHERE EXISTS (SELECT 1 FROM r)';
  }
  const seq = p.add(entry.seq);
  ctes.push(`j AS (INSERT INTO journal(tenant_id, seq, at, op, actor_kind, target_id, idem, entry)
    SELECT ${tenant}, ${seq}, ${[
      entry.at,
      entry.op,
      entry.actor.kind,
      entry.target?.id ?? null,
      entry.idem,
      JSON.stringify(entry),
    ]
      .map((v) => p.add(v))
      .join(', ')} ${gate} RETURNING seq)`);
  ctes.push(`h AS (INSERT INTO journal_head(tenant_id, seq, hash, passphrase, broken)
    SELECT ${tenant}, seq, ${p.add(entry.hash)}, ${p.add(
      passphrase ? JSON.stringify({ salt: passphrase.salt, hash: passphrase.hash }) : null,
    )}, NULL FROM j
    ON CONFLICT (tenant_id) DO UPDATE
      SET seq = EXCLUDED.seq, hash = EXCLUDED.hash, passphrase = EXCLUDED.passphrase,
          broken = NULL)`);
  if (req.tombstone) {
    const [event, scope, key, doc] =
      'arm' in req.tombstone
        ? ['arm', req.tombstone.arm.scope, req.tombstone.arm.key, req.tombstone.arm]
        : ['lift', req.tombstone.lift.scope, req.tombstone.lift.key, req.tombstone.lift];
    ctes.push(`te AS (INSERT INTO tombstone_events(tenant_id, journal_seq, event, scope, key, doc)
      SELECT ${tenant}, seq, ${[event, scope, key, JSON.stringify(doc)].map((v) => p.add(v)).join(', ')}
      FROM j)`);
    // Its entry in the lookup index (a lift leaves it: the lookup reads the latest event).
    if ('arm' in req.tombstone) {
      const { gram, grams } = await tombstoneEntry(c, t, req.tombstone.arm);
      ctes.push(`tg AS (INSERT INTO tombstone_grams(tenant_id, scope, gram, key, grams)
        SELECT ${tenant}, ${[scope, gram, key].map((v) => p.add(v)).join(', ')},
          ${p.add(grams)}::text[] COLLATE "C"
        FROM j ON CONFLICT DO NOTHING)`);
    }
  }
  if (req.proposal) {
    const pr = req.proposal;
    ctes.push(`pr AS (INSERT INTO proposals(tenant_id, id, scope, state, created_at, doc)
      SELECT ${tenant}, ${[pr.id, pr.scope, pr.state, pr.created_at, JSON.stringify(pr)]
        .map((v) => p.add(v))
        .join(', ')} FROM j
      ON CONFLICT (tenant_id, id) DO UPDATE
        SET scope = EXCLUDED.scope, state = EXCLUDED.state, doc = EXCLUDED.doc)`);
  }
  const { rows } = await c.query<{ n: string }>(
    `WITH ${ctes.join(',\n')} SELECT count(*) AS n FROM j`,
    p.values,
  );
  if (Number(rows[0]!.n) !== 1) throw await refusalOf(c, t, entry, r!);
  // Freshness and weights the entry changes (a sleep_pass recomputes its scopes' weights).
  await applyDerived(c, t, entry);
  return { entry, held: { head: { seq: entry.seq, hash: entry.hash }, passphrase } };
}

/** Why a revision gated the journal row off (nothing was written): named as the conflict it is. */
async function refusalOf(
  c: pg.PoolClient,
  t: string,
  entry: JournalEntry,
  r: Revision,
): Promise<MnemeError> {
  if (r.rev > 1)
    return new MnemeError('conflict', `stale revision: ${r.id} is no longer at rev ${r.rev - 1}`, {
      hint: `read it again (\`mneme read ${r.id}\`) and retry`,
    });
  const { rows } = await c.query<{ id: boolean; idem: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM memories WHERE tenant_id = $1 AND id = $2) AS id,
            EXISTS (SELECT 1 FROM journal WHERE tenant_id = $1 AND idem = $3) AS idem`,
    [t, r.id, entry.idem],
  );
  const taken = rows[0]!;
  return pgError({
    code: '23505',
    constraint: taken.id ? 'memories_pkey' : taken.idem ? 'journal_idem' : 'memories_live_slug',
  });
}

/**
 * Whether a commit needs a savepoint to leave its transaction usable when it fails. Not when
 * the transaction already holds the head and the request is a new lineage's plain first
 * revision: its conflicts are gated off in the statement (refusalOf names them) and its text
 * holds nothing Postgres refuses, so only a broken connection or a tampered database can fail
 * it, and those abort the transaction (which then reports failure, never success).
 */
export function needsSavepoint(req: CommitRequest, held: HeldHead | null): boolean {
  const r = req.revision;
  if (!held || !r || r.rev !== 1 || r.source || req.tombstone || req.proposal) return true;
  const text = JSON.stringify(r);
  // Postgres text holds no NUL; a tsvector at most 1 MB.
  return text.length > 200_000 || text.includes('\\u0000');
}

/**
 * A plain first revision (needsSavepoint false) committed in memory only: its journal entry is
 * chained onto the held head now and its rows wait for flushDeferred, which writes the rows of
 * every commit deferred so far in ONE statement. The caller defers only in a group that runs
 * again guarded when the flush fails (postgres-store.ts), and flushes before any statement that
 * could read what a deferred commit writes.
 */
export interface DeferredCommit {
  entry: JournalEntry;
  revision: Revision;
  /** The revision row's values (ROW_COLUMNS order), as commitIn writes them. */
  row: unknown[];
}

export function deferCommit(
  req: CommitRequest,
  held: HeldHead,
): { deferred: DeferredCommit; held: HeldHead } | null {
  const r = req.revision!;
  const entry = commitEntry(held.head, req);
  // An entry that derives freshness or weights is committed as it comes (commitIn).
  if (freshnessFrom(entry).length > 0 || weightPasses([entry]).size > 0) return null;
  const passphrase = passphraseSetBy(entry) ?? held.passphrase;
  const views = deriveLineage([r]);
  return {
    deferred: { entry, revision: r, row: rowValues(views[views.length - 1]!, docOf(r)) },
    held: { head: { seq: entry.seq, hash: entry.hash }, passphrase },
  };
}

/** Why a flush wrote less than it was given: the group runs again, each writer on its own. */
export class FlushRefused extends Error {
  constructor(
    readonly written: number,
    readonly given: number,
  ) {
    super(`${given - written} of ${given} deferred commits were refused by the database`);
  }
}

/**
 * Writes the deferred commits' rows set-based, one INSERT per table from arrays: memories
 * (a taken id, live slug or idempotency key inserts nothing: ON CONFLICT DO NOTHING / NOT
 * EXISTS), the revision rows of the memories rows inserted (the postings and term triggers run
 * once for all of them), the journal rows, and the head row moved to the last entry. Throws
 * FlushRefused when any memories row was not inserted (the caller rolls the transaction back).
 */
export async function flushDeferred(
  c: Pick<pg.PoolClient, 'query'>,
  t: string,
  list: readonly DeferredCommit[],
  held: HeldHead,
): Promise<void> {
  if (list.length === 0) return;
  const p = new Params();
  const tenant = p.add(t);
  // One array parameter per column of the unnested rows: [name, `$n::type[]`].
  const col = (name: string, type: string, of: (d: DeferredCommit) => unknown) =>
    [name, `${p.add(list.map(of))}::${type}[]`] as const;
  const x = [
    col('id', 'text', (d) => d.revision.id),
    col('m_scope', 'text', (d) => d.revision.scope),
    col('m_type', 'text', (d) => d.revision.type),
    col('m_slug', 'text', (d) => d.revision.slug),
    col('m_status', 'text', (d) => d.revision.status),
    col('seq', 'bigint', (d) => d.entry.seq),
    col('at', 'text', (d) => d.entry.at),
    col('op', 'text', (d) => d.entry.op),
    col('actor_kind', 'text', (d) => d.entry.actor.kind),
    col('target_id', 'text', (d) => d.entry.target?.id ?? null),
    col('idem', 'text', (d) => d.entry.idem),
    col('entry', 'text', (d) => JSON.stringify(d.entry)),
    ...ROW_COLUMNS.map((k, i) => col(`v_${k}`, ROW_TYPES[k], (d) => d.row[i])),
  ] as const;
  const passphrase = held.passphrase
    ? JSON.stringify({ salt: held.passphrase.salt, hash: held.passphrase.hash })
    : null;
  const { rows } = await c.query<{ m: string }>(
    `WITH x AS (SELECT * FROM unnest(${x.map(([, v]) => v).join(', ')})
                AS x(${x.map(([k]) => k).join(', ')})),
     m AS (INSERT INTO memories(tenant_id, id, scope, type, slug, current_rev, status)
       SELECT ${tenant}, x.id, x.m_scope, x.m_type, x.m_slug, 1, x.m_status FROM x
       WHERE x.idem IS NULL
          OR NOT EXISTS (SELECT 1 FROM journal WHERE tenant_id = ${tenant} AND idem = x.idem)
       ON CONFLICT DO NOTHING RETURNING id),
     r AS (INSERT INTO revisions(tenant_id, id, rev, ${ROW_COLUMNS.join(', ')})
       SELECT ${tenant}, x.id, 1, ${ROW_COLUMNS.map((k) => `x.v_${k}`).join(', ')}
       FROM x JOIN m ON m.id = x.id),
     j AS (INSERT INTO journal(tenant_id, seq, at, op, actor_kind, target_id, idem, entry)
       SELECT ${tenant}, x.seq, x.at, x.op, x.actor_kind, x.target_id, x.idem, x.entry FROM x),
     h AS (INSERT INTO journal_head(tenant_id, seq, hash, passphrase, broken)
       VALUES (${tenant}, ${p.add(held.head.seq)}, ${p.add(held.head.hash)}, ${p.add(passphrase)}, NULL)
       ON CONFLICT (tenant_id) DO UPDATE
         SET seq = EXCLUDED.seq, hash = EXCLUDED.hash, passphrase = EXCLUDED.passphrase,
             broken = NULL)
     SELECT count(*) AS m FROM m`,
    p.values,
  );
  const written = Number(rows[0]!.m);
  if (written !== list.length) throw new FlushRefused(written, list.length);
}
