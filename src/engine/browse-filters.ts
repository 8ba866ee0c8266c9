// What a browse may ask for and what it returns: the filter values (the HTTP API's and the
// dashboard's forms and docs list them), the row shape and the limits. Kept apart from browse.ts
// so naming them loads nothing of the browse itself.
import { invalid } from '../core/errors.js';
import { TRUST_LEVELS } from '../core/types.js';

export const STATUS_FILTERS = [
  'active',
  'retracted',
  'rejected',
  'merged',
  'quarantined',
  'pending',
] as const;
/** `unchecked`: bound to a source this engine cannot read here (no project files). */
export const FRESHNESS_FILTERS = ['unbound', 'fresh', 'drifted', 'missing', 'unchecked'] as const;
export type BrowseFreshness = (typeof FRESHNESS_FILTERS)[number];

/** How many rows a browse returns by default, and at most. */
export const BROWSE_LIMITS = { default: 100, max: 500 } as const;

export interface BrowseFilters {
  type?: string;
  trust?: string;
  status?: string;
  freshness?: string;
  limit?: number;
}

export interface MemoryRow {
  id: string;
  rev: number;
  type: string;
  scope: string;
  abstract: string;
  trust: string;
  status: string;
  review: string;
  quarantine: string | null;
  valid_from: string;
  valid_to: string | null;
  recorded_at: string;
  freshness: BrowseFreshness;
  tags: string[];
}

export function checkFilters(f: BrowseFilters): void {
  if (f.trust && !(TRUST_LEVELS as readonly string[]).includes(f.trust))
    throw invalid(`trust must be one of ${TRUST_LEVELS.join(', ')}`);
  if (f.status && !(STATUS_FILTERS as readonly string[]).includes(f.status))
    throw invalid(`status must be one of ${STATUS_FILTERS.join(', ')}`);
  if (f.freshness && !(FRESHNESS_FILTERS as readonly string[]).includes(f.freshness))
    throw invalid(`freshness must be one of ${FRESHNESS_FILTERS.join(', ')}`);
}
