// Ranking of eligible candidates: relevance × weight × recency × trust. Relevance comes from
// the index (BM25, higher is better); the other factors are bounded so relevance dominates.
import { trustRank, type Trust } from './types.js';

export interface ScoreParts {
  relevance: number;
  weight: number;
  recency: number;
  trust: number;
  score: number;
  /** With the vector arm on: relevance is the reciprocal-rank fusion of these ranks. */
  fusion?: FusionParts;
}

/** A candidate's 1-based rank in each arm (null: that arm did not find it). */
export interface FusionParts {
  lexical_rank: number | null;
  vector_rank: number | null;
  /** Cosine similarity to the query, when the vector arm found it. */
  similarity?: number;
}

const TRUST_FACTOR = [0.8, 1.0, 1.1, 1.2];
const RECENCY_HALF_LIFE_DAYS = 180;

// Recall scores many candidates against one `now`; parse it once.
let nowText = '';
let nowMs = 0;

export function scoreCandidate(input: {
  relevance: number;
  weight: number;
  recordedAt: string;
  trust: Trust;
  now: string;
}): ScoreParts {
  if (input.now !== nowText) {
    nowText = input.now;
    nowMs = Date.parse(input.now);
  }
  const ageDays = Math.max(0, (nowMs - Date.parse(input.recordedAt)) / 86_400_000);
  const recency = 0.85 + 0.15 * Math.pow(0.5, ageDays / RECENCY_HALF_LIFE_DAYS);
  const weight = Math.min(2, Math.max(0.25, input.weight));
  const trust = TRUST_FACTOR[trustRank(input.trust)] ?? 1;
  const score = input.relevance * weight * recency * trust;
  return { relevance: input.relevance, weight, recency, trust, score };
}

/** Switches of the lexical ranker; the bench's ablations turn them off one at a time. */
export interface RankerOptions {
  /** NEAR span for neighbouring query terms (0: no proximity boost). */
  proximity: number;
  /** Pseudo-relevance feedback: expand the query with words shared by the best matches. */
  prf: boolean;
  prfDocs: number;
  prfTerms: number;
  /** Weight of the feedback query's (max-normalised) score against the original's. */
  prfWeight: number;
  /** The feedback weight for a question that gathers several memories (see asksForSeveral). */
  prfGatherWeight: number;
  /** Boost memories whose valid_from falls in the period the query names ("last week"). */
  temporal: boolean;
  temporalBoost: number;
  /** Search the words a query is about: leave out its framing words (see FRAME_WORDS). */
  frame: boolean;
  /**
   * Share of the support of a memory's moment added to its relevance: the other matching
   * memories with the same valid_from (one event written as several memories), summed and
   * divided by the square root of their number (0: off).
   */
  moment: number;
}

export const DEFAULT_RANKER: RankerOptions = {
  proximity: 0,
  prf: true,
  prfDocs: 3,
  prfTerms: 10,
  prfWeight: 0.3,
  prfGatherWeight: 0.6,
  temporal: true,
  temporalBoost: 0.5,
  frame: true,
  moment: 0.25,
};

export function rankerOptions(over: Partial<RankerOptions> = {}): RankerOptions {
  return { ...DEFAULT_RANKER, ...over };
}

/** Feedback terms: words of the best matches found in at least two of them, most frequent first. */
export function feedbackTerms(
  docs: readonly string[][],
  exclude: ReadonlySet<string>,
  stop: ReadonlySet<string>,
  max: number,
): string[] {
  const count = new Map<string, number>();
  const docFreq = new Map<string, number>();
  for (const tokens of docs) {
    const seen = new Set<string>();
    for (const w of tokens) {
      if (w.length < 3 || /^\d+$/.test(w) || stop.has(w) || exclude.has(w)) continue;
      count.set(w, (count.get(w) ?? 0) + 1 / Math.max(1, Math.sqrt(tokens.length)));
      if (!seen.has(w)) docFreq.set(w, (docFreq.get(w) ?? 0) + 1);
      seen.add(w);
    }
  }
  const need = Math.min(2, docs.length);
  return [...count.entries()]
    .filter(([w]) => (docFreq.get(w) ?? 0) >= need)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, max)
    .map(([w]) => w);
}

/** A candidate's memory, moment (valid_from) and relevance: what moment support needs. */
export interface MomentCandidate {
  id: string;
  validFrom: string;
  relevance: number;
}

/**
 * Relevance with the support of the candidate's moment: `share` × the summed relevance of the
 * other memories matched at the same valid_from, over the square root of their number. An
 * event several of whose memories match the query is likelier the one asked about than an
 * event with one incidental match; the square root keeps a long event's many weak matches from
 * outweighing a strong one. Revisions of the candidate's own memory give it no support.
 */
export function momentSupport(cands: readonly MomentCandidate[], share: number): number[] {
  // Per moment: each memory's best relevance.
  const byMoment = new Map<string, Map<string, number>>();
  for (const c of cands) {
    let m = byMoment.get(c.validFrom);
    if (!m) byMoment.set(c.validFrom, (m = new Map()));
    m.set(c.id, Math.max(m.get(c.id) ?? 0, c.relevance));
  }
  const totals = new Map<string, { sum: number; n: number }>();
  for (const [moment, m] of byMoment) {
    let sum = 0;
    for (const r of m.values()) sum += r;
    totals.set(moment, { sum, n: m.size });
  }
  return cands.map((c) => {
    const t = totals.get(c.validFrom)!;
    if (t.n < 2) return c.relevance;
    const others = t.sum - byMoment.get(c.validFrom)!.get(c.id)!;
    return c.relevance + (share * others) / Math.sqrt(t.n - 1);
  });
}
