// The score a person and a threshold read: how much of the query a memory matches, on 0–1.
// The ranking model (ranking.ts) orders recall results by a raw BM25 × weight × recency × trust
// product whose size follows the store (idf and the average length grow with it); this measure
// is the one shown and compared with floors, and it reads nothing of the store: the query's
// terms and the memory's own fields only. So it is the same on both stores, and the same query
// scores the same memory alike on a store of three memories or of thousands.
import { BM25_K1, countTokens, weightedFrequency, type RankingModel } from './ranking.js';
import { indexText, queryShape, type QueryTerm } from './text.js';

/** A memory's fields as the index holds them: index tokens, space-separated (see indexText). */
export interface MatchFields {
  abstract: string;
  body: string;
  /** Type, tags and field values. */
  extra: string;
}

/** The fields a memory is matched on, as both stores index them (abstract, body, extra). */
export const matchFields = (v: {
  abstract: string;
  body: string;
  type: string;
  tags: readonly string[];
  fields: Readonly<Record<string, string>>;
}): MatchFields => ({
  abstract: indexText(v.abstract),
  body: indexText(v.body),
  extra: indexText([v.type, ...v.tags, ...Object.values(v.fields)].join(' ')),
});

/** BM25's term-frequency saturation without length normalisation: f(k1+1)/(f+k1). */
const saturation = (f: number): number => (f * (BM25_K1 + 1)) / (f + BM25_K1);

/**
 * One query term's match in a memory, 0–1: the saturation of its field-weighted frequency (the
 * model's field weights) against that of one occurrence in the abstract, capped at 1. Once in
 * the abstract (or as often elsewhere) counts fully; once in the body about 0.6; absent, 0.
 */
export function termMatch(tokens: readonly string[], fields: MatchFields, m: RankingModel): number {
  const f = weightedFrequency(
    [
      countTokens(fields.abstract, tokens),
      countTokens(fields.body, tokens),
      countTokens(fields.extra, tokens),
    ],
    m,
  );
  return f === 0 ? 0 : Math.min(1, saturation(f) / saturation(m.abstractWeight));
}

/**
 * The share of the query a memory matches, 0–1: the mean of termMatch over the query's distinct
 * search terms (the ones recall searches: stop words and framing words left out). 1: every term
 * is in the abstract; 0: none is anywhere. Vector-arm similarity is not part of it (see
 * `explain.fusion.similarity`).
 */
export function matchScore(
  terms: readonly QueryTerm[],
  fields: MatchFields,
  m: RankingModel,
): number {
  const { tokens } = queryShape(terms);
  if (tokens.length === 0) return 0;
  let sum = 0;
  for (const t of tokens) sum += termMatch(t, fields, m);
  return sum / tokens.length;
}
