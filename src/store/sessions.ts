// The session port: raw transcript increments kept before any model sees them (the archive),
// and the small state files around them (watermarks, the distiller's pending operations, its
// in-flight batch, its run log). These are evidence and bookkeeping, not memories: memories are
// written only through the engine's apply.
import type { Host } from '../core/transcript.js';

export interface SessionRef {
  host: Host;
  /** The safe file name of the session id. */
  session: string;
}

export interface ArchivedLine {
  /** 1-based line number in the session's archive file. */
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

export interface SessionStore {
  readonly root: string;
  /** Appends raw lines; returns the archive line numbers they got. */
  appendArchive(ref: SessionRef, lines: string[]): { from: number; to: number } | null;
  readArchive(ref: SessionRef, from: number, to?: number): ArchivedLine[];
  archiveLineCount(ref: SessionRef): number;
  archivedSessions(): SessionRef[];
  readState<T>(kind: StateKind, ref: SessionRef): T | null;
  writeState(kind: StateKind, ref: SessionRef, value: unknown): void;
  removeState(kind: StateKind, ref: SessionRef): void;
  /** Store-wide distiller bookkeeping (`.state/distill/<name>.json`), e.g. the run log. */
  readShared<T>(name: string): T | null;
  writeShared(name: string, value: unknown): void;
}

export type StateKind =
  'watermarks' | 'distilled' | 'sessions' | 'injected' | 'inflight' | 'pending';
