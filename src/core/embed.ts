// The embedder port of the optional vector arm, what text of a revision is embedded, and the one
// embedder that needs nothing: hashed character n-grams, deterministic, so tests and CI need no
// model. Stored vectors are keyed by `vectorKey` (model identity + dimension), so vectors of
// another model, or of the same model at another dimension, are never compared.
import { sha256 } from './hash.js';
import type { RevisionView } from './types.js';

export interface Embedder {
  /** Model identity: provider, model and where it runs (endpoint or directory). */
  readonly model: string;
  /** Output dimension when known before the first call (hash, or a configured dimension). */
  readonly dim: number | null;
  /** One vector per text, in order. Throws on any failure. */
  embed(texts: string[]): Promise<Float32Array[]>;
  /**
   * Vector candidates less similar (cosine) than this are dropped, so a query nothing matches
   * still finds nothing; the useful floor depends on the model (default 0: no floor).
   */
  minSimilarity?: number;
}

/** The storage key of vectors from `model` at `dim`: the arm never mixes two of them. */
export const vectorKey = (model: string, dim: number): string => `${model}#${dim}`;

/** Remote models take a few thousand tokens; beyond this a revision is embedded by its head. */
export const MAX_EMBED_CHARS = 8000;

/** The text of a revision that is embedded: its abstract, tags and body (immutable per revision). */
export function embedText(v: Pick<RevisionView, 'abstract' | 'body' | 'tags'>): string {
  const tags = v.tags.length > 0 ? `\n${v.tags.join(' ')}` : '';
  return `${v.abstract}${tags}\n\n${v.body}`.slice(0, MAX_EMBED_CHARS);
}

/** Content hash of an embedded text: the cache key that lets rebuild reuse a vector. */
export const embedHash = (text: string): string => sha256(text).slice(0, 32);

/**
 * Hashed character n-grams (3- and 4-grams of each lower-cased word, padded with spaces),
 * signed feature hashing into `dim` buckets, log term frequency, L2-normalised. It knows no
 * meaning — it is a spelling-level similarity that lets the arm be tested end to end.
 */
export function hashEmbedder(dim = 256): Embedder {
  if (!Number.isInteger(dim) || dim < 8 || dim > 4096)
    throw new RangeError(`hash embedder dimension must be an integer in 8..4096, not ${dim}`);
  return {
    model: 'hash:ngram3-4',
    dim,
    embed: async (texts) => texts.map((t) => hashVector(t, dim)),
    // Unrelated texts share a few n-grams by chance (cosine ≈ 0–0.15 at 256 dimensions).
    minSimilarity: 0.2,
  };
}

export function hashVector(text: string, dim: number): Float32Array {
  const counts = new Map<number, number>();
  for (const word of text
    .toLowerCase()
    .normalize('NFKC')
    .match(/[\p{L}\p{N}]+/gu) ?? []) {
    // Code units, not code points: a surrogate pair is hashed as its two halves, consistently.
    const padded = ` ${word} `;
    for (const n of [3, 4]) {
      for (let i = 0; i + n <= padded.length; i++) {
        let h = 0x811c9dc5;
        for (let j = i; j < i + n; j++) h = Math.imul(h ^ padded.charCodeAt(j), 0x01000193);
        h >>>= 0;
        counts.set(h, (counts.get(h) ?? 0) + 1);
      }
    }
  }
  const v = new Float32Array(dim);
  for (const [h, c] of counts) {
    const sign = h & 0x80000000 ? -1 : 1;
    v[h % dim]! += sign * (1 + Math.log(c));
  }
  return normalise(v);
}

export function normalise(v: Float32Array): Float32Array {
  let s = 0;
  for (const x of v) s += x * x;
  if (s === 0) return v;
  const inv = 1 / Math.sqrt(s);
  for (let i = 0; i < v.length; i++) v[i]! *= inv;
  return v;
}
