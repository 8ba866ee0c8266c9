// The embedded store's session files: `archive/sessions/<host>/<session>.jsonl` (append-only raw
// transcript lines) and `.state/<kind>/<host>/<session>.json` (atomic temp + rename). Host and
// session names are checked before they become paths, so no payload can point outside the store.
import fs from 'node:fs';
import path from 'node:path';
import { MnemeError } from '../../core/errors.js';
import { isHost, type Host } from '../../core/transcript.js';
import type { ArchivedLine, SessionRef, SessionStore, StateKind } from '../sessions.js';
import { appendDurable, readIfExists, writeFileAtomic } from './atomic.js';

const SAFE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,119}$/;

function check(ref: SessionRef): void {
  if (!isHost(ref.host) || !SAFE.test(ref.session) || ref.session.includes('..')) {
    throw new MnemeError('invalid', `refused session name "${String(ref.session).slice(0, 80)}"`);
  }
}

export class SessionFiles implements SessionStore {
  constructor(
    readonly root: string,
    private readonly durable = false,
  ) {}

  private archiveFile(ref: SessionRef): string {
    check(ref);
    return path.join(this.root, 'archive', 'sessions', ref.host, `${ref.session}.jsonl`);
  }

  private stateFile(kind: StateKind, ref: SessionRef): string {
    check(ref);
    return path.join(this.root, '.state', kind, ref.host, `${ref.session}.json`);
  }

  appendArchive(ref: SessionRef, lines: string[]): { from: number; to: number } | null {
    const clean = lines.filter((l) => l.trim() !== '' && !l.includes('\n'));
    if (clean.length === 0) return null;
    const file = this.archiveFile(ref);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const before = this.archiveLineCount(ref);
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

  readArchive(ref: SessionRef, from: number, to?: number): ArchivedLine[] {
    const all = this.lines(ref);
    const end = Math.min(to ?? all.length, all.length);
    const out: ArchivedLine[] = [];
    for (let n = Math.max(1, from); n <= end; n++) out.push({ line: n, raw: all[n - 1]! });
    return out;
  }

  archiveLineCount(ref: SessionRef): number {
    return this.lines(ref).length;
  }

  archivedSessions(): SessionRef[] {
    const out: SessionRef[] = [];
    const base = path.join(this.root, 'archive', 'sessions');
    for (const host of safeReaddir(base)) {
      if (!isHost(host)) continue;
      for (const f of safeReaddir(path.join(base, host))) {
        const session = f.replace(/\.jsonl$/, '');
        if (f.endsWith('.jsonl') && SAFE.test(session)) out.push({ host: host as Host, session });
      }
    }
    return out;
  }

  readState<T>(kind: StateKind, ref: SessionRef): T | null {
    const text = readIfExists(this.stateFile(kind, ref));
    if (text === null) return null;
    try {
      return JSON.parse(text) as T;
    } catch {
      return null;
    }
  }

  writeState(kind: StateKind, ref: SessionRef, value: unknown): void {
    writeFileAtomic(this.stateFile(kind, ref), JSON.stringify(value), this.durable);
  }

  removeState(kind: StateKind, ref: SessionRef): void {
    fs.rmSync(this.stateFile(kind, ref), { force: true });
  }

  private sharedFile(name: string): string {
    if (!/^[a-z][a-z0-9-]{0,39}$/.test(name))
      throw new MnemeError('invalid', `bad state name ${name}`);
    return path.join(this.root, '.state', 'distill', `${name}.json`);
  }

  readShared<T>(name: string): T | null {
    const text = readIfExists(this.sharedFile(name));
    if (text === null) return null;
    try {
      return JSON.parse(text) as T;
    } catch {
      return null;
    }
  }

  writeShared(name: string, value: unknown): void {
    writeFileAtomic(this.sharedFile(name), JSON.stringify(value), this.durable);
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
}
