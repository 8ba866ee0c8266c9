// Source binding and drift (DESIGN §2): the engine itself reads a bound file (through the
// injected SourceFiles ability), hashes it and looks up the symbol, so `verified` trust and every
// freshness verdict rest on what the engine observed, never on what a caller claims. Freshness
// transitions are journaled as `check_source` entries (no new revision); the index mirrors the
// latest one so injection can withhold drifted and missing memories inside its query.
import { MnemeError, invalid } from '../core/errors.js';
import { toRevision } from '../core/revision.js';
import { assignTrust } from '../core/trust.js';
import type { Actor, Freshness, Revision } from '../core/types.js';
import { bindSource } from './source-binding.js';
import { effectiveFreshness, observeSource, persistedFreshness } from './freshness.js';
import { loadCurrent, type Built } from './build.js';
import type { EngineContext } from './context.js';
import { journalBody, requestHash } from './journal-body.js';
import type { ApplyResult, Op, RevalidateOp } from './ops.js';

export { effectiveFreshness, observeSource, persistedFreshness };

/** check_source: observe and journal a transition; an unchanged verdict writes nothing. */
export async function applyCheckSource(
  ctx: EngineContext,
  op: Extract<Op, { op: 'check_source' }>,
  actor: Actor,
  now: string,
): Promise<ApplyResult> {
  const cur = await loadCurrent(ctx, op.id, op.expected_rev);
  if (!cur.source)
    throw invalid(
      `${cur.id} is not bound to a source`,
      'only memories remembered with --source drift',
    );
  const seen = observeSource(ctx, cur.source);
  if (!seen)
    throw new MnemeError('refused', 'the project files cannot be read from here', {
      hint: 'run check-sources from inside the project',
    });
  const prior = effectiveFreshness(cur, (await persistedFreshness(ctx, [cur.id])).get(cur.id));
  if (seen.freshness === prior)
    return { op: op.op, id: cur.id, rev: cur.rev, seq: null, unchanged: true, freshness: prior };
  const entry = await ctx.store.commit({
    body: journalBody(
      op,
      actor,
      now,
      requestHash(op),
      'check_source',
      { id: cur.id, scope: cur.scope },
      null,
      null,
      {
        rev: cur.rev,
        freshness: seen.freshness,
        from: prior,
        observed_sha: seen.observed_sha,
        path: cur.source.path,
        why: seen.why,
      },
    ),
    revision: null,
  });
  return { op: op.op, id: cur.id, rev: cur.rev, seq: entry.seq, freshness: seen.freshness };
}

/** revalidate: a new revision bound to the source's current content (the actor is recorded). */
export async function buildRevalidate(
  ctx: EngineContext,
  op: RevalidateOp,
  actor: Actor,
  now: string,
): Promise<Built> {
  const cur = await loadCurrent(ctx, op.id, op.expected_rev);
  const spec =
    op.source ??
    (cur.source ? `${cur.source.path}${cur.source.symbol ? `#${cur.source.symbol}` : ''}` : null);
  if (!spec)
    throw invalid(`${cur.id} is not bound to a source`, 'pass --source PATH[#SYMBOL] to bind it');
  const source = bindSource(ctx, spec);
  const candidate: Revision = {
    ...toRevision(cur),
    rev: cur.rev + 1,
    op: 'revalidate',
    source,
    trust: assignTrust(actor, { freshSource: true }),
    review: cur.review,
    recorded_at: now,
    actor,
    provenance: [`file:${source.path}@${source.sha256.slice(0, 12)}`],
    reason: op.reason ?? `revalidated against ${source.path}`,
  };
  return { candidate, before: cur, freshSource: true };
}

export interface SourceCheck {
  id: string;
  path: string;
  freshness: Freshness;
  changed: boolean;
  error?: string;
}

/** Re-checks every bound memory in the bound scopes; transitions are journaled via apply. */
export async function checkSources(ctx: EngineContext, actor: Actor): Promise<SourceCheck[]> {
  const { applyEach } = await import('./apply.js');
  const { readableScopes } = await import('./context.js');
  const bound = (await ctx.store.listCurrent(readableScopes(ctx.binding))).filter((v) => v.source);
  const settled = await applyEach(
    ctx,
    bound.map((v) => ({ op: 'check_source', id: v.id })),
    actor,
  );
  return bound.map((v, i) => {
    const s = settled[i]!;
    return s.ok
      ? {
          id: v.id,
          path: v.source!.path,
          freshness: (s.result.freshness ?? 'fresh') as Freshness,
          changed: s.result.unchanged !== true,
        }
      : {
          id: v.id,
          path: v.source!.path,
          freshness: 'fresh',
          changed: false,
          error: s.error.message,
        };
  });
}
