// Purge (DESIGN invariant 3: physical removal only as an explicit human purge, journaled): what
// a purge erases, what it leaves, and how it finds the value again without keeping it. Pure: the
// engine (engine/purge.ts) decides, the adapters erase with these helpers.
//
// - The *needles* are the purged text in clear (its abstract, body, lines, field values, tags,
//   slug, and its distinctive tokens such as a leaked key): held in memory during the purge only,
//   replaced by PURGED_TEXT wherever the store keeps text.
// - The *skeleton* is what stays of a purged revision: ids, revision number, op, type, scope,
//   times, actor, links and provenance pointers, status `purged` and the purge's reason.
// - The *probes* are keyed hashes (HMAC under the store's own purge secret) of the distinctive
//   tokens and of the word runs of the purged text: `mneme purge --verify` hashes every word of
//   every file (or row) the same way to report what is left, without the text itself.
import { createHmac } from 'node:crypto';
import { sha256 } from './hash.js';
import type { JournalEntry } from './journal.js';
import { hashValue, normalizeValue, type Keyed, type Tombstone } from './normalize.js';
import type { Actor, Revision } from './types.js';

/** What replaces an erased text. */
export const PURGED_TEXT = '[purged]';

/** A keyed hash under a store's purge secret (hex, 128 bits). */
export function keyedHash(secret: string): Keyed {
  return (text: string) =>
    createHmac('sha256', secret).update(`mneme-purge\u0000${text}`).digest('hex').slice(0, 32);
}

/** A fresh purge secret (hex, 256 bits). */
export function newPurgeSecret(random: (n: number) => Uint8Array): string {
  return Buffer.from(random(32)).toString('hex');
}

/** The slug a purged revision carries (the original slug is derived from the value). */
export const purgedSlug = (id: string) => `purged-${sha256(id).slice(0, 12)}`;

/** What stays of a purged revision: its lineage skeleton, status `purged`, the purge's reason. */
export function skeletonOf(r: Revision, reason: string): Revision {
  return {
    ...r,
    slug: purgedSlug(r.id),
    abstract: PURGED_TEXT,
    body: '',
    tags: [],
    fields: {},
    status: 'purged',
    review: 'none',
    quarantine: null,
    source: null,
    applies_to: [],
    reason: `purged: ${reason}`,
  };
}

const WORD = /[\p{L}\p{N}]+/gu;
const TOKEN = /[\p{L}\p{N}](?:[\p{L}\p{N}_.-]*[\p{L}\p{N}])?/gu;

/**
 * A token that names the value rather than the topic: a key, a password, an identifier — at
 * least 8 characters mixing letters and digits, or any token of 16 or more.
 */
function distinctive(token: string): boolean {
  if (token.length >= 16) return true;
  return token.length >= 8 && /\p{L}/u.test(token) && /\p{N}/u.test(token);
}

/** Every text of a revision a purge erases. */
export function revisionTexts(r: Revision): string[] {
  return [
    r.abstract,
    r.body,
    ...Object.values(r.fields),
    ...r.tags,
    r.slug,
    r.reason ?? '',
    r.quarantine ?? '',
  ].filter((t) => t !== '' && t !== PURGED_TEXT);
}

/**
 * The clear texts to erase for these revisions (longest first): the abstract, its normalised
 * form (what a tombstone and a refusal quote), the body and each of its lines, field values,
 * tags and the slug; every distinctive token of any of them; and whatever the person named.
 */
