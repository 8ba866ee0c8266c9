// Browsing without a query: the current revision of every memory the bound engine may read,
// filtered by type, trust, status and source freshness, newest first. Scope comes from the
// binding; an agent-surface engine never lists quarantined memories. Read-only: a source is
// looked at (through the project's files, as recall does) but a moved verdict is not journaled.
import type { RevisionView } from '../core/types.js';
import {
  BROWSE_LIMITS,
  checkFilters,
  type BrowseFilters,
  type BrowseFreshness,
  type MemoryRow,
} from './browse-filters.js';
import type { EngineContext } from './context.js';
import { observeSource, persistedFreshness } from './freshness.js';

/**
 * A source-bound memory's freshness as a reader sees it now: what its file says (the same
 * judgement recall makes), or — where the files cannot be read — a journaled drift or
 * disappearance, else `unchecked`.
 */
export async function freshnessNow(
  ctx: EngineContext,
  views: RevisionView[],
): Promise<Map<string, BrowseFreshness>> {
  const bound = views.filter((v) => v.source);
  const persisted =
    bound.length > 0
      ? await persistedFreshness(
          ctx,
          bound.map((v) => v.id),
        )
      : null;
  const out = new Map<string, BrowseFreshness>();
  for (const v of views) {
    if (!v.source) {
      out.set(v.id, 'unbound');
      continue;
    }
    const seen = observeSource(ctx, v.source);
    const rec = persisted?.get(v.id);
    out.set(
      v.id,
      seen ? seen.freshness : rec && rec.freshness !== 'fresh' ? rec.freshness : 'unchecked',
    );
  }
  return out;
}

/** The rows of a browse over `views` (the memories this binding may list). */
export async function browseRows(
  ctx: EngineContext,
  views: RevisionView[],
  f: BrowseFilters,
): Promise<MemoryRow[]> {
  checkFilters(f);
  const kept = views.filter(
    (v) =>
      !(f.type && v.type !== f.type) &&
      !(f.trust && v.trust !== f.trust) &&
      !(f.status === 'quarantined' && v.quarantine === null) &&
      !(f.status === 'pending' && v.review !== 'pending') &&
      !(f.status && !['quarantined', 'pending'].includes(f.status) && v.state !== f.status),
  );
  const fresh = await freshnessNow(ctx, kept);
  const rows: MemoryRow[] = [];
  for (const v of kept) {
    const freshness = fresh.get(v.id)!;
    if (f.freshness && freshness !== f.freshness) continue;
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
      freshness,
      tags: v.tags,
    });
  }
  rows.sort((a, b) => (a.recorded_at < b.recorded_at ? 1 : a.recorded_at > b.recorded_at ? -1 : 0));
  return rows.slice(0, Math.min(f.limit ?? BROWSE_LIMITS.default, BROWSE_LIMITS.max));
}
