// The effects a commit writes after its journal line (idempotent, so recovery can redo them):
// a tombstone event appended to tombstones.jsonl and a proposal file under proposals/; and
// reading them back (TombstoneLog caches the armed tombstones until the file's size changes).
import fs from 'node:fs';
import path from 'node:path';
import type { Tombstone } from '../../core/normalize.js';
import type { Proposal } from '../../core/proposal.js';
import type { CommitRequest, ProposalQuery } from '../port.js';
import { appendDurable, readIfExists, writeFileAtomic } from './atomic.js';
import { safeReaddir } from './dirs.js';
import type { Layout } from './layout.js';
import type { StagedCommit } from './parts.js';

export class TombstoneLog {
  private cache: { size: number; list: Tombstone[] } | null = null;

  constructor(
    private readonly file: string,
    private readonly durable: boolean,
  ) {}

  /** Appends an arm or lift event unless the same line is already there. */
  record(tombstone: NonNullable<CommitRequest['tombstone']>): void {
    const line =
      'arm' in tombstone
        ? { event: 'arm', ...tombstone.arm }
        : { event: 'lift', ...tombstone.lift };
    const text = JSON.stringify(line);
    const existing = readIfExists(this.file) ?? '';
    if (!existing.split('\n').includes(text)) appendDurable(this.file, `${text}\n`, this.durable);
    this.cache = null;
  }

  /** Forgets the cached list (the file was rewritten: a purge). */
  reset(): void {
    this.cache = null;
  }

  /** The tombstones armed (and not lifted) in these scopes. */
  armed(scopes: string[]): Tombstone[] {
    let size = 0;
    try {
      size = fs.statSync(this.file).size;
    } catch {
      return [];
    }
    if (!this.cache || this.cache.size !== size) {
      const armed = new Map<string, Tombstone>();
      for (const line of (readIfExists(this.file) ?? '').split('\n')) {
        if (line.trim() === '') continue;
        let ev: { event?: string } & Partial<Tombstone>;
        try {
          ev = JSON.parse(line);
        } catch {
          continue; // a torn last line from a crash: never committed
        }
        const k = `${ev.scope}\u0000${ev.key}`;
        if (ev.event === 'arm') {
          const { event: _e, ...t } = ev;
          armed.set(k, t as Tombstone);
        } else if (ev.event === 'lift') armed.delete(k);
      }
      this.cache = { size, list: [...armed.values()] };
    }
    const want = new Set(scopes);
    return this.cache.list.filter((t) => want.has(t.scope));
  }
}

/** Tombstone and proposal files, written after the journal line (idempotent on redo). */
export function applyAfterEffects(
  p: { readonly layout: Layout; readonly tombstones: TombstoneLog; readonly durable: boolean },
  tombstone: CommitRequest['tombstone'],
  proposal: Proposal | undefined,
): void {
  if (tombstone) p.tombstones.record(tombstone);
  if (proposal) {
    writeFileAtomic(
      p.layout.proposalFile(proposal.id),
      `${JSON.stringify(proposal, null, 2)}\n`,
      p.durable,
    );
  }
}

/** The proposal files matching a query, oldest first (an unreadable one is fsck's to report). */
export function readProposals(dir: string, q: ProposalQuery): Proposal[] {
  const names = q.id ? [`${q.id}.json`] : safeReaddir(dir).filter((n) => n.endsWith('.json'));
  const out: Proposal[] = [];
  for (const n of names) {
    if (q.id && !/^prop_[0-9A-Z]{26}$/.test(q.id)) return [];
    const text = readIfExists(path.join(dir, n));
    if (text === null) continue;
    try {
      const p = JSON.parse(text) as Proposal;
      if (q.state && p.state !== q.state) continue;
      if (q.scopes && !q.scopes.includes(p.scope)) continue;
      out.push(p);
    } catch {
      /* reported by fsck */
    }
  }
  return out.sort((a, b) =>
    a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1,
  );
}

/** The armed tombstones with the arms and lifts of a group commit still to be written. */
export function withStagedTombstones(
  armed: Tombstone[],
  staged: readonly StagedCommit[],
  scopes: string[],
): Tombstone[] {
  if (!staged.some((s) => s.tombstone)) return armed;
  const want = new Set(scopes);
  const byKey = new Map(armed.map((t) => [`${t.scope}\u0000${t.key}`, t]));
  for (const s of staged) {
    const t = s.tombstone;
    if (!t) continue;
    if ('arm' in t) {
      if (want.has(t.arm.scope)) byKey.set(`${t.arm.scope}\u0000${t.arm.key}`, t.arm);
    } else byKey.delete(`${t.lift.scope}\u0000${t.lift.key}`);
  }
  return [...byKey.values()];
}

/** The proposals matching a query, with the states a group commit has still to write. */
export function withStagedProposals(
  found: Proposal[],
  staged: readonly StagedCommit[],
  q: ProposalQuery,
): Proposal[] {
  if (!staged.some((s) => s.proposal)) return found;
  const byId = new Map(found.map((x) => [x.id, x]));
  for (const s of staged) {
    const x = s.proposal;
    if (!x) continue;
    const matches =
      (!q.id || x.id === q.id) &&
      (!q.state || x.state === q.state) &&
      (!q.scopes || q.scopes.includes(x.scope));
    if (matches) byId.set(x.id, x);
    else byId.delete(x.id);
  }
  return [...byId.values()].sort((a, b) =>
    a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1,
  );
}
