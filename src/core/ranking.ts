// The ranking model, defined once: BM25 over the index tokens (field weights, rare-term
// narrowing), pseudo-relevance feedback, the time-window and moment boosts, and the re-ranking
// relevance × weight × recency × trust (bounded, so relevance dominates). Named parameters in one
// value (RankingModel) and pure functions; the stores only produce candidates and the counts
// BM25 reads (features), and fusion with the vector arm is core/fusion.ts.
import { firstK } from './top-k.js';
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

/**
 * The ranking model: every parameter of lexical relevance and of the re-ranking around it, as
 * one value. The engine is given one at creation (the composition root passes DEFAULT_RANKING;
 * the benchmark harness passes variants for its ablations); the adapters read none of it except
 * what the request hands them (field weights, narrowing).
 */
export interface RankingModel {
  /** BM25 field weights: a query word in the abstract counts this many times one in the body. */
  abstractWeight: number;
  bodyWeight: number;
  /** Type, tags and field values. */
  extraWeight: number;
  /**
   * Rare-term narrowing: the candidate query keeps the rarest terms whose document frequencies
   * sum to at most each budget in turn, widening until enough eligible rows are found, finally
   * every term. A query made only of common words never scores every row that holds one.
   */
  narrowBudgets: readonly number[];
  /** Best rare-term matches re-scored for the left-out common terms (at least). */
  narrowCandidates: number;
  /** What a left-out (narrowed-away) term adds to a narrowed candidate's score: see leftOutScore. */
  leftOut: LeftOut;
  /** Pseudo-relevance feedback: expand the query with words shared by the best matches. */
  prf: boolean;
  prfDocs: number;
  /** Feedback terms searched: the first this many of the offered ones that weigh (termsThatWeigh). */
  prfTerms: number;
  /**
   * Words the best matches share offered to the feedback search, most frequent first; the store
   * searches the first prfTerms that weigh (termsThatWeigh). At prfTerms (the default) a word in
   * over half the store is dropped and its place stays empty — the ranking of before, where it
   * was searched and added nothing. Above prfTerms its place goes to the next shared word that
   * weighs: LoCoMo dev recall@10 0.7652 -> 0.7688 at 30, but LongMemEval dev recall_any@5
   * 0.9856 -> 0.9784 (bench/NOTES.md), so not the default.
   */
  prfCandidates: number;
  /**
   * Choose the searched feedback words by their frequency in the best matches × their idf in the
   * store (RM3 / Rocchio term selection) instead of by frequency alone (termsThatWeigh). Only
   * changes anything with prfCandidates above prfTerms. Off: bench/NOTES.md, "The ranker".
   */
  prfIdf: boolean;
  /** Leave out of the feedback search a word no row outside the best matches holds. */
  prfOutside: boolean;
  /** Count a best match's words in proportion to its relevance (a relevance model, RM1/RM3). */
  prfByRelevance: boolean;
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
  /** Recency: floor + (1 − floor) · 0.5^(age / half-life). */
  recencyHalfLifeDays: number;
  recencyFloor: number;
  /** Usage-derived weight (feedback, citations), clamped to [weightMin, weightMax]. */
  weightMin: number;
  weightMax: number;
  /** Factor per trust level, untrusted … verified. */
  trustFactors: readonly number[];
  /** Reciprocal-rank fusion constant of the vector arm (core/fusion.ts). */
  fusionK: number;
}

/**
 * How a left-out term counts toward a narrowed candidate (leftOutScore): `presence`, its idf
 * times the heaviest field weight holding it; `saturated` (the default), BM25 of one occurrence
 * in that field at the average length — capped as a kept term's score is, where presence let a
 * left-out common word outweigh any kept one (4 × idf in the abstract against at most 2.2 × idf); `bm25`, its exact BM25 from its counts and the
 * candidate's length (the narrowed cut then ranks as the unnarrowed query would).
 */
export const LEFT_OUT = ['presence', 'saturated', 'bm25'] as const;
export type LeftOut = (typeof LEFT_OUT)[number];

/**
 * BM25's term-frequency saturation and length normalisation. Fixed, not model parameters: the
 * embedded index orders candidates with FTS5's bm25(), which has these two built in.
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/** An IDF at or below zero (a term in over half the rows) still counts this much. */
export const BM25_IDF_FLOOR = 1e-6;

