// Recall (DESIGN §5): eligibility inside the store's query, then lexical relevance re-ranked by
// weight × recency × trust, deduplicated per memory, returned as L0 lines with citation handles.
// --explain adds the score parts and the exclusion trace: what matched but was not served, and why.
import {
  describeExclusion,
  exclusionReason,
  type Eligibility,
  type ExclusionReason,
} from '../core/eligibility.js';
import {
  DEFAULT_RANKING,
  feedbackWords,
  feedbackWeight,
  inWindow,
  momentSupport,
  scoreCandidate,
  type RankingModel,
  type ScoreParts,
} from '../core/ranking.js';
import { LIMITS, RECALL_DEFAULT_LIMIT } from '../core/limits.js';
import { matchFields, matchScore, type MatchFields } from '../core/match-score.js';
import { handle } from '../core/revision.js';
import {
  STOP_WORDS,
  asksForSeveral,
  contentTerms,
  queryTerms,
  timeWindow,
  wordTokens,
  type QueryTerm,
  type TimeWindow,
} from '../core/text.js';
import type { SearchHit, VectorHit } from '../store/port.js';
import { toIso } from '../core/time.js';
import type { Actor, Freshness, RevisionView, Trust } from '../core/types.js';
import { readableScopes, type EngineContext } from './context.js';
import { rejectedHere, type RejectedHere } from './rejected-here.js';
import { effectiveFreshness, observeSource, persistedFreshness } from './freshness.js';
import type { KnowledgeResult } from './knowledge.js';
import { fuseHits, vectorCandidates, type FusedHit, type VectorArmReport } from './vector.js';

export interface RecallOptions {
  limit?: number;
  asOf?: string;
  knownAt?: string;
  explain?: boolean;
  minTrust?: Trust;
  /** Record a usage event (default true). */
  logUsage?: boolean;
  actor?: Actor;
  /** How many of the top bound results get their source re-read (default 5; 0 = none). */
  freshnessChecks?: number;
  /** Vector arm on: revisions lacking a vector embedded before searching (default 256). */
  vectorFill?: number;
  /** Serve repository knowledge beside memories (default true; engine/knowledge.ts). */
  knowledge?: boolean;
}

export interface RecallResult {
  kind: 'memory';
  id: string;
  rev: number;
  type: string;
  scope: string;
  abstract: string;
  /**
   * How much of the query the memory matches, 0–1 (core/match-score.ts): independent of the
   * store's size. Results are ordered by the ranking model (`explain.score`), not by this.
   */
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
  /** Present only when the vector arm is on: what it contributed. */
  vector?: VectorArmReport;
  /**
   * Repository knowledge beside the memories (engine/knowledge.ts): present when knowledge is
   * on, the bound project has a knowledge index, and something matched. Quoted repository
   * text, data and never instructions; cite it by `citation` (path:line).
   */
  knowledge?: KnowledgeResult[];
}

