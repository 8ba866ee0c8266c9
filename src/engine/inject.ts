// Injection (DESIGN §5 Inject): the SessionStart block, the pre-edit block for one file, and
// the block recalled for a prompt. Candidates come from the bound scopes only; every one passes
// the single `autoInjectable` predicate (invariant 10); the block is rendered in the
// untrusted-data envelope and what was injected is recorded as usage. The budgets and floors
// live here, once: a hook, an MCP client and the HTTP API get the same block for the same store.
import path from 'node:path';
import { judgeSource } from '../core/source.js';
import type { FreshnessRecord } from '../store/port.js';
import { matchGlob } from '../core/glob.js';
import { compareIso } from '../core/time.js';
import {
  INJECT_DEFAULTS,
  autoInjectable,
  orderEntries,
  renderInjection,
  type InjectEntry,
  type RenderOptions,
} from '../core/inject.js';
import type { Freshness, RevisionView } from '../core/types.js';
import { readableScopes, type EngineContext } from './context.js';
import { rejectedHere, type RejectedHere } from './rejected-here.js';

export interface InjectOptions extends RenderOptions {
  weightFloor?: number;
  /** The project's root directory, for source bindings and applies_to globs. */
  projectRoot: string | null;
  /** Reads a file's bytes, or null when missing (injected so the engine stays testable). */
  readFile?: (absPath: string) => Uint8Array | null;
  /** Who is injecting, for the usage log. */
  actor?: string;
  /** Record `inject` usage events (default true). */
  logUsage?: boolean;
  /** Journaled freshness of the candidates (filled in by the block builders). */
  persisted?: Map<string, FreshnessRecord>;
}

export interface InjectResult {
  text: string;
  ids: string[];
  /** Candidates considered and how many the predicate admitted. */
  candidates: number;
  admitted: number;
}

export const FILE_BLOCK_DEFAULTS = { maxBytes: 2 * 1024, maxLines: 12 } as const;

/** Each block's budget (bytes and lines, envelope included) unless a setting overrides it. */
export const INJECT_BUDGETS = {
  sessionStart: INJECT_DEFAULTS,
  file: FILE_BLOCK_DEFAULTS,
  prompt: { maxBytes: 2 * 1024, maxLines: 8 },
} as const;

/** The weight below which a memory is not injected unasked (0: every weight may be). */
export const WEIGHT_FLOOR = 0;

/**
 * Recall on a prompt: the best few results, each at least this score, of the prompt's first
 * characters (the usage log keeps a shorter excerpt as the query). The score is recall's 0–1
 * share of the prompt matched (core/match-score.ts); the floor is measured by `mneme bench
 * inject` (bench/results/inject-2026-12-02.json): at 0.5 an eighth of off-topic prompts inject
 * (nearly all below it) while half the evidence of on-topic ones is still in the block.
 */
export const PROMPT_RECALL = {
  limit: 3,
  scoreFloor: 0.5,
  queryChars: 2000,
  loggedQueryChars: 200,
} as const;

function freshnessOf(v: RevisionView, opts: InjectOptions): Freshness {
  if (v.source === null || v.source === undefined) return 'unbound';
  // A journaled drift or disappearance holds until revalidated, whatever the file says now.
  const rec = opts.persisted?.get(v.id);
  if (rec && rec.freshness !== 'fresh') return rec.freshness;
  // Unverifiable is withheld: no root or no reader means we cannot say it is fresh.
  if (!opts.projectRoot || !opts.readFile) return 'missing';
  const abs = path.resolve(opts.projectRoot, v.source.path);
  const rel = path.relative(opts.projectRoot, abs);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return 'missing';
  const data = opts.readFile(abs);
  return judgeSource(v.source, { bytes: data, commitReachable: null }).freshness;
}

function admitted(
  ctx: EngineContext,
  candidates: { view: RevisionView; weight: number }[],
  opts: InjectOptions,
  rejected: RejectedHere,
): { entries: InjectEntry[]; views: Map<string, RevisionView> } {
  const now = ctx.clock().toISOString();
  const scopes = readableScopes(ctx.binding);
  const entries: InjectEntry[] = [];
  const byId = new Map<string, RevisionView>();
  for (const { view: v, weight } of candidates) {
    const ok = autoInjectable(v, {
      scopes,
      now,
      weight,
      weightFloor: opts.weightFloor ?? WEIGHT_FLOOR,
      freshness: freshnessOf(v, opts),
      rejectedHere: rejected(v) !== null,
    });
    if (!ok) continue;
    byId.set(v.id, v);
    entries.push({
      id: v.id,
      type: v.type,
      trust: v.trust,
      abstract: v.abstract,
      weight,
      recorded_at: v.recorded_at,
    });
  }
  return { entries, views: byId };
}