export const DEFAULT_RANKING: RankingModel = Object.freeze({
  abstractWeight: 4,
  bodyWeight: 1,
  extraWeight: 2,
  narrowBudgets: Object.freeze([150, 800, 3000, 20000, Infinity]),
  narrowCandidates: 100,
  leftOut: 'saturated',
  prf: true,
  prfDocs: 3,
  prfTerms: 10,
  prfCandidates: 10,
  prfIdf: false,
  prfOutside: false,
  prfByRelevance: false,
  prfWeight: 0.3,
  prfGatherWeight: 0.6,
  temporal: true,
  temporalBoost: 0.5,
  frame: true,
  moment: 0.25,
  recencyHalfLifeDays: 180,
  recencyFloor: 0.85,
  weightMin: 0.25,
  weightMax: 2,
  trustFactors: Object.freeze([0.8, 1.0, 1.1, 1.2]),
  fusionK: 60,
});

/** The default model with some parameters changed (the benchmark harness's variants). */
export function rankingModel(over: Partial<RankingModel> = {}): RankingModel {
  return Object.freeze({ ...DEFAULT_RANKING, ...over });
}

/** The re-ranking of one candidate: relevance × weight × recency × trust (`nowMs`: Date.parse(now)). */
export function scoreCandidate(
  input: { relevance: number; weight: number; recordedAt: string; trust: Trust },
  nowMs: number,
  model: RankingModel = DEFAULT_RANKING,
): ScoreParts {
  const ageDays = Math.max(0, (nowMs - Date.parse(input.recordedAt)) / 86_400_000);
  const recency =
    model.recencyFloor +
    (1 - model.recencyFloor) * Math.pow(0.5, ageDays / model.recencyHalfLifeDays);
  const weight = Math.min(model.weightMax, Math.max(model.weightMin, input.weight));
  const trust = model.trustFactors[trustRank(input.trust)] ?? 1;
  const score = input.relevance * weight * recency * trust;
  return { relevance: input.relevance, weight, recency, trust, score };
}

// ---- lexical relevance: BM25 over the index tokens -----------------------------------------

/** A term's occurrences in one candidate, per field (abstract, body, extra). */
export type FieldCounts = readonly [abstract: number, body: number, extra: number];

/** What BM25 needs of the whole store (every revision, as the index counts them). */
export interface CorpusStats {
  /** Rows (revisions) in the index. */
  rows: number;
  /** Tokens over all rows and fields. */
  tokens: number;
}

/** What BM25 needs of one candidate: its length and each query term's counts. */
export interface LexicalFeatures {
  /** Tokens in the candidate, over all fields. */
  length: number;
  /** Per query term (the request's order): occurrences per field. */
  tf: readonly FieldCounts[];
}

/** A term's inverse document frequency: ln((N − df + ½)/(df + ½)), floored above zero. */
export function bm25Idf(rows: number, df: number): number {
  const idf = Math.log((rows - df + 0.5) / (df + 0.5));
  return idf <= 0 ? BM25_IDF_FLOOR : idf;
}

/** A term's field-weighted frequency in a candidate (the weights multiply the counts). */
export const weightedFrequency = (tf: FieldCounts, m: RankingModel): number =>
  tf[0] * m.abstractWeight + tf[1] * m.bodyWeight + tf[2] * m.extraWeight;

/**
 * One term's BM25 contribution to a candidate: idf · f(k1+1) / (f + k1(1 − b + b·len/avglen)),
 * f the field-weighted frequency, len the candidate's tokens over all fields (FTS5's bm25()
 * computes exactly this for each phrase of a MATCH and sums them).
 */
export function bm25Term(freq: number, length: number, stats: CorpusStats, idf: number): number {
  if (freq === 0) return 0;
  const avg = stats.tokens / Math.max(1, stats.rows);
  // In FTS5's order of operations, so both compute the same double.
  return idf * ((freq * (BM25_K1 + 1)) / (freq + BM25_K1 * (1 - BM25_B + (BM25_B * length) / avg)));
}

/** A candidate's BM25 relevance over the terms `which` (indices into its tf; default all). */
export function bm25(
  f: LexicalFeatures,
  idf: readonly number[],
  stats: CorpusStats,
  m: RankingModel,
  which?: readonly number[],
): number {
  let score = 0;
  if (which)
    for (const i of which)
      score += bm25Term(weightedFrequency(f.tf[i]!, m), f.length, stats, idf[i]!);
  else
    for (let i = 0; i < f.tf.length; i++)
      score += bm25Term(weightedFrequency(f.tf[i]!, m), f.length, stats, idf[i]!);
  return score;
}

