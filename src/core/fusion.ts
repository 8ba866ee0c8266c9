// Reciprocal rank fusion of the lexical and the vector candidate lists (Cormack et al., 2009):
// each list contributes 1 / (k + rank), so only ranks matter and neither arm's score scale can
// swamp the other. Both lists hold eligible candidates only; fusion never adds a candidate that
// neither arm returned.

import { DEFAULT_RANKING } from './ranking.js';

/** The usual constant: large enough that the head of one list cannot drown the other. */
export const RRF_K = DEFAULT_RANKING.fusionK;

export interface FusedRank {
  /** 1-based rank in the lexical list, or null when only the vector arm found it. */
  lexical: number | null;
  /** 1-based rank in the vector list, or null when only the lexical arm found it. */
  vector: number | null;
  /** The fused relevance: the sum of 1 / (k + rank) over the lists that hold it. */
  score: number;
}

/**
 * Fuses two best-first lists of keys. Returns every key of either list with its ranks and fused
 * score, best first (ties keep the lexical order, then the vector order).
 */
export function fuseRanks(
  lexical: readonly string[],
  vector: readonly string[],
  k = RRF_K,
): Map<string, FusedRank> {
  const out = new Map<string, FusedRank>();
  lexical.forEach((key, i) => {
    if (!out.has(key)) out.set(key, { lexical: i + 1, vector: null, score: 1 / (k + i + 1) });
  });
  vector.forEach((key, i) => {
    const prior = out.get(key);
    if (prior && prior.vector !== null) return;
    const add = 1 / (k + i + 1);
    if (prior) {
      prior.vector = i + 1;
      prior.score += add;
    } else out.set(key, { lexical: null, vector: i + 1, score: add });
  });
  return new Map([...out.entries()].sort((a, b) => b[1].score - a[1].score));
}
