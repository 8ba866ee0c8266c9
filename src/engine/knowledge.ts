// Repository knowledge beside memory (issue 19): the refresh that indexes the bound project's
// tracked documents into the store's knowledge index, and the lookup recall serves beside memory
// hits. The repository is the truth; the index is a cache rebuilt by file hash (a refresh after one
// document changed re-chunks that document only), always under the bound project's scope. It is
// never memory: no journal, no trust, no tombstones, no proposals, and it is served as data.
import {
  CHUNKER_VERSION,
  KNOWLEDGE_INCLUDE,
  KNOWLEDGE_MAX_FILE_BYTES,
  binaryText,
  chunkDocument,
  includes,
  knowledgeCitation,
} from '../core/knowledge.js';
import { MnemeError } from '../core/errors.js';
import { sha256 } from '../core/hash.js';
import { matchScore } from '../core/match-score.js';
import { DEFAULT_RANKING } from '../core/ranking.js';
import { screenText } from '../core/screen.js';
import type { QueryTerm } from '../core/text.js';
import type {
  KnowledgeChunkRow,
  KnowledgeFile,
  KnowledgeHit,
  KnowledgeStore,
} from '../store/port.js';
import type { EngineContext } from './context.js';
import { pathVerdict } from './knowledge-paths.js';
import { servedKnowledge, servedPath } from './outbound.js';

export interface KnowledgeOptions {
  /** Include patterns (default KNOWLEDGE_INCLUDE). */
  include?: readonly string[];
  /** Files larger than this are skipped (default KNOWLEDGE_MAX_FILE_BYTES). */
  maxFileBytes?: number;
}

export interface RefreshReport {
  scope: string;
  /** Tracked files the include list matched and their path let be read (see `skipped`). */
  scanned: number;
  /** Files whose hash moved (or new ones): re-chunked. */
  changed: number;
  unchanged: number;
  /** Files indexed before that are gone, untracked or no longer included. */
  removed: number;
  chunksAdded: number;
  chunksRemoved: number;
  /**
   * Files left out, with why: a credential file by its name or its symlink's target, a symlink
   * out of the repository, a path with a line break or an instruction, a secret (the whole
   * file), binary, too large. Paths are shown with control characters escaped.
   */
  skipped: { path: string; reason: string }[];
  /** Chunks left out because the screen found an instruction-like shape in them. */
  chunksWithheld: number;
  files: number;
  chunks: number;
}

/** One knowledge hit as recall serves it: repository text, quoted as data with its citation. */
export interface KnowledgeResult {
  kind: 'knowledge';
  /** `path:line` (or `path:from-to`): where the text stands in the repository. */
  citation: string;
  path: string;
  line_from: number;
  line_to: number;
  /** Headings above the chunk, outermost first. */
  heading: string;
  text: string;
  /** How much of the query the chunk matches, 0–1 (the memory score's measure). */
  score: number;
}

/** Of a recall's limit, at most this share goes to knowledge when memories fill the rest. */
export const KNOWLEDGE_SHARE = 0.3;

/** The bound project's scope: knowledge belongs to a project, never to global. */
function projectScope(ctx: EngineContext): string {
  const scope = ctx.binding.project;
  if (!scope)
    throw new MnemeError('invalid', 'the knowledge index belongs to a project, and none is bound', {
      hint: 'run it inside the repository whose documents you want indexed',
    });
  return scope;
}

async function store(ctx: EngineContext): Promise<KnowledgeStore> {
  return ctx.store.knowledge();
}