/**
 * Whether a term can raise a score: its IDF is above the floor, i.e. it is in fewer than half
 * the rows (ln((N − df + ½)/(df + ½)) > 0). A phrase always can (its rows are not counted).
 */
export const termWeighs = (rows: number, df: number, phrase: boolean): boolean =>
  phrase || Math.log((rows - df + 0.5) / (df + 0.5)) > 0;

/**
 * How the feedback search chooses its words (SearchRequest.feedback), per offered term: `freq`,
 * its frequency in the best matches (feedbackWords), and `docs`, how many of them hold it.
 */
export interface FeedbackChoice {
  /** Rank the words that weigh by freq × idf (RM3 / Rocchio term selection), not by offer order. */
  byIdf: boolean;
  /** Pass over a word no row outside the best matches holds (df ≤ docs): it finds nothing new. */
  outside: boolean;
  freq: readonly number[];
  docs: readonly number[];
}

/**
 * A search capped at `max` terms (the feedback query, SearchRequest.maxTerms): of the terms that
 * weigh (termWeighs), the first `max` in the request's order — or, choosing by idf, the `max`
 * with the highest frequency × idf (ties to the earlier term), in the request's order. A word in
 * over half the store adds BM25_IDF_FLOOR to a score, nothing, and would take the place of one
 * that can tell the rows apart. Indices into the request's terms; null when every term is kept.
 */
export function termsThatWeigh(
  df: readonly number[],
  phrase: readonly boolean[],
  rows: number,
  max: number,
  choice?: FeedbackChoice,
): number[] | null {
  const weighing: number[] = [];
  for (let i = 0; i < df.length; i++)
    if (
      termWeighs(rows, df[i]!, phrase[i]!) &&
      !(choice?.outside && !phrase[i] && df[i]! <= (choice.docs[i] ?? 0))
    )
      weighing.push(i);
  let kept: number[];
  if (choice?.byIdf) {
    // A phrase's rows are not counted: it ranks as the rarest word would (idf of df 0).
    const value = (i: number) => (choice.freq[i] ?? 0) * bm25Idf(rows, phrase[i] ? 0 : df[i]!);
    kept = weighing
      .map((i) => ({ i, v: value(i) }))
      .sort((a, b) => b.v - a.v || a.i - b.i)
      .slice(0, max)
      .map((x) => x.i)
      .sort((a, b) => a - b);
  } else kept = weighing.slice(0, max);
  return kept.length === df.length ? null : kept;
}

/**
 * The terms a narrowed candidate query keeps for a budget: the rarest whose document
 * frequencies sum to at most the budget (a phrase counts as rare: it is always kept), in the
 * request's order; null when every term fits (no narrowing).
 */
export function narrowTerms(
  df: readonly number[],
  phrase: readonly boolean[],
  budget: number,
): number[] | null {
  if (budget === Infinity) return null;
  const scored = df.map((d, i) => ({ i, df: phrase[i] ? 0 : d }));
  const total = scored.reduce((a, x) => a + x.df, 0);
  if (total <= budget) return null;
  scored.sort((a, b) => a.df - b.df || a.i - b.i);
  const kept: number[] = [];
  let sum = 0;
  for (const x of scored) {
    if (sum + x.df > budget) break;
    kept.push(x.i);
    sum += x.df;
  }
  return kept.sort((a, b) => a - b);
}

/**
 * Rare-term narrowing, the same on every store: the candidate queries to try in turn, each the
 * terms kept for one budget (null: every term). A store runs them in order and stops at the
 * first that finds `want` eligible candidates (the last, null, always stops); `want` 0
 * (feedback, which only boosts) tries the first budget only.
 */
