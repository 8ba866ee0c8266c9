// Small helpers over revisions that every layer needs.
import type { Revision, RevisionView } from './types.js';

/** Front-matter keys in file order (everything but the body); the file format lives in
 * markdown.ts, which reads and writes them. */
export const FRONT_KEYS: (keyof Revision)[] = [
  'id',
  'rev',
  'op',
  'type',
  'scope',
  'slug',
  'abstract',
  'status',
  'rejected',
  'trust',
  'review',
  'quarantine',
  'valid_from',
  'valid_to',
  'recorded_at',
  'actor',
  'fields',
  'tags',
  'links',
  'provenance',
  'source',
  'applies_to',
  'reason',
  // Last, and written only when present: a revision without one serialises (and hashes) as before.
  'artifact',
];

const KEYS: (keyof Revision)[] = [...FRONT_KEYS, 'body'];

/** Strips the derived lineage facts from a view, leaving the revision as written. */
export function toRevision(v: Revision | RevisionView): Revision {
  const out: Record<string, unknown> = {};
  for (const k of KEYS) out[k] = v[k];
  return out as unknown as Revision;
}

export const handle = (id: string) => `[mem:${id}]`;

/** The value a memory states, for equality and tombstone checks. */
export const valueText = (r: Pick<Revision, 'abstract' | 'body'>) =>
  r.body.trim() === '' ? r.abstract : `${r.abstract}\n${r.body}`;
