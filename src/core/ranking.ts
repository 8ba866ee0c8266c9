// Ranking of eligible candidates: relevance × weight × recency × trust. Relevance comes from
// the index (BM25, higher is better); the other factors are bounded so relevance dominates.
import { trustRank, type Trust } from './types.js';

export interface ScoreParts {
  relevance: number;
  weight: number;
  recency: number;
  trust: number;
  score: number;
}

const TRUST_FACTOR = [0.8, 1.0, 1.1, 1.2];
const RECENCY_HALF_LIFE_DAYS = 180;

export function scoreCandidate(input: {
  relevance: number;
  weight: number;
  recordedAt: string;
  trust: Trust;
  now: string;
}): ScoreParts {
  const ageDays = Math.max(0, (Date.parse(input.now) - Date.parse(input.recordedAt)) / 86_400_000);
  const recency = 0.85 + 0.15 * Math.pow(0.5, ageDays / RECENCY_HALF_LIFE_DAYS);
  const weight = Math.min(2, Math.max(0.25, input.weight));
  const trust = TRUST_FACTOR[trustRank(input.trust)] ?? 1;
  const score = input.relevance * weight * recency * trust;
  return { relevance: input.relevance, weight, recency, trust, score };
}

/** Switches of the lexical ranker (all on by default); the bench's ablations turn them off. */
export interface RankerOptions {
  placeholder: boolean;
}

export const DEFAULT_RANKER: RankerOptions = { placeholder: true };

export function rankerOptions(over: Partial<RankerOptions> = {}): RankerOptions {
  return { ...DEFAULT_RANKER, ...over };
}
