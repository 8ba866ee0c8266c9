// Postgres errors in the store's vocabulary: a unique violation is a conflict between writers,
// a lock timeout is `locked`, an unreachable server says which URL and what to check.
import pg from 'pg';
import { MnemeError } from '../../core/errors.js';
import { redactUrl } from '../../core/redact.js';

interface PgLike {
  code?: string;
  constraint?: string;
  message?: string;
}

const CONFLICTS: Record<string, string> = {
  memories_live_slug: 'another memory already holds that subject in this scope',
  memories_pkey: 'that memory was created concurrently by another writer',
  revisions_pkey: 'that revision was written concurrently by another writer',
  journal_idem: 'that idempotency key was used by a concurrent request',
};

export function pgError(e: unknown): MnemeError {
  if (e instanceof MnemeError) return e;
  const err = (e ?? {}) as PgLike;
  if (err.code === '23505') {
    return new MnemeError(
      'conflict',
      CONFLICTS[err.constraint ?? ''] ?? `a concurrent write conflicted (${err.constraint})`,
      { hint: 'read the memory again and retry' },
    );
  }
  if (err.code === '55P03') {
    return new MnemeError('locked', 'timed out waiting for the tenant write lock', {
      hint: 'another writer holds it for long; retry, or check for stuck sessions in pg_stat_activity',
    });
  }
  if (err.code !== undefined && /^(08|57P|E[A-Z])/.test(err.code)) return connectionError(e, null);
  return new MnemeError('internal', `postgres: ${err.message ?? String(e)}`);
}

export function connectionError(e: unknown, url: string | null): MnemeError {
  const msg = (e as Error)?.message ?? String(e);
  return new MnemeError(
    'internal',
    `cannot use the Postgres database${url ? ` at ${redactUrl(url)}` : ''}: ${msg}`,
    {
      hint: 'check that the server is running and the URL (--db or MNEME_DATABASE_URL) is right',
    },
  );
}

export { redactUrl };

/** Database and connection errors get the store's vocabulary; anything else passes unchanged. */
export function fromDb(e: unknown): unknown {
  // node-postgres refuses a statement on a connection the server already dropped before sending
  // it: that statement (a transaction's COMMIT included) never reached the server, and a dropped
  // connection's open transaction is rolled back there.
  if (e instanceof Error && !(e instanceof MnemeError) && /not queryable/.test(e.message))
    return new MnemeError(
      'internal',
      'the connection to the Postgres database was lost (the server ended it: an operator, a restart or a failover); the statement was never sent, and nothing of its transaction was kept',
      { hint: 'retry: the next request opens a new connection' },
    );
  const code = (e as { code?: unknown } | null)?.code;
  const socket = typeof code === 'string' && /^E[A-Z]+$/.test(code);
  return e instanceof pg.DatabaseError || socket ? pgError(e) : e;
}