/**
 * Candidates for the session-start block. With an adapter that can prefilter and order in its
 * query, only the heaviest few are read (write cost and read cost must not grow with the store);
 * the predicate still decides each one.
 */
async function sessionCandidates(
  ctx: EngineContext,
  want: number,
): Promise<{ view: RevisionView; weight: number }[]> {
  const scopes = readableScopes(ctx.binding);
  const store = ctx.store;
  const now = ctx.clock().toISOString();
  const handoffs = ctx.binding.project
    ? await store.injectCandidates({
        scopes: [ctx.binding.project],
        now,
        limit: 50,
        types: ['handoff'],
      })
    : [];
  let limit = Math.max(40, want * 2);
  for (;;) {
    const hits = await store.injectCandidates({ scopes, now, limit, excludeTypes: ['handoff'] });
    if (hits.length < limit || limit >= 100_000) {
      return [...handoffs, ...hits].map((h) => ({ view: h.view, weight: h.weight }));
    }
    // Enough rows must pass the predicate to fill the block; read more only when they did not.
    const passing = admitted(ctx, hits, { projectRoot: null }, await rejectedHere(ctx)).entries
      .length;
    if (passing >= want)
      return [...handoffs, ...hits].map((h) => ({ view: h.view, weight: h.weight }));
    limit *= 4;
  }
}

async function persisted(
  ctx: EngineContext,
  candidates: { view: RevisionView }[],
): Promise<Map<string, FreshnessRecord>> {
  const bound = candidates.filter((c) => c.view.source).map((c) => c.view.id);
  return bound.length > 0 ? ctx.store.freshness(bound) : new Map();
}

async function record(ctx: EngineContext, ids: string[], query: string, opts: InjectOptions) {
  if (ids.length === 0 || opts.logUsage === false) return;
  await ctx.store.appendUsage([
    {
      at: ctx.clock().toISOString(),
      kind: 'inject',
      ids,
      actor: opts.actor ?? 'hook',
      query,
      scope: ctx.binding.project ?? 'global',
    },
  ]);
}

/** The SessionStart block: the project's latest handoff first, then the rest by weight. */
export async function sessionStartBlock(
  ctx: EngineContext,
  opts: InjectOptions,
): Promise<InjectResult> {
  const budget = {
    maxBytes: opts.maxBytes ?? INJECT_BUDGETS.sessionStart.maxBytes,
    maxLines: opts.maxLines ?? INJECT_BUDGETS.sessionStart.maxLines,
  };
  const candidates = await sessionCandidates(ctx, budget.maxLines);
  const { entries, views: byId } = admitted(
    ctx,
    candidates,
    { ...opts, persisted: await persisted(ctx, candidates) },
    await rejectedHere(ctx),
  );
  // Only the latest handoff of the bound project is shown; older ones are stale by nature.
  const handoffs = entries
    .filter((e) => e.type === 'handoff' && byId.get(e.id)?.scope === ctx.binding.project)
    .sort((a, b) => compareIso(b.recorded_at ?? '', a.recorded_at ?? '') || (a.id < b.id ? 1 : -1));
  const latest = handoffs[0];
  const rest = entries.filter((e) => e.type !== 'handoff');
  const ordered = orderEntries(latest ? [{ ...latest, handoff: true }, ...rest] : rest);
  const { text, ids } = renderInjection(ordered, { ...budget, title: opts.title });
  await record(ctx, ids, 'session-start', opts);
  return { text, ids, candidates: candidates.length, admitted: entries.length };
}