export function narrowingPlan(
  df: readonly number[],
  phrase: readonly boolean[],
  want: number,
  m: RankingModel,
  rows = Infinity,
): (number[] | null)[] {
  const plan: (number[] | null)[] = [];
  let tried = -1;
  const budgets = want === 0 ? m.narrowBudgets.slice(0, 1) : m.narrowBudgets;
  for (const budget of budgets) {
    const kept = narrowTerms(df, phrase, budget);
    const n = kept ? kept.length : df.length;
    if (n === tried) continue; // the same query as the previous budget
    tried = n;
    if (kept && kept.length === 0) continue;
    // A narrowed query that cannot match `want` rows (its terms' rows, or the store, are fewer)
    // would be passed over anyway: not run at all. A phrase's rows are not counted: run it.
    if (kept && !kept.some((i) => phrase[i])) {
      const most = Math.min(
        rows,
        kept.reduce((a, i) => a + df[i]!, 0),
      );
      if (most < want) continue;
    }
    plan.push(kept);
    if (kept === null) break;
  }
  return plan;
}

/** Runs a narrowing plan: the first query that finds `want` candidates, else the last. */
export function firstEnough<R>(
  plan: readonly (number[] | null)[],
  want: number,
  run: (kept: number[] | null) => R[],
): R[] {
  let rows: R[] = [];
  for (const kept of plan) {
    rows = run(kept);
    if (rows.length >= want) break;
  }
  return rows;
}

/**
 * A left-out (common) term's share of a narrowed candidate's score, by the model's `leftOut`:
 * `presence` (default), its idf times the weight of the heaviest field holding it — as if it
 * occurred once there, unsaturated; `saturated`, BM25 of that one occurrence at the average
 * length; `bm25`, its BM25 from `tf` and the candidate's `length`. The first two read only its
 * presence, which keeps re-scoring a query of common words cheap.
 */
export function leftOutScore(
  tf: FieldCounts,
  idf: number,
  m: RankingModel,
  length: number,
  stats: CorpusStats,
): number {
  if (m.leftOut === 'bm25') return bm25Term(weightedFrequency(tf, m), length, stats, idf);
  let w = 0;
  if (tf[0] > 0) w = Math.max(w, m.abstractWeight);
  if (tf[1] > 0) w = Math.max(w, m.bodyWeight);
  if (tf[2] > 0) w = Math.max(w, m.extraWeight);
  if (w === 0) return 0;
  if (m.leftOut === 'saturated')
    return bm25Term(w, stats.tokens / Math.max(1, stats.rows), stats, idf);
  return w * idf;
}

/** The fields (abstract, body, extra) in the order of their weight, heaviest first. */
export const fieldsByWeight = (m: RankingModel): (0 | 1 | 2)[] =>
  ([0, 1, 2] as const)
    .map((f) => ({ f, w: [m.abstractWeight, m.bodyWeight, m.extraWeight][f]! }))
    .sort((a, b) => b.w - a.w || a.f - b.f)
    .map((x) => x.f);

/** How many rare-term matches a narrowed query re-scores for the rest (see narrowedSearch). */
export const narrowCut = (limit: number, m: RankingModel): number =>
  Math.max(limit * 2, m.narrowCandidates);

/** A ranked candidate: its key (ties go to the smaller id, then rev) and score. */
export interface Ranked {
  id: string;
  rev: number;
  score: number;
}

/** byScore on the parts (no objects to build per comparison). */
const rankedOrder = (sa: number, ia: string, ra: number, sb: number, ib: string, rb: number) =>
  sb - sa || (ia < ib ? -1 : ia > ib ? 1 : ra - rb);

/** Best first; ties by id, then rev (every store breaks ties the same way). */
export const byScore = (a: Ranked, b: Ranked): number =>
  rankedOrder(a.score, a.id, a.rev, b.score, b.id, b.rev);

/**
 * The candidate list the lexical arm hands on, from every eligible match of the candidate query
 * with its features: without narrowing, the best `limit` by BM25 over all terms; narrowed, the
 * best narrowCut by BM25 over the kept terms, plus each left-out term's leftOutScore, best
 * `limit`. The embedded index does the first cut inside SQL with FTS5's bm25() (the same
 * function).
 */
