// Browsing without a query: the current revision of every memory the bound engine may read,
// filtered by type, trust, status and source freshness. Scope comes from the engine's binding;
// an agent-surface engine never lists quarantined memories.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { invalid } from '../../core/errors.js';
import { TRUST_LEVELS, type RevisionView } from '../../core/types.js';
import type { Engine } from '../../engine/engine.js';

export const STATUS_FILTERS = [
  'active',
  'retracted',
  'rejected',
  'merged',
  'quarantined',
  'pending',
] as const;
export const FRESHNESS_FILTERS = ['unbound', 'fresh', 'drifted', 'missing', 'unchecked'] as const;

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
  freshness: (typeof FRESHNESS_FILTERS)[number];
  tags: string[];
}

/** Source freshness, checked only when the project's root on this machine is known. */
export function freshness(v: RevisionView, root: string | null): MemoryRow['freshness'] {
  if (!v.source) return 'unbound';
  if (!root) return 'unchecked';
  const abs = path.resolve(root, v.source.path);
  const rel = path.relative(root, abs);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return 'missing';
  try {
    const sha = createHash('sha256').update(fs.readFileSync(abs)).digest('hex');
    return sha === v.source.sha256 ? 'fresh' : 'drifted';
  } catch {
    return 'missing';
  }
}

export function checkFilters(f: BrowseFilters): void {
  if (f.trust && !(TRUST_LEVELS as readonly string[]).includes(f.trust))
    throw invalid(`trust must be one of ${TRUST_LEVELS.join(', ')}`);
  if (f.status && !(STATUS_FILTERS as readonly string[]).includes(f.status))
    throw invalid(`status must be one of ${STATUS_FILTERS.join(', ')}`);
  if (f.freshness && !(FRESHNESS_FILTERS as readonly string[]).includes(f.freshness))
    throw invalid(`freshness must be one of ${FRESHNESS_FILTERS.join(', ')}`);
}

export async function browse(
  engine: Engine,
  f: BrowseFilters,
  root: string | null,
): Promise<MemoryRow[]> {
  checkFilters(f);
  const all = await engine.memories({ includeEnded: true });
  const rows: MemoryRow[] = [];
  for (const v of all) {
    if (f.type && v.type !== f.type) continue;
    if (f.trust && v.trust !== f.trust) continue;
    if (f.status === 'quarantined' ? v.quarantine === null : false) continue;
    if (f.status === 'pending' ? v.review !== 'pending' : false) continue;
    if (f.status && !['quarantined', 'pending'].includes(f.status) && v.state !== f.status)
      continue;
    const fresh = freshness(v, root);
    if (f.freshness && fresh !== f.freshness) continue;
    rows.push({
      id: v.id,
      rev: v.rev,
      type: v.type,
      scope: v.scope,
      abstract: v.abstract,
      trust: v.trust,
      status: v.state,
      review: v.review,
      quarantine: v.quarantine,
      valid_from: v.valid_from,
      valid_to: v.valid_to_eff ?? v.valid_to,
      recorded_at: v.recorded_at,
      freshness: fresh,
      tags: v.tags,
    });
  }
  rows.sort((a, b) => (a.recorded_at < b.recorded_at ? 1 : a.recorded_at > b.recorded_at ? -1 : 0));
  return rows.slice(0, Math.min(f.limit ?? 100, 500));
}
