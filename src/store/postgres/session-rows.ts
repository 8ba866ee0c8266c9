// The session port on Postgres, one tenant's rows: archived transcript lines in session_archive
// (`seq` is the line number) and each session's state records in session_state (migration 3).
// An append takes a per-session advisory lock in its own short transaction, so two hooks of one
// session never interleave or reuse a line number, and writers of other sessions never wait.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { isHost, type Host } from '../../core/transcript.js';
import {
  archivable,
  checkSessionRef,
  checkSharedName,
  type ArchivedLine,
  type SessionRef,
  type SessionStore,
  type StateKind,
} from '../sessions.js';
import { connectionError, pgError } from './errors.js';

/** Advisory lock class of session appends (the object id hashes tenant, host and session). */
const SESSION_LOCK_CLASS = 0x6d6e7373; // "mnss"

/** The kind under which store-wide records are kept (never a StateKind). */
const SHARED = 'shared';

export class SessionRows implements SessionStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly tenant: string,
    private readonly location: string,
  ) {}

  private async q<R extends pg.QueryResultRow>(text: string, values: unknown[]) {
    try {
      return await this.pool.query<R>(text, values);
    } catch (e) {
      throw pgError(e);
    }
  }

  async appendArchive(
    ref: SessionRef,
    lines: string[],
  ): Promise<{ from: number; to: number } | null> {
    checkSessionRef(ref);
    const clean = archivable(lines);
    if (clean.length === 0) return null;
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw connectionError(e, this.location);
    }
    const key = createHash('sha256')
      .update(`${this.tenant}\u0000${ref.host}\u0000${ref.session}`)
      .digest()
      .readInt32BE(0);
    let broken = false;
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [SESSION_LOCK_CLASS, key]);
      const { rows } = await client.query<{ base: number }>(
        `WITH base AS (
           SELECT COALESCE(max(seq), 0) AS n FROM session_archive
           WHERE tenant_id = $1 AND host = $2 AND session = $3),
         ins AS (
           INSERT INTO session_archive(tenant_id, host, session, seq, at, text)
           SELECT $1, $2, $3, base.n + u.i, $4, u.line
           FROM base, unnest($5::text[]) WITH ORDINALITY AS u(line, i))
         SELECT n::int AS base FROM base`,
        [this.tenant, ref.host, ref.session, new Date().toISOString(), clean],
      );
      await client.query('COMMIT');
      const base = rows[0]!.base;
      return { from: base + 1, to: base + clean.length };
    } catch (e) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw pgError(e);
    } finally {
      client.release(broken);
    }
  }

  async readArchive(ref: SessionRef, from: number, to?: number): Promise<ArchivedLine[]> {
    checkSessionRef(ref);
    const { rows } = await this.q<{ seq: number; text: string }>(
      `SELECT seq, text FROM session_archive
       WHERE tenant_id = $1 AND host = $2 AND session = $3 AND seq >= $4
         AND ($5::int IS NULL OR seq <= $5)
       ORDER BY seq`,
      [this.tenant, ref.host, ref.session, Math.max(1, from), to ?? null],
    );
    return rows.map((r) => ({ line: r.seq, raw: r.text }));
  }

  async archiveLineCount(ref: SessionRef): Promise<number> {
    checkSessionRef(ref);
    const { rows } = await this.q<{ n: number }>(
      `SELECT COALESCE(max(seq), 0)::int AS n FROM session_archive
       WHERE tenant_id = $1 AND host = $2 AND session = $3`,
      [this.tenant, ref.host, ref.session],
    );
    return rows[0]?.n ?? 0;
  }

  async archivedSessions(): Promise<SessionRef[]> {
    const { rows } = await this.q<{ host: string; session: string }>(
      `SELECT DISTINCT host, session FROM session_archive WHERE tenant_id = $1
       ORDER BY host, session`,
      [this.tenant],
    );
    return rows
      .filter((r) => isHost(r.host))
      .map((r) => ({ host: r.host as Host, session: r.session }));
  }

  private async read<T>(kind: string, host: string, session: string): Promise<T | null> {
    const { rows } = await this.q<{ doc: string }>(
      `SELECT doc FROM session_state
       WHERE tenant_id = $1 AND kind = $2 AND host = $3 AND session = $4`,
      [this.tenant, kind, host, session],
    );
    if (!rows[0]) return null;
    try {
      return JSON.parse(rows[0].doc) as T;
    } catch {
      return null;
    }
  }

  private async write(kind: string, host: string, session: string, value: unknown) {
    await this.q(
      `INSERT INTO session_state(tenant_id, kind, host, session, doc) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, kind, host, session) DO UPDATE SET doc = EXCLUDED.doc`,
      [this.tenant, kind, host, session, JSON.stringify(value)],
    );
  }

  async readState<T>(kind: StateKind, ref: SessionRef): Promise<T | null> {
    checkSessionRef(ref);
    return this.read<T>(kind, ref.host, ref.session);
  }

  async writeState(kind: StateKind, ref: SessionRef, value: unknown): Promise<void> {
    checkSessionRef(ref);
    await this.write(kind, ref.host, ref.session, value);
  }

  async removeState(kind: StateKind, ref: SessionRef): Promise<void> {
    checkSessionRef(ref);
    await this.q(
      `DELETE FROM session_state
       WHERE tenant_id = $1 AND kind = $2 AND host = $3 AND session = $4`,
      [this.tenant, kind, ref.host, ref.session],
    );
  }

  async readShared<T>(name: string): Promise<T | null> {
    checkSharedName(name);
    return this.read<T>(SHARED, '', name);
  }

  async writeShared(name: string, value: unknown): Promise<void> {
    checkSharedName(name);
    await this.write(SHARED, '', name, value);
  }
}
