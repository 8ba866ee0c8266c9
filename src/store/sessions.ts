// The session port: raw transcript increments kept before any model sees them (the archive),
// and the small state records around them (watermarks, the distiller's pending operations, its
// in-flight batch, its run log). These are evidence and bookkeeping, not memories: memories are
// written only through the engine's apply. Every Store carries one (`store.sessions`): files
// under the embedded store's directory, rows of the tenant on Postgres. Asynchronous, because
// one of them is a database.
import { MnemeError } from '../core/errors.js';
import { isHost, type Host } from '../core/transcript.js';

export interface SessionRef {
  host: Host;
  /** The safe name of the session id (core/transcript.ts safeSessionName). */
  session: string;
}

export interface ArchivedLine {
  /** 1-based line number in the session's archive. */
  line: number;
  raw: string;
}

export interface SessionMeta {
  host: Host;
  session: string;
  /** The id as the host sent it. */
  sessionId: string;
  cwd: string;
  project: string | null;
  identity: string | null;
  transcript: string | null;
  updated_at: string;
}

export type StateKind =
  'watermarks' | 'distilled' | 'sessions' | 'injected' | 'inflight' | 'pending';

export interface SessionStore {
  /**
   * Appends raw lines (blank lines and lines holding a newline are dropped); returns the archive
   * line numbers they got, or null when nothing was appended. Concurrent appends to one session
   * never interleave or reuse a line number.
   */
  appendArchive(ref: SessionRef, lines: string[]): Promise<{ from: number; to: number } | null>;
  /** Lines `from`..`to` (inclusive, 1-based; to the end when `to` is absent). */
  readArchive(ref: SessionRef, from: number, to?: number): Promise<ArchivedLine[]>;
  archiveLineCount(ref: SessionRef): Promise<number>;
  /** Every session with an archive, by host then session name. */
  archivedSessions(): Promise<SessionRef[]>;
  /** A session's state record of this kind, or null (absent or unreadable). */
  readState<T>(kind: StateKind, ref: SessionRef): Promise<T | null>;
  /** Replaces the record atomically (a reader sees the old value or the new, never half). */
  writeState(kind: StateKind, ref: SessionRef, value: unknown): Promise<void>;
  removeState(kind: StateKind, ref: SessionRef): Promise<void>;
  /** Store-wide distiller bookkeeping by name (e.g. `runs`, its run log). */
  readShared<T>(name: string): Promise<T | null>;
  writeShared(name: string, value: unknown): Promise<void>;
}

const SAFE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,119}$/;

/** Refuses a host or session name that is not safe as a path segment (on every backend alike). */
export function checkSessionRef(ref: SessionRef): void {
  if (!isHost(ref.host) || !SAFE.test(ref.session) || ref.session.includes('..')) {
    throw new MnemeError('invalid', `refused session name "${String(ref.session).slice(0, 80)}"`, {
      hint: 'a session name is 1-120 letters, digits, dots, dashes or underscores',
    });
  }
}

/** Whether `name` is a session name an archive would accept (listing skips the rest). */
export const isSessionName = (name: string): boolean => SAFE.test(name) && !name.includes('..');

/** Refuses a shared-state name that is not a short lowercase word. */
export function checkSharedName(name: string): void {
  if (!/^[a-z][a-z0-9-]{0,39}$/.test(name))
    throw new MnemeError('invalid', `refused distiller state name "${name.slice(0, 40)}"`, {
      hint: 'a shared state name is a lowercase word (letters, digits, dashes)',
    });
}

/** The lines an archive keeps of `lines`. */
export const archivable = (lines: string[]): string[] =>
  lines.filter((l) => l.trim() !== '' && !l.includes('\n'));
