// The operator journal: every tenant and token change of a shared database, hash-chained like a
// tenant's journal. It is the journal of the reserved tenant `_operator` (a name no real tenant
// can take: TENANT_PATTERN starts with a letter or digit), so it uses the same rows, the same
// entry builder (core/journal.ts commitEntry) and the same verification (evaluate).
import type pg from 'pg';
import { MnemeError } from '../../core/errors.js';
import { EMPTY_HEAD, commitEntry, type JournalBody } from '../../core/journal.js';
import { reportOf } from '../journal-guard.js';
import type { VerifyReport } from '../port.js';
import { fromDb } from './errors.js';
import { appendRow, evaluate } from './journal-rows.js';

export const OPERATOR = '_operator';

/** Advisory lock class of the operator journal (one writer at a time, every instance). */
const OPERATOR_LOCK = 0x6d6e6f70; // "mnop"

/** What a governance change records: its op, what it names, and its details. */
export interface OperatorChange {
  op: 'tenant_create' | 'tenant_disable' | 'tenant_enable' | 'token_create' | 'token_revoke';
  target: string;
  data: Record<string, unknown>;
}

/**
 * Runs a governance change and journals it in one transaction: `fn` makes the change on `c` and
 * returns what to journal, or null when nothing changed (nothing is journaled then). A damaged
 * operator journal refuses every change until `mneme journal verify --operator` is clean.
 */
export async function withOperatorEntry<T>(
  pool: pg.Pool,
  fn: (c: pg.PoolClient) => Promise<{ result: T; change: OperatorChange | null }>,
): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await c.query('SELECT pg_advisory_xact_lock($1)', [OPERATOR_LOCK]);
    // The whole chain, every time: it holds one entry per governance change, and a change
    // chained onto a damaged journal would hide the damage.
    const ev = await evaluate(OPERATOR, c, pool, '');
    if (ev.problem)
      throw new MnemeError(
        'corrupt',
        `the operator journal does not verify: ${ev.problem.problem}`,
        {
          hint: 'no tenant or token change is made until it does: see `mneme journal verify --operator --db URL`, and restore the database from a backup',
        },
      );
    const head = ev.scan.tail.seq === 0 ? EMPTY_HEAD : ev.scan.tail;
    const { result, change } = await fn(c);
    if (change) {
      const body: JournalBody = {
        at: new Date().toISOString(),
        actor: { kind: 'human', surface: 'cli' },
        op: change.op,
        target: { id: change.target, scope: OPERATOR },
        before: null,
        after: null,
        reason: null,
        idem: null,
        req: null,
        data: change.data,
      };
      await appendRow(c, OPERATOR, commitEntry(head, { body }), null);
    }
    await c.query('COMMIT');
    return result;
  } catch (e) {
    await c.query('ROLLBACK').catch(() => {});
    throw fromDb(e);
  } finally {
    c.release();
  }
}

/** `mneme journal verify --operator`: the operator journal's chain against its head row. */
export async function verifyOperatorJournal(
  pool: pg.Pool,
  location: string,
): Promise<VerifyReport> {
  const ev = await evaluate(OPERATOR, undefined, pool, location);
  return reportOf(ev.scan, ev.problem);
}