/** Indexes the bound project's tracked documents; only files whose hash moved are re-chunked. */
export async function refreshKnowledge(
  ctx: EngineContext,
  opts: KnowledgeOptions = {},
): Promise<RefreshReport> {
  const scope = projectScope(ctx);
  const tracked = ctx.files?.tracked?.() ?? null;
  if (!ctx.files || tracked === null)
    throw new MnemeError(
      'invalid',
      'the knowledge index reads the repository’s tracked files, and git could not list them here',
      { hint: 'run it inside a git repository, with git on PATH' },
    );
  const include = opts.include ?? KNOWLEDGE_INCLUDE;
  const cap = opts.maxFileBytes ?? KNOWLEDGE_MAX_FILE_BYTES;
  const ks = await store(ctx);
  const before = new Map((await ks.files(scope)).map((f) => [f.path, f]));
  const wanted = tracked.filter((p) => includes(p, include)).sort();
  const report: RefreshReport = {
    scope,
    scanned: wanted.length,
    changed: 0,
    unchanged: 0,
    removed: 0,
    chunksAdded: 0,
    chunksRemoved: 0,
    skipped: [],
    chunksWithheld: 0,
    files: 0,
    chunks: 0,
  };
  const put: { file: KnowledgeFile; chunks: KnowledgeChunkRow[] }[] = [];
  const seen = new Set<string>();
  for (const rel of wanted) {
    const verdict = screenText(rel).injection
      ? { skip: 'its path reads as an instruction (not read)' }
      : pathVerdict(ctx.files, rel);
    if (verdict === 'gone') continue;
    if (verdict) {
      report.scanned--;
      report.skipped.push({ path: servedPath(rel), reason: verdict.skip });
      continue;
    }
    const bytes = ctx.files.read(rel);
    if (bytes === null) continue; // deleted from the work tree, or not a regular file: gone
    seen.add(rel);
    const hash = `${CHUNKER_VERSION}:${sha256(bytes)}`;
    const prior = before.get(rel);
    if (prior && prior.hash === hash) {
      report.unchanged++;
      if (prior.skipped) report.skipped.push({ path: rel, reason: prior.skipped });
      continue;
    }
    report.changed++;
    const { file, chunks, withheld } = documentOf(rel, bytes, hash, cap);
    if (file.skipped) report.skipped.push({ path: rel, reason: file.skipped });
    report.chunksWithheld += withheld;
    put.push({ file, chunks });
  }
  const remove = [...before.keys()].filter((p) => !seen.has(p));
  report.removed = remove.length;
  const moved = await ks.change(scope, put, remove);
  report.chunksAdded = moved.added;
  report.chunksRemoved = moved.removed;
  const after = await ks.files(scope);
  report.files = after.filter((f) => f.chunks > 0).length;
  report.chunks = after.reduce((n, f) => n + f.chunks, 0);
  return report;
}

/**
 * One document as the index keeps it. A secret anywhere skips the whole file (a document that
 * leaks one key may leak more than the screen recognises); an instruction-like shape withholds
 * only the chunk it is in (the rest is served, as data, like any repository text).
 */
function documentOf(
  rel: string,
  bytes: Buffer,
  hash: string,
  cap: number,
): { file: KnowledgeFile; chunks: KnowledgeChunkRow[]; withheld: number } {
  const skip = (skipped: string) => ({
    file: { path: rel, hash, bytes: bytes.length, chunks: 0, skipped },
    chunks: [],
    withheld: 0,
  });
  if (bytes.length > cap) return skip(`larger than ${cap} bytes`);
  const text = binaryText(bytes);
  if (text === null) return skip('binary or not UTF-8');
  const screened = screenText(text);
  if (screened.secrets.length > 0) return skip(`secret found (${screened.secrets.join(', ')})`);
  let withheld = 0;
  const chunks = chunkDocument(text).filter((c) => {
    const bad = screenText(`${c.trail}\n${c.text}`).injection;
    if (bad) withheld++;
    return !bad;
  });
  const rows = chunks.map((c, ord) => ({ path: rel, ...c, ord }));
  return {
    file: { path: rel, hash, bytes: bytes.length, chunks: rows.length, skipped: null },
    chunks: rows,
    withheld,
  };
}

export interface KnowledgeStatus {
  scope: string;
  files: number;
  chunks: number;
  skipped: { path: string; reason: string }[];
  bytes: number | null;
}

export async function knowledgeStatus(ctx: EngineContext): Promise<KnowledgeStatus> {
  const scope = projectScope(ctx);
  const ks = await store(ctx);
  const files = await ks.files(scope);
  return {
    scope,
    files: files.filter((f) => f.chunks > 0).length,
    chunks: files.reduce((n, f) => n + f.chunks, 0),
    skipped: files.filter((f) => f.skipped).map((f) => ({ path: f.path, reason: f.skipped! })),
    bytes: await ks.size(),
  };
}