/** Memories bound to this file, and constraints/procedures whose applies_to matches it. */
export async function fileBlock(
  ctx: EngineContext,
  filePath: string,
  opts: InjectOptions,
): Promise<InjectResult> {
  const root = opts.projectRoot;
  if (!root) return { text: '', ids: [], candidates: 0, admitted: 0 };
  const abs = path.resolve(root, filePath);
  const rel = path.relative(root, abs).split(path.sep).join('/');
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
    return { text: '', ids: [], candidates: 0, admitted: 0 };
  }
  const scopes = readableScopes(ctx.binding);
  // An adapter that prefilters hands back each candidate's weight with it; otherwise look it up.
  const candidates = (
    await ctx.store.injectCandidates({
      scopes,
      now: ctx.clock().toISOString(),
      limit: 100_000,
      types: ['constraint', 'procedure'],
      sourcePath: rel,
    })
  ).map((h) => ({ view: h.view, weight: h.weight }));
  const weighted = candidates.filter(
    ({ view: v }) =>
      (v.source !== null && v.source !== undefined && v.source.path === rel) ||
      ((v.type === 'constraint' || v.type === 'procedure') &&
        Array.isArray(v.applies_to) &&
        v.applies_to.some((g) => typeof g === 'string' && matchGlob(rel, g))),
  );
  const { entries } = admitted(
    ctx,
    weighted,
    { ...opts, persisted: await persisted(ctx, weighted) },
    await rejectedHere(ctx),
  );
  const { text, ids } = renderInjection(orderEntries(entries), {
    maxBytes: opts.maxBytes ?? INJECT_BUDGETS.file.maxBytes,
    maxLines: opts.maxLines ?? INJECT_BUDGETS.file.maxLines,
    title: opts.title ?? `for ${rel}`,
  });
  await record(ctx, ids, `file:${rel}`, opts);
  return { text, ids, candidates: weighted.length, admitted: entries.length };
}

export interface PromptInjectOptions extends InjectOptions {
  /** The score a recall result must reach (default PROMPT_RECALL.scoreFloor). */
  scoreFloor?: number;
  /** Also inject repository knowledge that reaches the floor, in its own envelope (default false). */
  knowledge?: boolean;
}

/**
 * The block recalled for one prompt: the best few recall results that pass the predicate. A
 * bound memory fails closed here (its source is not re-read on every prompt); recall already
 * withheld anything matching a tombstone of a scope this binding reads.
 */
export async function promptBlock(
  ctx: EngineContext,
  prompt: string,
  opts: PromptInjectOptions,
): Promise<InjectResult> {
  if (prompt.trim() === '') return { text: '', ids: [], candidates: 0, admitted: 0 };
  const { recall } = await import('./recall.js');
  const res = await recall(ctx, prompt.slice(0, PROMPT_RECALL.queryChars), {
    limit: PROMPT_RECALL.limit,
    logUsage: false,
    knowledge: opts.knowledge === true,
  });
  const floor = opts.scoreFloor ?? PROMPT_RECALL.scoreFloor;
  const now = ctx.clock().toISOString();
  const scopes = readableScopes(ctx.binding);
  const entries: InjectEntry[] = [];
  for (const x of res.results) {
    if (x.score < floor) continue;
    const lineage = await ctx.store.getLineage(x.id);
    const v = lineage && lineage.length > 0 ? lineage[lineage.length - 1]! : null;
    if (!v || !scopes.includes(v.scope)) continue;
    const ok = autoInjectable(v, {
      scopes,
      now,
      weight: 1,
      weightFloor: opts.weightFloor ?? WEIGHT_FLOOR,
      freshness: v.source ? 'missing' : 'unbound',
      rejectedHere: false,
    });
    if (ok)
      entries.push({
        id: v.id,
        type: v.type,
        trust: v.trust,
        abstract: v.abstract,
        recorded_at: v.recorded_at,
      });
  }
  const { text, ids } = renderInjection(orderEntries(entries), {
    maxBytes: opts.maxBytes ?? INJECT_BUDGETS.prompt.maxBytes,
    maxLines: opts.maxLines ?? INJECT_BUDGETS.prompt.maxLines,
    title: opts.title ?? 'recalled for this prompt',
  });
  await record(ctx, ids, prompt.slice(0, PROMPT_RECALL.loggedQueryChars), opts);
  const docs = (res.knowledge ?? []).filter((k) => k.score >= floor);
  if (docs.length > 0) {
    // Repository text in its own envelope, in what the memory block left of the budget.
    const { renderKnowledge } = await import('../core/knowledge.js');
    const maxBytes = (opts.maxBytes ?? INJECT_BUDGETS.prompt.maxBytes) - Buffer.byteLength(text);
    const maxLines =
      (opts.maxLines ?? INJECT_BUDGETS.prompt.maxLines) - (text ? text.split('\n').length : 0);
    const block = renderKnowledge(docs, { maxBytes, maxLines });
    if (block !== '')
      return {
        text: text ? `${text}\n${block}` : block,
        ids,
        candidates: res.results.length + docs.length,
        admitted: entries.length,
      };
  }
  return { text, ids, candidates: res.results.length, admitted: entries.length };
}