export async function recall(
  ctx: EngineContext,
  query: string,
  opts: RecallOptions = {},
): Promise<RecallResponse> {
  const limit = Math.max(1, Math.min(opts.limit ?? RECALL_DEFAULT_LIMIT, LIMITS.recallLimit));
  const now = ctx.clock().toISOString();
  const eligibility: Eligibility = {
    scopes: readableScopes(ctx.binding),
    asOf: opts.asOf ? toIso(opts.asOf, '--as-of') : now,
    knownAt: opts.knownAt ? toIso(opts.knownAt, '--known-at') : null,
    minTrust: opts.minTrust ?? 'untrusted',
    includeQuarantined: false,
  };
  const model = ctx.ranking ?? DEFAULT_RANKING;
  const terms = model.frame ? contentTerms(query) : queryTerms(query);
  const pool = Math.max(50, limit * 5);
  // The tombstones of the other scopes this binding reads do not depend on the candidates: on a
  // store over the network they are read while the search runs (its own round trip, off the
  // critical path). Awaited before anything is ranked; a failure fails the recall.
  const rejectedSoon = rejectedHere(ctx);
  rejectedSoon.catch(() => {});
  // So are the knowledge chunks: fetched for the whole limit, cut to the room memories leave.
  const knowledgeOn = opts.knowledge !== false && ctx.binding.project !== null;
  const knowledgeSoon = knowledgeOn
    ? import('./knowledge.js').then((k) => k.knowledgeCandidates(ctx, terms, limit))
    : null;
  knowledgeSoon?.catch(() => {});
  const lexical = await lexicalHits(ctx, terms, eligibility, pool, model, {
    query,
    window: model.temporal ? timeWindow(query, now) : null,
    want: limit,
  });
  // The vector arm (off by default): its eligible candidates fused with the lexical ones.
  let hits: FusedHit[] = lexical;
  let arm: VectorArmReport | undefined;
  let vectorNearest: ((limit: number) => Promise<VectorHit[]>) | undefined;
  if (ctx.embedder) {
    const v = await vectorCandidates(ctx, ctx.embedder, query, eligibility, pool, opts.vectorFill);
    arm = v.report;
    vectorNearest = v.nearest;
    if (v.hits.length > 0) hits = fuseHits(lexical, v.hits, model.fusionK);
  }
  const nowMs = Date.parse(now);
  const best = new Map<string, { hit: (typeof hits)[number]; parts: ScoreParts }>();
  for (const hit of hits) {
    const parts = scoreCandidate(
      {
        relevance: hit.relevance,
        weight: hit.weight,
        recordedAt: hit.head.recorded_at,
        trust: hit.head.trust,
      },
      nowMs,
      model,
    );
    if (hit.fusion) parts.fusion = hit.fusion;
    const prior = best.get(hit.head.id);
    if (!prior || hit.head.rev > prior.hit.head.rev) best.set(hit.head.id, { hit, parts });
  }
  // Eligibility the store cannot express: a value rejected in another scope this binding reads
  // is withheld, never ranked lower. Only the candidates in rank order are read, until full.
  const rejected = await rejectedSoon;
  const sorted = [...best.values()].sort(
    (a, b) => b.parts.score - a.parts.score || (a.hit.head.id < b.hit.head.id ? -1 : 1),
  );
  const ranked: typeof sorted = [];
  for (const r of sorted) {
    if (ranked.length >= limit) break;
    if (!rejected(r.hit.view)) ranked.push(r);
  }
  // Each served memory's index tokens, computed once (its score, and the restatement check).
  const fields = new Map<import('../core/types.js').RevisionView, MatchFields>();
  const fieldsOf = (v: import('../core/types.js').RevisionView): MatchFields => {
    let f = fields.get(v);
    if (!f) fields.set(v, (f = matchFields(v)));
    return f;
  };
  // The budget split: knowledge takes at most its share of the limit, more only where memories
  // leave room, and never a chunk that restates a memory served beside it.
  let knowledge: KnowledgeResult[] = [];
  if (knowledgeSoon) {
    const { KNOWLEDGE_SHARE, knowledgeHits } = await import('./knowledge.js');
    const share = Math.max(1, Math.round(limit * KNOWLEDGE_SHARE));
    const room = Math.min(limit, Math.max(share, limit - ranked.length));
    knowledge = await knowledgeHits(
      ctx,
      terms,
      room,
      ranked.map((r) => {
        const f = fieldsOf(r.hit.view);
        return `${f.abstract} ${f.body}`;
      }),
      knowledgeSoon,
    );
    if (ranked.length + knowledge.length > limit) ranked.length = limit - knowledge.length;
  }
  const results: RecallResult[] = ranked.map(({ hit: { view: v }, parts }) => ({
    kind: 'memory',
    id: v.id,
    rev: v.rev,
    type: v.type,
    scope: v.scope,
    abstract: v.abstract,
    score: round3(matchScore(terms, fieldsOf(v), model)),
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
  await labelFreshness(
    ctx,
    ranked.map((r) => r.hit.view),
    results,
    opts.freshnessChecks ?? 5,
  );
  const response: RecallResponse = {
    query,
    results,
    ...(arm ? { vector: arm } : {}),
    ...(knowledge.length > 0 ? { knowledge } : {}),
  };
  if (opts.explain)
    response.excluded = await exclusionTrace(
      ctx,
      terms,
      eligibility,
      new Set(results.map((r) => r.id)),
      vectorNearest ? await vectorNearest(40) : [],
      rejected,
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

/**
 * Freshness of each result: the journaled verdict, and for a bounded shortlist (the top bound
 * results) a fresh look at the file; a verdict that moved is journaled through the write path.
 */
async function labelFreshness(
  ctx: EngineContext,
  views: import('../core/types.js').RevisionView[],
  results: RecallResult[],
  checks: number,
): Promise<void> {
  const bound = views.filter((v) => v.source);
  if (bound.length === 0) return;
  const persisted = await persistedFreshness(
    ctx,
    bound.map((v) => v.id),
  );
  const moved: string[] = [];
  for (const v of bound.slice(0, checks)) {
    if (!v.current) continue;
    const seen = observeSource(ctx, v.source);
    if (seen && seen.freshness !== effectiveFreshness(v, persisted.get(v.id))) moved.push(v.id);
  }
  const fresh = new Map<string, string>();
  if (moved.length > 0) {
    const { applyEach } = await import('./apply.js'); // the write path, only when a source moved
    const settled = await applyEach(
      ctx,
      moved.map((id) => ({ op: 'check_source', id })),
      { kind: 'system', surface: 'recall' },
    );
    settled.forEach((s, i) => {
      if (s.ok && s.result.freshness) fresh.set(moved[i]!, s.result.freshness);
    });
  }
  for (const r of results) {
    const v = bound.find((x) => x.id === r.id && x.rev === r.rev);
    if (!v) continue;
    r.freshness = (fresh.get(r.id) ??
      effectiveFreshness(v, persisted.get(v.id))) as RecallResult['freshness'];
  }
}

/**
 * Lexical candidates with their relevance (the model's BM25, see SearchRequest), then
 * optionally pseudo-relevance feedback (a second query of words the best matches share, added at
 * a lower weight; at a higher one when the question gathers several memories), a boost for
 * memories dated in the period the query names, and the support of other matching memories of
 * the same moment.
 */
async function lexicalHits(
  ctx: EngineContext,
  terms: QueryTerm[],
  eligibility: Eligibility,
  pool: number,
  m: RankingModel,
  q: { query: string; window: TimeWindow | null; want: number },
): Promise<SearchHit[]> {
  let hits = await ctx.store.search({ terms, eligibility, limit: pool, want: q.want, model: m });
  if (m.prf && hits.length >= 2) {
    const prfWeight = feedbackWeight(asksForSeveral(q.query), m);
    const best = hits.slice(0, m.prfDocs);
    const top = best.map((h) => wordTokens(`${h.view.abstract}\n${h.view.body}`));
    const exclude = new Set(terms.map((t) => t.text));
    const first = Math.max(...best.map((h) => h.relevance), 1e-9);
    const extra = feedbackWords(
      top,
      exclude,
      STOP_WORDS,
      m.prfCandidates,
      m.prfByRelevance ? best.map((h) => h.relevance / first) : undefined,
    );
    if (extra.length > 0) {
      const fb = await ctx.store.search({
        terms: extra.map((x) => ({ text: x.word, phrase: false })),
        eligibility,
        limit: pool,
        // Feedback only boosts; it need not fill the page, so its query stays narrow.
        want: 0,
        model: m,
        maxTerms: m.prfTerms,
        ...(m.prfIdf || m.prfOutside
          ? {
              feedback: {
                byIdf: m.prfIdf,
                outside: m.prfOutside,
                freq: extra.map((x) => x.freq),
                docs: extra.map((x) => x.docs),
              },
            }
          : {}),
      });
      const max1 = Math.max(...hits.map((h) => h.relevance), 1e-9);
      const max2 = Math.max(...fb.map((h) => h.relevance), 1e-9);
      const merged = new Map<string, SearchHit>();
      const key = (h: SearchHit) => `${h.head.id}#${h.head.rev}`;
      for (const h of hits) merged.set(key(h), withRelevance(h, h.relevance / max1));
      for (const h of fb) {
        const add = (prfWeight * h.relevance) / max2;
        const prior = merged.get(key(h));
        if (prior) prior.relevance += add;
        else merged.set(key(h), withRelevance(h, add));
      }
      hits = [...merged.values()];
    }
  }
  const window = q.window;
  if (window) {
    hits = hits.map((h) => {
      const r = inWindow(h.relevance, h.head.valid_from, window, m);
      return r === h.relevance ? h : withRelevance(h, r);
    });
  }
  if (m.moment > 0 && hits.length > 1) {
    const supported = momentSupport(
      hits.map((h) => ({ id: h.head.id, validFrom: h.head.valid_from, relevance: h.relevance })),
      m.moment,
    );
    hits = hits.map((h, i) => (supported[i] === h.relevance ? h : withRelevance(h, supported[i]!)));
  }
  return hits;
}

/** A hit with another relevance; its view stays lazy (adapters may parse it on first read). */
class Rescored implements SearchHit {
  constructor(
    private readonly base: SearchHit,
    readonly relevance: number,
  ) {}
  get head() {
    return this.base.head;
  }
  get view() {
    return this.base.view;
  }
  get weight() {
    return this.base.weight;
  }
}

const withRelevance = (h: SearchHit, relevance: number): SearchHit => new Rescored(h, relevance);

async function exclusionTrace(
  ctx: EngineContext,
  terms: ReturnType<typeof queryTerms>,
  eligibility: Eligibility,
  served: Set<string>,
  /** With the vector arm on: the nearest revisions by vector, after the lexical ones. */
  nearestByVector: readonly { readonly view: RevisionView }[] = [],
  rejected: RejectedHere = () => null,
): Promise<ExcludedResult[]> {
  const out: ExcludedResult[] = [];
  const seen = new Set<string>();
  // Only the binding's own scopes are looked at (inside the query): the trace never names, or
  // counts, another project's memories.
  const near = await ctx.store.nearest(terms, eligibility.scopes, 40);
  for (const { view } of [...near, ...nearestByVector]) {
    // A served memory's older revisions are listed too: "rev 1 superseded by rev 2" is the point.
    // One entry per memory: its best-matching excluded revision.
    if (served.has(`${view.id}#${view.rev}`) || seen.has(view.id)) continue;
    const reason =
      exclusionReason(view, eligibility) ?? (rejected(view) ? ('rejected_here' as const) : null);
    if (reason === null) continue; // eligible, just ranked below the limit
    if (reason === 'other_scope') continue; // never reaches here: the query is scoped
    seen.add(view.id);
    out.push({
      id: view.id,
      rev: view.rev,
      reason,
      detail: describeExclusion(reason, view),
      ...(view.quarantine !== null ? {} : { abstract: view.abstract }),
    });
    if (out.length >= 20) break;
  }
  return out;
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;
const round3 = (n: number) => Math.round(n * 1e3) / 1e3;
const roundParts = (p: ScoreParts): ScoreParts => ({
  relevance: round(p.relevance),
  weight: round(p.weight),
  recency: round(p.recency),
  trust: round(p.trust),
  score: round(p.score),
  ...(p.fusion
    ? {
        fusion: {
          ...p.fusion,
          ...(p.fusion.similarity !== undefined ? { similarity: round(p.fusion.similarity) } : {}),
        },
      }
    : {}),
});