export function rankCandidates<C extends { id: string; rev: number; features: LexicalFeatures }>(
  cands: readonly C[],
  kept: readonly number[] | null,
  idf: readonly number[],
  stats: CorpusStats,
  m: RankingModel,
  limit: number,
): (C & { score: number })[] {
  // Scored in place; only the best few are copied out (byScore's order, without a full sort).
  const scores = cands.map((c) => bm25(c.features, idf, stats, m, kept ?? undefined));
  const before = (a: number, b: number) =>
    rankedOrder(scores[a]!, cands[a]!.id, cands[a]!.rev, scores[b]!, cands[b]!.id, cands[b]!.rev);
  const best = (k: number) =>
    firstK(cands.length, k, before).map((i) => ({ ...cands[i]!, score: scores[i]! }));
  if (!kept) return best(limit);
  const pool = best(narrowCut(limit, m));
  // The kept terms' sum, then the rest's (the embedded index adds them in this order too).
  const keptSet = new Set(kept);
  const rest = idf.flatMap((_, i) => (keptSet.has(i) ? [] : [i]));
  for (const c of pool)
    for (const i of rest)
      c.score += leftOutScore(c.features.tf[i]!, idf[i]!, m, c.features.length, stats);
  pool.sort(byScore);
  return pool.slice(0, limit);
}

/**
 * A token text's (space-separated index tokens, see indexText) occurrences of a term's tokens
 * as a run: a word's count, or a phrase's.
 */
export function countTokens(text: string, tokens: readonly string[]): number {
  if (tokens.length === 0 || text === '') return 0;
  const needle = tokens.join(' ');
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) {
    const end = i + needle.length;
    if (
      (i === 0 || text.charCodeAt(i - 1) === 32) &&
      (end === text.length || text.charCodeAt(end) === 32)
    )
      n++;
  }
  return n;
}

/** Whether a token text holds a term's tokens as a run (countTokens > 0, stopping at the first). */
export function hasTokens(text: string, tokens: readonly string[]): boolean {
  if (tokens.length === 0 || text === '') return false;
  const needle = tokens.join(' ');
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) {
    const end = i + needle.length;
    if (
      (i === 0 || text.charCodeAt(i - 1) === 32) &&
      (end === text.length || text.charCodeAt(end) === 32)
    )
      return true;
  }
  return false;
}

/** Tokens in a token text (space-separated; empty text: none). */
export const tokenCount = (text: string): number => {
  if (text === '') return 0;
  let n = 1;
  for (let i = text.indexOf(' '); i >= 0; i = text.indexOf(' ', i + 1)) n++;
  return n;
};

/** A relevance with the query's time-window boost (its moment falls in the named period). */
export const inWindow = (
  relevance: number,
  validFrom: string,
  window: { from: string; to: string } | null,
  m: RankingModel,
): number =>
  window && validFrom >= window.from && validFrom <= window.to
    ? relevance * (1 + m.temporalBoost)
    : relevance;

/** The feedback query's weight for a question (higher when it gathers several memories). */
export const feedbackWeight = (gathers: boolean, m: RankingModel): number =>
  gathers ? m.prfGatherWeight : m.prfWeight;

/** Feedback terms: words of the best matches found in at least two of them, most frequent first. */
export function feedbackTerms(
  docs: readonly string[][],
  exclude: ReadonlySet<string>,
  stop: ReadonlySet<string>,
  max: number,
): string[] {
  return feedbackWords(docs, exclude, stop, max).map((x) => x.word);
}

/**
 * feedbackTerms with each word's frequency: its occurrences in each best match over the square
 * root of that match's length (times the match's `docWeights`, when given: its relevance over
 * the best one's, as a relevance model weighs a document by its query likelihood), summed (what
 * they are ordered by), and how many matches hold it.
 */
export function feedbackWords(
  docs: readonly string[][],
  exclude: ReadonlySet<string>,
  stop: ReadonlySet<string>,
  max: number,
  docWeights?: readonly number[],
): { word: string; freq: number; docs: number }[] {
  const count = new Map<string, number>();
  const docFreq = new Map<string, number>();
  for (const [d, tokens] of docs.entries()) {
    const seen = new Set<string>();
    const each = (docWeights?.[d] ?? 1) / Math.max(1, Math.sqrt(tokens.length));
    for (const w of tokens) {
      if (w.length < 3 || /^\d+$/.test(w) || stop.has(w) || exclude.has(w)) continue;
      count.set(w, (count.get(w) ?? 0) + each);
      if (!seen.has(w)) docFreq.set(w, (docFreq.get(w) ?? 0) + 1);
      seen.add(w);
    }
  }
  const need = Math.min(2, docs.length);
  return [...count.entries()]
    .filter(([w]) => (docFreq.get(w) ?? 0) >= need)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, max)
    .map(([word, freq]) => ({ word, freq, docs: docFreq.get(word)! }));
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
