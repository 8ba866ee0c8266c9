// Export and import bundles: every lineage (all revisions) of the readable scopes, as one JSON
// document. Import replays each revision through the one write path (apply), so it is gated,
// journaled and idempotent; imported revisions arrive untrusted.
import { z } from 'zod';
import { MnemeError } from '../core/errors.js';
import { toRevision } from '../core/revision.js';
import type { Proposal } from '../core/proposal.js';
import type { Actor, Revision } from '../core/types.js';
import { applyEach } from './apply.js';
import { readableScopes, type EngineContext } from './context.js';

export const BUNDLE_FORMAT = 'mneme-bundle';

export interface Bundle {
  format: typeof BUNDLE_FORMAT;
  version: 1;
  exported_at: string;
  scopes: string[];
  memories: { id: string; revisions: Revision[] }[];
  tombstones: unknown[];
  /** Pending proposals: a move between stores keeps the review queue. */
  proposals: unknown[];
}

export async function exportBundle(
  ctx: EngineContext,
  extra: { tombstones?: unknown[]; proposals?: unknown[] } = {},
): Promise<Bundle> {
  const scopes = readableScopes(ctx.binding);
  const current = await ctx.store.listCurrent(scopes, { includeEnded: true });
  const memories: Bundle['memories'] = [];
  for (const c of current) {
    const lineage = await ctx.store.getLineage(c.id);
    if (lineage) memories.push({ id: c.id, revisions: lineage.map(toRevision) });
  }
  return {
    format: BUNDLE_FORMAT,
    version: 1,
    exported_at: ctx.clock().toISOString(),
    scopes,
    memories,
    tombstones: extra.tombstones ?? [],
    proposals: extra.proposals ?? [],
  };
}

const BundleShape = z.object({
  format: z.literal(BUNDLE_FORMAT),
  version: z.literal(1),
  exported_at: z.string(),
  scopes: z.array(z.string()),
  memories: z.array(z.object({ id: z.string(), revisions: z.array(z.unknown()) })),
  tombstones: z.array(z.unknown()).default([]),
  proposals: z.array(z.unknown()).default([]),
});

export interface ImportReport {
  bundle: string;
  memories: number;
  imported: number;
  unchanged: number;
  tombstones: number;
  proposals: number;
  refused: { id: string; rev: number | null; code: string; message: string }[];
}

export function parseBundle(text: string, name: string): z.infer<typeof BundleShape> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new MnemeError('invalid', `${name} is not JSON (${(e as Error).message})`, {
      hint: 'pass a file written by `mneme export`',
    });
  }
  const r = BundleShape.safeParse(data);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new MnemeError(
      'invalid',
      `${name} is not a mneme bundle: ${i?.path.join('.')}: ${i?.message}`,
      { hint: 'pass a file written by `mneme export`' },
    );
  }
  return r.data;
}

export async function importBundle(
  ctx: EngineContext,
  text: string,
  name: string,
  actor: Actor,
): Promise<ImportReport> {
  const bundle = parseBundle(text, name);
  const report: ImportReport = {
    bundle: name,
    memories: bundle.memories.length,
    imported: 0,
    unchanged: 0,
    tombstones: 0,
    proposals: 0,
    refused: [],
  };
  // Tombstones first, so a value rejected in the source store cannot arrive as a memory.
  const arms = bundle.tombstones
    .map((t) => t as { value_norm?: unknown; scope?: unknown; reason?: unknown })
    .filter((t) => typeof t.value_norm === 'string' && typeof t.scope === 'string')
    .map((t) => ({
      op: 'arm',
      value: t.value_norm,
      scope: t.scope,
      reason: typeof t.reason === 'string' ? t.reason.slice(0, 1000) : undefined,
    }));
  const armed = await applyEach(ctx, arms, actor);
  report.tombstones = armed.filter((s) => s.ok && !s.result.unchanged).length;
  const label = name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(-120);
  for (const m of bundle.memories) {
    const revs = [...m.revisions].sort(
      (a, b) => ((a as Revision).rev ?? 0) - ((b as Revision).rev ?? 0),
    );
    const last = revs[revs.length - 1] as Partial<Revision> | undefined;
    const final = {
      final_rev: last?.rev,
      final_abstract: last?.abstract,
      final_active: last?.status === 'active',
    };
    const settled = await applyEach(
      ctx,
      revs.map((revision) => ({ op: 'import', revision, bundle: label, ...final })),
      actor,
    );
    for (const [i, s] of settled.entries()) {
      if (s.ok) {
        if (s.result.unchanged) report.unchanged++;
        else report.imported++;
      } else {
        const rev = (revs[i] as Partial<Revision>)?.rev ?? null;
        report.refused.push({ id: m.id, rev, code: s.error.code, message: s.error.message });
        break; // later revisions of this lineage depend on this one
      }
    }
  }
  // Pending proposals last (their targets must exist). The original id is the idempotency
  // key, so importing the same bundle twice opens each proposal once.
  const proposes = bundle.proposals
    .map((p) => p as Partial<Proposal>)
    .filter((p) => p.state === 'pending' && typeof p.id === 'string' && p.kind !== undefined)
    .map((p) => ({
      op: 'propose',
      kind: p.kind,
      targets: p.targets ?? [],
      summary: p.summary ?? '',
      accept: (p.draft as { accept?: unknown[] } | null)?.accept ?? [],
      reject: (p.draft as { reject?: unknown[] } | null)?.reject ?? [],
      evidence: p.evidence ?? [],
      diff: p.diff ?? '',
      scope: p.scope,
      idempotency_key: `import-proposal:${p.id}`,
    }));
  const opened = await applyEach(ctx, proposes, actor);
  report.proposals = opened.filter((s) => s.ok && !s.result.replayed).length;
  return report;
}
