// The optional vector arm (off unless the surface passes an embedder). Vectors are index state:
// no write waits for a model. Revisions lacking a vector are embedded later — a bounded batch
// before each recall, all of them by `mneme index vectors`, and after a rebuild — reusing any
// vector already computed for the same text. A failing embedder never fails a write, and at
// recall it leaves the lexical arm to answer alone (the response says so). Candidates come from
// the store's vector search, which applies the same eligibility predicate as the lexical one.
import { embedHash, embedText, vectorKey, type Embedder } from '../core/embed.js';
import type { Eligibility } from '../core/eligibility.js';
import { MnemeError } from '../core/errors.js';
import { RRF_K, fuseRanks } from '../core/fusion.js';
import type { FusionParts } from '../core/ranking.js';
import type { SearchHit, VectorHit, VectorStore } from '../store/port.js';
import { readableScopes, type EngineContext } from './context.js';

/** Revisions embedded per model call. */
const BATCH = 32;
/** Revisions lacking a vector fetched per scan of the index. */
const PAGE = 1024;
/** Revisions a recall embeds before it searches; the rest wait for `mneme index vectors`. */
export const FILL_ON_RECALL = 256;

/** What the vector arm did for one recall (in the response whenever the arm is on). */
export interface VectorArmReport {
  embedder: string;
  /** Eligible vector candidates fused with the lexical ones. */
  candidates: number;
  /** Revisions embedded (or taken from the cache) before searching. */
  filled: number;
  /** Why the arm did not contribute, or filled only part; lexical results still stand. */
  error?: string;
}

export interface FillReport {
  embedder: string;
  /** Vectors computed by the model. */
  embedded: number;
  /** Vectors reused from an identical text already embedded. */
  reused: number;
  /** Stale vectors dropped (revision gone, or its text no longer matches). */
  pruned: number;
  /** Revisions in scope, and how many have a vector now. */
  revisions: number;
  withVector: number;
  error?: string;
}

export type FusedHit = SearchHit & { fusion?: FusionParts };

function vectorStoreOf(ctx: EngineContext): () => Promise<VectorStore> {
  if (!ctx.store.capabilities.vectors)
    throw new MnemeError('refused', `the ${ctx.store.backend} store has no vector arm`, {
      hint: 'unset MNEME_EMBEDDER (or pass --embedder off) to recall lexically; the vector arm runs on the embedded store (--store / MNEME_HOME)',
      details: { capability: 'vectors' },
    });
  return () => ctx.store.vectors();
}

/** Vectors of the given texts, each checked to have the embedder's dimension. */
async function embedChecked(e: Embedder, texts: string[], dim?: number): Promise<Float32Array[]> {
  const out = await e.embed(texts);
  if (out.length !== texts.length)
    throw new Error(`the embedder returned ${out.length} vectors for ${texts.length} texts`);
  const want = dim ?? e.dim ?? out[0]?.length;
  for (const v of out) {
    if (v.length !== want || v.some((x) => !Number.isFinite(x)))
      throw new Error(
        `the embedder returned a malformed vector (length ${v.length}, want ${want})`,
      );
  }
  return out;
}

/** The storage key of this embedder; a model of unknown dimension is asked once for it. */
async function keyOf(e: Embedder): Promise<{ key: string; dim: number }> {
  const dim = e.dim ?? (await embedChecked(e, ['dimension probe']))[0]!.length;
  return { key: vectorKey(e.model, dim), dim };
}

/** Embeds up to `max` revisions of `scopes` that lack a vector under `key`. */
async function fill(
  e: Embedder,
  vs: VectorStore,
  key: string,
  dim: number,
  scopes: string[],
  max: number,
  onProgress?: (done: number) => void,
): Promise<{ embedded: number; reused: number }> {
  let embedded = 0;
  let reused = 0;
  while (embedded + reused < max) {
    // One scan finds many missing rows; the model is asked BATCH texts at a time.
    const page = await vs.missing(key, scopes, Math.min(PAGE, max - embedded - reused));
    if (page.length === 0) break;
    for (let at = 0; at < page.length; at += BATCH) {
      const batch = page.slice(at, at + BATCH);
      const texts = batch.map(embedText);
      const hashes = texts.map(embedHash);
      const cached = await vs.cached(key, hashes);
      const todo = [...new Set(hashes.filter((h) => !cached.has(h)))];
      if (todo.length > 0) {
        const vecs = await embedChecked(
          e,
          todo.map((h) => texts[hashes.indexOf(h)]!),
          dim,
        );
        todo.forEach((h, i) => cached.set(h, vecs[i]!));
      }
      await vs.put(
        key,
        batch.map((v, i) => ({
          id: v.id,
          rev: v.rev,
          hash: hashes[i]!,
          vector: cached.get(hashes[i]!)!,
        })),
      );
      embedded += todo.length;
      reused += batch.length - todo.length;
      onProgress?.(embedded + reused);
    }
  }
  return { embedded, reused };
}

/**
 * The vector arm's candidates for one recall: the query embedded, a bounded fill of revisions
 * that lack a vector, then the nearest eligible revisions. A model failure is reported, not thrown.
 */
