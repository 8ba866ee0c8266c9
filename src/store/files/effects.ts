// The effects a commit writes after its journal line (idempotent, so recovery can redo them):
// a tombstone event appended to tombstones.jsonl and a proposal file under proposals/; and
// reading them back (TombstoneLog caches the armed tombstones until the file's size changes,
// with the lookup index over them, core/normalize.ts "Indexed lookup", built on first use).
import fs from 'node:fs';
import path from 'node:path';
import { TombstoneIndex, type Tombstone, type TombstoneProbe } from '../../core/normalize.js';
import type { Proposal } from '../../core/proposal.js';
import type { CommitRequest, ProposalQuery } from '../port.js';
import { appendDurable, readIfExists, writeFileAtomic } from './atomic.js';
import { safeReaddir } from './dirs.js';
import type { Layout } from './layout.js';
import type { StagedCommit } from './parts.js';

/** An armed tombstone as the log holds it: `seq` orders the list as the file's events did. */
interface Armed {
  t: Tombstone;
  seq: number;
}

interface Cache {
  /** The file's size this cache reflects. */
  size: number;
  /** scope NUL key → the armed tombstone, in the order `armed` lists them. */
  armed: Map<string, Armed>;
  next: number;
  list: Tombstone[] | null;
  /**
   * scope → its lookup index (core TombstoneIndex, the one the Postgres store keeps), built on
   * the first lookup in arming order and kept current after.
   */
  byGram: Map<string, TombstoneIndex> | null;
  /** Every line of the file, to append an event only once without reading the file again. */
  lines: Set<string>;
  /** The file ends with a newline (or is empty): no torn line to end before appending. */
  clean: boolean;
}

/** The file's size, or -1 when it does not exist. */
function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return -1;
  }
}

type Event = { event?: string } & Partial<Tombstone>;

export class TombstoneLog {
  private cache: Cache | null = null;

  constructor(
    private readonly file: string,
    private readonly durable: boolean,
  ) {}

  /**
   * Appends an arm or lift event unless the same line is already there (a redo after a crash
   * writes it once). The file is read only when the cache does not reflect it (its size
   * changed): arming many tombstones reads it once, not once per arm. A torn last line (a crash
   * mid-append, never committed) is ended first, so the new line stays whole.
   */
  record(tombstone: NonNullable<CommitRequest['tombstone']>): void {
    const line =
      'arm' in tombstone
        ? { event: 'arm', ...tombstone.arm }
        : { event: 'lift', ...tombstone.lift };
    const text = JSON.stringify(line);
    const current =
      this.cache !== null && this.cache.size === sizeOf(this.file) ? this.cache : null;
    let lead = '';
    if (current) {
      if (current.lines.has(text)) return;
      if (!current.clean) lead = '\n';
    } else {
      const existing = readIfExists(this.file) ?? '';
      if (existing.split('\n').includes(text)) return;
      if (existing !== '' && !existing.endsWith('\n')) lead = '\n';
    }
    // The cache follows the append when it reflected the whole file; otherwise the next read
    // parses the file again.
    this.cache = null;
    appendDurable(this.file, `${lead}${text}\n`, this.durable);
    if (current) {
      apply(current, JSON.parse(text) as Event);
      current.lines.add(text);
      current.size += Buffer.byteLength(`${lead}${text}\n`);
      current.clean = true;
      this.cache = current;
    }
  }

  /** Forgets the cached list (the file was rewritten: a purge). */
  reset(): void {
    this.cache = null;
  }

  private load(): Cache | null {
    const size = sizeOf(this.file);
    if (size < 0) {
      this.cache = null;
      return null;
    }
    if (!this.cache || this.cache.size !== size) {
      const text = readIfExists(this.file) ?? '';
      const cache: Cache = {
        size: Buffer.byteLength(text),
        armed: new Map(),
        next: 0,
        list: null,
        byGram: null,
        lines: new Set(),
        clean: text === '' || text.endsWith('\n'),
      };
      for (const line of text.split('\n')) {
        if (line.trim() === '') continue;
        cache.lines.add(line);
        let ev: Event;
        try {
          ev = JSON.parse(line);
        } catch {
          continue; // a torn last line from a crash: never committed
        }
        apply(cache, ev);
      }
      this.cache = cache;
    }
    return this.cache;
  }

  /** The tombstones armed (and not lifted) in these scopes. */
  armed(scopes: string[]): Tombstone[] {
    const cache = this.load();
    if (!cache) return [];
    cache.list ??= [...cache.armed.values()].map((a) => a.t);
    const want = new Set(scopes);
    return cache.list.filter((t) => want.has(t.scope));
  }

  /** The armed tombstones of `scope` the probe finds, in the order `armed` lists them. */
  candidates(scope: string, probe: TombstoneProbe): Tombstone[] {
    const cache = this.load();
    if (!cache || cache.armed.size === 0) return [];
    if (!cache.byGram) {
      cache.byGram = new Map();
      for (const a of cache.armed.values()) indexOf(cache.byGram, a.t.scope).add(a.t);
    }
    return cache.byGram.get(scope)?.candidates(probe) ?? [];
  }
}

function indexOf(byGram: Map<string, TombstoneIndex>, scope: string): TombstoneIndex {
  let index = byGram.get(scope);
  if (!index) byGram.set(scope, (index = new TombstoneIndex(scope)));
  return index;
}

/** One arm or lift event applied to the cache (a re-arm keeps its place, as a Map does). */
function apply(cache: Cache, ev: Event): void {
  const k = `${ev.scope}\u0000${ev.key}`;
  const prev = cache.armed.get(k);
  if (ev.event !== 'arm' && ev.event !== 'lift') return;
  if (ev.event === 'arm') {
    const { event: _e, ...t } = ev;
    const a: Armed = { t: t as Tombstone, seq: prev?.seq ?? cache.next++ };
    cache.armed.set(k, a);
    if (cache.byGram) indexOf(cache.byGram, a.t.scope).add(a.t);
  } else {
    cache.armed.delete(k);
    if (prev) cache.byGram?.get(prev.t.scope)?.delete(prev.t.key);
  }
  cache.list = null;
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