export function purgeNeedles(revs: readonly Revision[], also: readonly string[] = []): string[] {
  const out = new Set<string>();
  const add = (t: string, min: number) => {
    const s = t.trim();
    if (s.length >= min && s !== PURGED_TEXT) out.add(s);
  };
  for (const r of revs) {
    if (r.status === 'purged') continue;
    add(r.abstract, 8);
    const norm = normalizeValue(r.abstract);
    add(norm, 8);
    add(norm.slice(0, 80), 8);
    add(r.body, 8);
    for (const line of r.body.split('\n')) add(line, 12);
    for (const v of Object.values(r.fields)) add(v, 8);
    for (const t of r.tags) add(t, 8);
    add(r.slug, 8);
    for (const text of revisionTexts(r))
      for (const m of text.matchAll(TOKEN)) if (distinctive(m[0])) add(m[0], 8);
  }
  for (const a of also) {
    add(a, 4);
    for (const m of a.matchAll(TOKEN)) if (m[0].length >= 4) add(m[0], 4);
  }
  return [...out].sort((a, b) => b.length - a.length);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Erases needles from texts (case-insensitive), and tells whether a text holds one. */
export interface Eraser {
  text(s: string): string;
  holds(s: string): boolean;
  /** Every string inside a JSON value erased; the same object when nothing changed. */
  deep<T>(value: T): T;
}

export function eraser(needles: readonly string[]): Eraser {
  if (needles.length === 0) return { text: (s) => s, holds: () => false, deep: (v) => v };
  const re = new RegExp(needles.map(escape).join('|'), 'giu');
  const holds = (s: string) => {
    re.lastIndex = 0;
    return re.test(s);
  };
  const text = (s: string) => (holds(s) ? s.replace(re, PURGED_TEXT) : s);
  const deep = <T>(value: T): T => {
    // A hash or key (hex) is never text: a needle of hex digits must not cut into one.
    if (typeof value === 'string')
      return (/^[0-9a-f]{32,}$/.test(value) ? value : text(value)) as T;
    if (Array.isArray(value)) {
      const next = value.map(deep);
      return (next.some((x, i) => x !== value[i]) ? next : value) as T;
    }
    if (value !== null && typeof value === 'object') {
      let changed = false;
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        const n = deep(v);
        if (n !== v) changed = true;
        out[k] = n;
      }
      return (changed ? out : value) as T;
    }
    return value;
  };
  return { text, holds, deep };
}

/**
 * A line of a JSON-lines file (or a whole JSON file) with the needles erased: parsed, erased
 * string by string, written back; text that is not JSON is erased as text. Null: unchanged.
 */
export function eraseJsonText(raw: string, e: Eraser): string | null {
  if (!e.holds(raw) && !e.holds(unescapeJson(raw))) return null;
  try {
    const parsed: unknown = JSON.parse(raw);
    const next = e.deep(parsed);
    if (next !== parsed) return JSON.stringify(next);
  } catch {
    /* not JSON: erased as text below */
  }
  const t = e.text(raw);
  return t === raw ? null : t;
}

