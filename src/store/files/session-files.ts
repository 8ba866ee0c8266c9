// The embedded store's session files: `archive/sessions/<host>/<session>.jsonl` (append-only raw
// transcript lines) and `.state/<kind>/<host>/<session>.json` (atomic temp + rename). Host and
// session names are checked before they become paths, so no payload can point outside the store.
import fs from 'node:fs';
import path from 'node:path';
import { isHost, type Host } from '../../core/transcript.js';
import {
  archivable,
  checkSessionRef,
  checkSharedName,
  isSessionName,
  type ArchivedLine,
  type SessionRef,
  type SessionStore,
  type StateKind,
} from '../sessions.js';
import { appendDurable, readIfExists, writeFileAtomic } from './atomic.js';

export class SessionFiles implements SessionStore {
  constructor(
    readonly root: string,
    private readonly durable = false,
  ) {}

  private archiveFile(ref: SessionRef): string {
    checkSessionRef(ref);
    return path.join(this.root, 'archive', 'sessions', ref.host, `${ref.session}.jsonl`);
  }

  private stateFile(kind: StateKind, ref: SessionRef): string {
    checkSessionRef(ref);
    return path.join(this.root, '.state', kind, ref.host, `${ref.session}.json`);
  }

  async appendArchive(
    ref: SessionRef,
    lines: string[],
  ): Promise<{ from: number; to: number } | null> {
    const clean = archivable(lines);
    if (clean.length === 0) return null;
    const file = this.archiveFile(ref);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const before = this.lines(ref).length;
    appendDurable(file, clean.join('\n') + '\n', this.durable);
    return { from: before + 1, to: before + clean.length };
  }

  private lines(ref: SessionRef): string[] {
    const text = readIfExists(this.archiveFile(ref));
    if (text === null || text === '') return [];
    const parts = text.split('\n');
    if (parts[parts.length - 1] === '') parts.pop();
    return parts;
  }

  async readArchive(ref: SessionRef, from: number, to?: number): Promise<ArchivedLine[]> {
    const all = this.lines(ref);
    const end = Math.min(to ?? all.length, all.length);
    const out: ArchivedLine[] = [];
    for (let n = Math.max(1, from); n <= end; n++) out.push({ line: n, raw: all[n - 1]! });
    return out;
  }

  async archiveLineCount(ref: SessionRef): Promise<number> {
    return this.lines(ref).length;
  }

  async archivedSessions(): Promise<SessionRef[]> {
    const out: SessionRef[] = [];
    const base = path.join(this.root, 'archive', 'sessions');
    for (const host of safeReaddir(base)) {
      if (!isHost(host)) continue;
      for (const f of safeReaddir(path.join(base, host))) {
        const session = f.replace(/\.jsonl$/, '');
        if (f.endsWith('.jsonl') && isSessionName(session))
          out.push({ host: host as Host, session });
      }
    }
    return out;
  }

  async readState<T>(kind: StateKind, ref: SessionRef): Promise<T | null> {
    return parsed<T>(readIfExists(this.stateFile(kind, ref)));
  }

  async writeState(kind: StateKind, ref: SessionRef, value: unknown): Promise<void> {
    writeFileAtomic(this.stateFile(kind, ref), JSON.stringify(value), this.durable);
  }

  async removeState(kind: StateKind, ref: SessionRef): Promise<void> {
    fs.rmSync(this.stateFile(kind, ref), { force: true });
  }

  private sharedFile(name: string): string {
    checkSharedName(name);
    return path.join(this.root, '.state', 'distill', `${name}.json`);
  }

  async readShared<T>(name: string): Promise<T | null> {
    return parsed<T>(readIfExists(this.sharedFile(name)));
  }

  async writeShared(name: string, value: unknown): Promise<void> {
    writeFileAtomic(this.sharedFile(name), JSON.stringify(value), this.durable);
  }
}

function parsed<T>(text: string | null): T | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
}
