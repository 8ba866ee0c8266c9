// Small helpers over revisions that every layer needs.
import { FRONT_KEYS } from './markdown.js';
import type { Revision, RevisionView } from './types.js';

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
