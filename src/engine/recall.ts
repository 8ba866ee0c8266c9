// Recall (DESIGN §5): eligibility inside the store's query, then lexical relevance re-ranked by
// weight × recency × trust, deduplicated per memory, returned as L0 lines with citation handles.
// --explain adds the score parts and the exclusion trace: what matched but was not served, and why.
import {
  describeExclusion,
  exclusionReason,
  type Eligibility,
  type ExclusionReason,
} from '../core/eligibility.js';
import { scoreCandidate, type RankerOptions, type ScoreParts } from '../core/ranking.js';
import { handle } from '../core/revision.js';
import { queryTerms } from '../core/text.js';
import { toIso } from '../core/time.js';
import type { Actor, Freshness, Trust } from '../core/types.js';
import { readableScopes, type EngineContext } from './context.js';

export interface RecallOptions {
  limit?: number;
  asOf?: string;
  knownAt?: string;
  explain?: boolean;
  minTrust?: Trust;
  /** Record a usage event (default true). */
  logUsage?: boolean;
  actor?: Actor;
  /** Ranker switches (defaults: all on); for benchmarks and ablations. */
  ranker?: Partial<RankerOptions>;
}

export interface RecallResult {
  id: string;
  rev: number;
  type: string;
  scope: string;
  abstract: string;
  score: number;
  trust: Trust;
  status: string;
  valid_from: string;
  valid_to: string | null;
  recorded_at: string;
  handle: string;
  freshness: Freshness;
  provenance: string[];
  review: string;
  explain?: ScoreParts;
}

export interface ExcludedResult {
  id: string;
  rev: number;
  reason: ExclusionReason;
  detail: string;
  abstract?: string;
}

export interface RecallResponse {
  query: string;
  results: RecallResult[];
  excluded?: ExcludedResult[];
}

export async function recall(
  ctx: EngineContext,
  query: string,
  opts: RecallOptions = {},
): Promise<RecallResponse> {
  const limit = Math.max(1, Math.min(opts.limit ?? 10, 200));
  const now = ctx.clock().toISOString();
  const eligibility: Eligibility = {
    scopes: readableScopes(ctx.binding),
    asOf: opts.asOf ? toIso(opts.asOf, '--as-of') : now,
    knownAt: opts.knownAt ? toIso(opts.knownAt, '--known-at') : null,
    minTrust: opts.minTrust ?? 'untrusted',
    includeQuarantined: false,
  };
  const terms = queryTerms(query);
  const hits = await ctx.store.search({ terms, eligibility, limit: Math.max(50, limit * 5) });
  const best = new Map<string, { hit: (typeof hits)[number]; parts: ScoreParts }>();
  for (const hit of hits) {
    const parts = scoreCandidate({
      relevance: hit.relevance,
      weight: hit.weight,
      recordedAt: hit.view.recorded_at,
      trust: hit.view.trust,
      now,
    });
    const prior = best.get(hit.view.id);
    if (!prior || hit.view.rev > prior.hit.view.rev) best.set(hit.view.id, { hit, parts });
  }
  const ranked = [...best.values()]
    .sort((a, b) => b.parts.score - a.parts.score || (a.hit.view.id < b.hit.view.id ? -1 : 1))
    .slice(0, limit);
  const results: RecallResult[] = ranked.map(({ hit: { view: v }, parts }) => ({
    id: v.id,
    rev: v.rev,
    type: v.type,
    scope: v.scope,
    abstract: v.abstract,
    score: round(parts.score),
    trust: v.trust,
    status: v.state,
    valid_from: v.valid_from,
    valid_to: v.retire_kind === 'supersede' ? v.valid_to_eff : v.valid_to,
    recorded_at: v.recorded_at,
    handle: handle(v.id),
    freshness: v.source ? 'fresh' : 'unbound',
    provenance: v.provenance,
    review: v.review,
    ...(opts.explain ? { explain: roundParts(parts) } : {}),
  }));
  const response: RecallResponse = { query, results };
  if (opts.explain)
    response.excluded = await exclusionTrace(
      ctx,
      terms,
      eligibility,
      new Set(results.map((r) => r.id)),
    );
  if (opts.logUsage !== false && results.length > 0) {
    await ctx.store.appendUsage([
      {
        at: now,
        kind: 'recall',
        ids: results.map((r) => r.id),
        actor: opts.actor?.kind ?? 'human',
        query,
        scope: ctx.binding.project ?? 'global',
      },
    ]);
  }
  return response;
}

async function exclusionTrace(
  ctx: EngineContext,
  terms: ReturnType<typeof queryTerms>,
  eligibility: Eligibility,
  served: Set<string>,
): Promise<ExcludedResult[]> {
  const out: ExcludedResult[] = [];
  const seen = new Set<string>();
  for (const { view } of await ctx.store.nearest(terms, 40)) {
    const key = `${view.id}#${view.rev}`;
    if (served.has(view.id) || seen.has(key)) continue;
    seen.add(key);
    const reason = exclusionReason(view, eligibility);
    if (reason === null) continue; // eligible, just ranked below the limit
    // Another project's memory is named as excluded, but its text is not shown.
    const foreign = reason === 'other_scope';
    if (foreign && ctx.surface === 'agent') continue;
    out.push({
      id: view.id,
      rev: view.rev,
      reason,
      detail: describeExclusion(reason, view),
      ...(foreign || view.quarantine !== null ? {} : { abstract: view.abstract }),
    });
    if (out.length >= 20) break;
  }
  return out;
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;
const roundParts = (p: ScoreParts): ScoreParts => ({
  relevance: round(p.relevance),
  weight: round(p.weight),
  recency: round(p.recency),
  trust: round(p.trust),
  score: round(p.score),
});