/** A JSON text's strings as they read (so a needle with a quote or newline is found). */
function unescapeJson(raw: string): string {
  return raw.replace(/\\(["\\/bfnrt])/g, (_m, c: string) =>
    c === 'n' ? '\n' : c === 't' ? '\t' : c === 'r' ? '\r' : c === 'b' || c === 'f' ? ' ' : c,
  );
}

/**
 * The journal entries holding a needle, rewritten: the reason and data erased, every chain field
 * (seq, prev, hash), the time, actor, op, target, revision refs and keys untouched.
 */
export function redactedEntries(
  entries: readonly JournalEntry[],
  e: Eraser,
): Map<number, JournalEntry> {
  const out = new Map<number, JournalEntry>();
  for (const entry of entries) {
    const next = { reason: e.deep(entry.reason), data: e.deep(entry.data) };
    if (next.reason !== entry.reason || next.data !== entry.data)
      out.set(entry.seq, {
        ...entry,
        reason: next.reason,
        ...(entry.data !== undefined ? { data: next.data } : {}),
      });
  }
  return out;
}

/** What a purge keeps to find its value again: keyed hashes of tokens and of word runs. */
export interface PurgeProbes {
  /** keyed(token) of each distinctive token (lower-cased). */
  tokens: string[];
  /** keyed(words joined by a space) of each run of GRAM words (lower-cased), per run length. */
  grams: { n: number; hashes: string[] }[];
}

/** Words in a run `--verify` looks for (shorter texts: the whole text). */
export const GRAM = 4;

const words = (s: string) => [...s.toLowerCase().matchAll(WORD)].map((m) => m[0]);

export function purgeProbes(
  keyed: Keyed,
  revs: readonly Revision[],
  also: readonly string[] = [],
): PurgeProbes {
  const tokens = new Set<string>();
  const grams = new Map<number, Set<string>>();
  const addGrams = (text: string) => {
    const w = words(text);
    if (w.length === 0) return;
    const n = Math.min(GRAM, w.length);
    let set = grams.get(n);
    if (!set) grams.set(n, (set = new Set()));
    for (let i = 0; i + n <= w.length; i++) set.add(keyed(w.slice(i, i + n).join(' ')));
  };
  for (const r of revs) {
    if (r.status === 'purged') continue;
    for (const text of revisionTexts(r))
      for (const m of text.matchAll(TOKEN))
        if (distinctive(m[0])) tokens.add(keyed(m[0].toLowerCase()));
    addGrams(r.abstract);
    for (const line of r.body.split('\n')) addGrams(line);
  }
  for (const a of also) {
    addGrams(a);
    for (const m of a.matchAll(TOKEN)) if (m[0].length >= 4) tokens.add(keyed(m[0].toLowerCase()));
  }
  return {
    tokens: [...tokens].sort(),
    grams: [...grams].map(([n, s]) => ({ n, hashes: [...s].sort() })),
  };
}

/** A probe found in a text: a distinctive token, or a run of the purged text's words. */
export interface ProbeHit {
  kind: 'token' | 'phrase';
  count: number;
}

/** Looks for a purge's probes in a text (a file read as UTF-8, a row as JSON). */
export function probeText(keyed: Keyed, probes: PurgeProbes, text: string): ProbeHit[] {
  const tokenSet = new Set(probes.tokens);
  let tokenHits = 0;
  if (tokenSet.size > 0)
    for (const m of text.matchAll(TOKEN)) if (tokenSet.has(keyed(m[0].toLowerCase()))) tokenHits++;
  let phraseHits = 0;
  const w = probes.grams.length > 0 ? words(text) : [];
  for (const g of probes.grams) {
    const set = new Set(g.hashes);
    for (let i = 0; i + g.n <= w.length; i++)
      if (set.has(keyed(w.slice(i, i + g.n).join(' ')))) phraseHits++;
  }
  const out: ProbeHit[] = [];
  if (tokenHits) out.push({ kind: 'token', count: tokenHits });
  if (phraseHits) out.push({ kind: 'phrase', count: phraseHits });
  return out;
}

/**
 * The tombstone a purge arms: keyed hashes of each purged text (so no write path brings it
 * back) and its probes (so `--verify` can find it), and nothing readable.
 */
export function purgeTombstone(
  keyed: Keyed,
  p: {
    id: string;
    scope: string;
    revs: readonly Revision[];
    also: readonly string[];
    actor: Actor;
    at: string;
    reason: string;
  },
): Tombstone & { probes: PurgeProbes } {
  const texts = new Set<string>();
  for (const r of p.revs) {
    if (r.status === 'purged') continue;
    texts.add(r.abstract);
    if (r.body.trim() !== '') texts.add(r.body);
    for (const v of Object.values(r.fields)) if (v.trim() !== '') texts.add(v);
  }
  for (const a of p.also) texts.add(a);
  const hashed = [...texts].map((t) => hashValue(keyed, p.scope, t));
  return {
    key: keyed(
      `${p.scope}\u0000purge\u0000${p.id}\u0000${p.revs.map((r) => r.rev).join(',')}\u0000${p.at}`,
    ),
    scope: p.scope,
    kind: 'purged',
    value_norm: '',
    hashed,
    probes: purgeProbes(keyed, p.revs, p.also),
    reason: p.reason,
    actor: p.actor,
    at: p.at,
    from_op: 'purge',
    memory: p.id,
  };
}

/** What a purge cannot reach, said by the command and the docs. */
export const PURGE_CANNOT_REACH = [
  "copies outside the store: the user's backups and snapshots of the store directory or database",
  'git history of a project file that held the value and was committed',
  "the agent host's own transcript files (e.g. ~/.claude/projects, ~/.codex/sessions)",
  "a shell's history, if the value was typed on a command line",
  'blocks the filesystem or the database server freed but did not overwrite (and, on Postgres, its WAL and backups)',
];