export async function vectorCandidates(
  ctx: EngineContext,
  e: Embedder,
  query: string,
  eligibility: Eligibility,
  pool: number,
  fillMax = FILL_ON_RECALL,
): Promise<{
  hits: VectorHit[];
  report: VectorArmReport;
  /** The nearest revisions whatever their eligibility, for --explain's exclusion trace. */
  nearest?: (limit: number) => Promise<VectorHit[]>;
}> {
  const vs = await vectorStoreOf(ctx)();
  const report: VectorArmReport = { embedder: e.model, candidates: 0, filled: 0 };
  let qv: Float32Array;
  try {
    qv = (await embedChecked(e, [query]))[0]!;
  } catch (err) {
    if (err instanceof MnemeError) throw err; // a configuration the user must fix
    return { hits: [], report: { ...report, error: `embedder failed: ${(err as Error).message}` } };
  }
  const key = vectorKey(e.model, qv.length);
  report.embedder = key;
  try {
    const f = await fill(e, vs, key, qv.length, eligibility.scopes, fillMax);
    report.filled = f.embedded + f.reused;
  } catch (err) {
    if (err instanceof MnemeError) throw err;
    report.error = `embedding new revisions failed (they are searched lexically until \`mneme index vectors\` succeeds): ${(err as Error).message}`;
  }
  const floor = e.minSimilarity ?? 0;
  const hits = (await vs.search(key, qv, eligibility, pool)).filter((h) => 1 - h.distance >= floor);
  report.candidates = hits.length;
  const nearest = async (limit: number) =>
    (await vs.nearest(key, qv, eligibility.scopes, limit)).filter((h) => 1 - h.distance >= floor);
  return { hits, report, nearest };
}

/**
 * Fuses the lexical candidates (best first by relevance) with the vector ones (nearest first) by
 * reciprocal rank. The fused score replaces relevance; the ranks are kept for --explain.
 */
export function fuseHits(lexical: SearchHit[], vector: VectorHit[], k = RRF_K): FusedHit[] {
  const keyOfHit = (h: SearchHit) => `${h.head.id}#${h.head.rev}`;
  const byKey = new Map<string, SearchHit>();
  const lex = [...lexical].sort(
    (a, b) => b.relevance - a.relevance || (keyOfHit(a) < keyOfHit(b) ? -1 : 1),
  );
  for (const h of lex) byKey.set(keyOfHit(h), h);
  const distance = new Map<string, number>();
  for (const h of vector) {
    if (!byKey.has(keyOfHit(h))) byKey.set(keyOfHit(h), h);
    distance.set(keyOfHit(h), h.distance);
  }
  const fused = fuseRanks(lex.map(keyOfHit), vector.map(keyOfHit), k);
  return [...fused].map(([k, r]) => {
    const hit = byKey.get(k)!;
    const d = distance.get(k);
    return {
      head: hit.head,
      // Read lazily, as the adapter's own hit does: only shown hits parse their revision.
      get view() {
        return hit.view;
      },
      weight: hit.weight,
      relevance: r.score,
      fusion: {
        lexical_rank: r.lexical,
        vector_rank: r.vector,
        ...(d !== undefined ? { similarity: 1 - d } : {}),
      },
    };
  });
}

/** Embeds every revision of the bound scopes that lacks a vector (`mneme index vectors`). */
export async function indexVectors(
  ctx: EngineContext,
  e: Embedder,
  opts: { prune?: boolean; onProgress?: (done: number, total: number) => void } = {},
): Promise<FillReport> {
  const vs = await vectorStoreOf(ctx)();
  const scopes = readableScopes(ctx.binding);
  let key: string;
  let dim: number;
  try {
    ({ key, dim } = await keyOf(e));
  } catch (err) {
    const none = { embedded: 0, reused: 0, pruned: 0, revisions: 0, withVector: 0 };
    return { embedder: e.model, ...none, error: `the embedder failed: ${describe(err)}` };
  }
  const pruned = opts.prune ? await vs.prune(key, (v) => embedHash(embedText(v))) : 0;
  const before = await vs.count(key, scopes);
  const total = before.revisions - before.withVector;
  const report: FillReport = { embedder: key, embedded: 0, reused: 0, pruned, ...before };
  try {
    const f = await fill(e, vs, key, dim, scopes, Infinity, (done) =>
      opts.onProgress?.(done, total),
    );
    report.embedded = f.embedded;
    report.reused = f.reused;
  } catch (err) {
    report.error = `the embedder failed: ${describe(err)}`;
  }
  Object.assign(report, await vs.count(key, scopes));
  return report;
}

/** Whether the arm is on, and how many revisions of the bound scopes have a vector. */
export async function vectorStatus(
  ctx: EngineContext,
  e: Embedder | undefined,
): Promise<
  | { on: false }
  | { on: true; embedder: string; revisions: number; withVector: number }
  | { on: true; embedder: string; error: string }
> {
  if (!e) return { on: false };
  let vs: VectorStore;
  try {
    vs = await vectorStoreOf(ctx)();
  } catch (err) {
    return { on: true, embedder: e.model, error: describe(err) };
  }
  const scopes = readableScopes(ctx.binding);
  // Status never calls a model: an embedder of unknown dimension is counted under the key its
  // vectors were stored with.
  const key =
    e.dim !== null
      ? vectorKey(e.model, e.dim)
      : ((await vs.keys()).find((k) => k.startsWith(`${e.model}#`)) ?? `${e.model}#?`);
  return { on: true, embedder: key, ...(await vs.count(key, scopes)) };
}

/** An error's message, with a refusal's hint (what to do) appended. */
const describe = (err: unknown): string =>
  err instanceof MnemeError && err.hint ? `${err.message} (${err.hint})` : (err as Error).message;
