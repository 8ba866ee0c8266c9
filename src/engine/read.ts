// Reading one memory at the depth needed (abstract, outline, full), its history, and its trace.
// Every read is scope-checked: an id from another project is "not found", not "forbidden".
import { MnemeError, invalid } from '../core/errors.js';
import { isMemoryId } from '../core/ids.js';
import { handle } from '../core/revision.js';
import type { RevisionView } from '../core/types.js';
import { rejectedHere } from './rejected-here.js';
import { readableScopes, type EngineContext } from './context.js';

export type ReadLevel = 'abstract' | 'outline' | 'full';

export async function loadLineage(ctx: EngineContext, id: string): Promise<RevisionView[]> {
  if (!isMemoryId(id))
    throw invalid(
      `"${id.slice(0, 80)}" is not a memory id`,
      'memory ids look like mem_01J…; find them with `mneme recall`',
    );
  const lineage = await ctx.store.getLineage(id);
  const scope = lineage?.[0]?.scope;
  if (!lineage || scope === undefined || !readableScopes(ctx.binding).includes(scope)) {
    throw new MnemeError('not_found', `no memory ${id} in this project or the global scope`, {
      hint: 'check the id with `mneme recall` or run from the project the memory belongs to',
    });
  }
  const cur = lineage[lineage.length - 1]!;
  if (cur.quarantine !== null && ctx.surface === 'agent') {
    throw new MnemeError('not_found', `no memory ${id} in this project or the global scope`);
  }
  return lineage;
}

/**
 * A memory whose value was rejected in another scope this binding reads is served nowhere here:
 * not by read (any surface), and not by history or trace to an agent.
 */
export async function refuseRejectedHere(ctx: EngineContext, lineage: RevisionView[]) {
  const v = lineage[lineage.length - 1]!;
  if (v.status === 'active' && (await rejectedHere(ctx))(v)) {
    throw new MnemeError(
      'not_found',
      `${v.id} is withheld here: its value was rejected in ${v.scope === 'global' ? 'this project' : 'the global scope'}`,
      { hint: 'a person can see its history; only a person can lift the tombstone' },
    );
  }
}

export async function read(ctx: EngineContext, id: string, level: ReadLevel = 'full') {
  const lineage = await loadLineage(ctx, id);
  // A retraction revision repeats the withdrawn value; show it with its state.
  const v = lineage[lineage.length - 1]!;
  await refuseRejectedHere(ctx, lineage);
  const base = {
    id: v.id,
    rev: v.rev,
    type: v.type,
    scope: v.scope,
    slug: v.slug,
    abstract: v.abstract,
    trust: v.trust,
    status: v.state,
    review: v.review,
    quarantine: v.quarantine,
    valid_from: v.valid_from,
    valid_to: v.valid_to,
    recorded_at: v.recorded_at,
    handle: handle(v.id),
    tags: v.tags,
    fields: v.fields,
    links: v.links,
    provenance: v.provenance,
    source: v.source,
    applies_to: v.applies_to,
    actor: v.actor,
  };
  const body = level === 'full' ? v.body : level === 'outline' ? outline(v.body) : '';
  await ctx.store.appendUsage([
    { at: ctx.clock().toISOString(), kind: 'read', ids: [v.id], actor: ctx.surface },
  ]);
  return { ...base, level, body };
}

/** Headings and the first line under each: enough to decide whether to read in full. */
function outline(body: string): string {
  const lines = body.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (/^#{1,6}\s/.test(l)) {
      out.push(l);
      const next = lines.slice(i + 1).find((x) => x.trim() !== '');
      if (next && !/^#{1,6}\s/.test(next)) out.push(`  ${next.trim().slice(0, 120)}`);
    }
  }
  if (out.length === 0) {
    const first = lines.find((x) => x.trim() !== '');
    if (first) out.push(first.trim().slice(0, 200));
  }
  return out.join('\n');
}

export async function history(ctx: EngineContext, id: string) {
  const lineage = await loadLineage(ctx, id);
  if (ctx.surface === 'agent') await refuseRejectedHere(ctx, lineage);
  return {
    id,
    revisions: lineage.map((v) => ({
      rev: v.rev,
      op: v.op,
      abstract: v.abstract,
      body: v.body,
      status: v.state,
      trust: v.trust,
      valid_from: v.valid_from,
      valid_to: v.valid_to_eff,
      recorded_at: v.recorded_at,
      retired_at: v.retired_at,
      actor: v.actor,
      reason: v.reason,
      fields: v.fields,
      provenance: v.provenance,
    })),
  };
}