/** Drops the bound project's knowledge index (the next refresh rebuilds it from the repository). */
export async function clearKnowledge(
  ctx: EngineContext,
): Promise<{ scope: string; chunks: number }> {
  const scope = projectScope(ctx);
  return { scope, chunks: await (await store(ctx)).clear(scope) };
}

/**
 * Knowledge hits for a recall: the bound project's chunks matching the query, best first by the
 * memory score's measure (the same on both stores), at most `want`, leaving out any chunk that
 * restates one of the memories served beside it (`served`: their index tokens, as matchFields
 * gives them). No project bound: none.
 */
export async function knowledgeHits(
  ctx: EngineContext,
  terms: QueryTerm[],
  want: number,
  served: readonly string[],
  /** The candidates knowledgeCandidates fetched for at least `want` (read beside the search). */
  fetched?: Promise<KnowledgeHit[]>,
): Promise<KnowledgeResult[]> {
  const scope = ctx.binding.project;
  if (!scope || want <= 0) return [];
  const model = ctx.ranking ?? DEFAULT_RANKING;
  // The store's order is total (rank, path, ord): the first n of a longer fetch are the n.
  const n = knowledgeFetch(want);
  const hits = fetched
    ? (await fetched).slice(0, n)
    : await (await store(ctx)).search(scope, terms, n);
  if (hits.length === 0) return [];
  const restates = restatement(served);
  const scored = hits.map((h, i) => ({
    h,
    i,
    score: matchScore(terms, { abstract: h.trail_tokens, body: h.text_tokens, extra: '' }, model),
  }));
  scored.sort((a, b) => b.score - a.score || a.i - b.i);
  const out: KnowledgeResult[] = [];
  for (const { h, score } of scored) {
    if (restates(h.text_tokens)) continue;
    out.push({
      kind: 'knowledge',
      citation: knowledgeCitation(h.path, h.line_from, h.line_to),
      path: h.path,
      line_from: h.line_from,
      line_to: h.line_to,
      heading: h.trail,
      text: h.text,
      score: Math.round(score * 1000) / 1000,
    });
  }
  // The outbound filter: the document still there, no withheld value, the path screened.
  return (await servedKnowledge(ctx, out)).slice(0, want);
}

/** How many chunks are fetched for `want` results (some may restate a memory served beside). */
const knowledgeFetch = (want: number) => Math.max(want * 2, 8);

/**
 * The chunks knowledgeHits would read for up to `most` results, fetched ahead (a recall starts
 * this beside its search: on a store over the network it is not one more round trip in a row).
 */
export async function knowledgeCandidates(
  ctx: EngineContext,
  terms: QueryTerm[],
  most: number,
): Promise<KnowledgeHit[]> {
  const scope = ctx.binding.project;
  if (!scope || most <= 0) return [];
  return (await store(ctx)).search(scope, terms, knowledgeFetch(most));
}

/** Share of a chunk's words a memory already holds before the chunk counts as restating it. */
export const RESTATE_CONTAINMENT = 0.8;

/**
 * A check whether a knowledge chunk only restates one of the memories served beside it: nearly
 * every index token of the chunk (core/text.ts: stemmed words, the measure both indexes search
 * by) is already in one memory, so serving both spends the budget twice on one statement. A near
 * duplicate in the tombstone's sense (normalize.ts) has the same content words, so it is caught.
 * Takes index-token texts (space-separated), as the indexes store them.
 */
export function restatement(memoryTokens: readonly string[]): (chunkTokens: string) => boolean {
  const memories = memoryTokens.map((m) => new Set(m.split(' ')));
  return (chunkTokens) => {
    const chunk = new Set(chunkTokens.split(' ').filter(Boolean));
    if (chunk.size === 0) return false;
    return memories.some((m) => {
      let held = 0;
      for (const t of chunk) if (m.has(t)) held++;
      return held / chunk.size >= RESTATE_CONTAINMENT;
    });
  };
}
