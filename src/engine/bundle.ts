// Export and import bundles: every lineage (all revisions) of the readable scopes, as one JSON
// document. Import replays each revision through the one write path (apply), so it is gated,
// journaled and idempotent; imported revisions arrive untrusted.
import { z } from 'zod';
import { MnemeError } from '../core/errors.js';
import { toRevision } from '../core/revision.js';
import type { Proposal } from '../core/proposal.js';
import { GLOBAL_SCOPE } from '../core/scope.js';
import type { Actor, Revision } from '../core/types.js';
import { applyEach } from './apply.js';
import {
  exportArtifacts,
  importArtifacts,
  missingArtifact,
  servedArtifacts,
} from './bundle-artifacts.js';
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
  /** The bytes of every artifact a revision references (verified by hash on import). */
  artifacts: BundleArtifact[];
}

export interface BundleArtifact {
  sha256: string;
  content_base64: string;
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
    artifacts: await exportArtifacts(ctx, memories),
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
  artifacts: z.array(z.object({ sha256: z.string(), content_base64: z.string() })).default([]),
});

export interface ImportOptions {
  /** Write the bundle's global entries into the global scope (a person says so). */
  global?: boolean;
  /** Re-scope entries of other projects into this scope (this project, or global with --global). */
  into?: string;
  /** Called after each chunk of lineages is applied: how many of the bundle's are done. */
  onProgress?: (done: number, total: number) => void;
  /** Ops per chunk (default IMPORT_CHUNK_OPS; 1 applies each lineage on its own). */
  chunkOps?: number;
}

/**
 * Ops per `applyEach` call: one lock acquisition (and, with group commit, one sync) for many
 * lineages at a time; a lineage is never split, so a longer one is a chunk of its own.
 */
export const IMPORT_CHUNK_OPS = 500;

export interface ImportReport {
  bundle: string;
  memories: number;
  imported: number;
  unchanged: number;
  tombstones: number;
  proposals: number;
  /** Where the bundle's lineages went, by kind: each lineage is counted once. */
  scopes: {
    project: number;
    global: number;
    rescoped: number;
    refused_global: number;
    refused_other_scope: number;
  };
  /** Bundle proposals not opened here, by reason (proposals are re-derived, never copied). */
  proposals_dropped: Record<string, number>;
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

/**
 * Where a bundle entry of scope `from` may be written from this binding: its own project, global
 * only with `global`, another project only re-scoped by `into`. Null: refused, with the count.
 */
function scopeRule(
  ctx: EngineContext,
  opts: ImportOptions,
): (from: string) => { scope: string | null; kind: keyof ImportReport['scopes'] } {
  const project = ctx.binding.project;
  const into = opts.into;
  if (into !== undefined && into !== project && !(into === GLOBAL_SCOPE && opts.global)) {
    throw new MnemeError(
      'invalid',
      `--into ${into} is not a scope this import may write: only this project${project ? ` (${project})` : ''}, or global together with --global`,
      {
        hint: 'run the import from the project the entries belong in, and pass --into with its scope',
      },
    );
  }
  return (from) => {
    if (project !== null && from === project) return { scope: project, kind: 'project' };
    if (from === GLOBAL_SCOPE)
      return opts.global
        ? { scope: GLOBAL_SCOPE, kind: 'global' }
        : { scope: null, kind: 'refused_global' };
    if (into !== undefined) return { scope: into, kind: 'rescoped' };
    return { scope: null, kind: 'refused_other_scope' };
  };
}

const SCOPE_REFUSAL: Record<string, { message: string; hint: string }> = {
  refused_global: {
    message: 'a global entry is written only when the person importing passes --global',
    hint: 'import again with --global to write global entries',
  },
  refused_other_scope: {
    message: 'the entry belongs to another project; an import writes only into this one',
    hint: 'run the import in that project, or pass --into SCOPE to re-scope it here',
  },
};

export async function importBundle(
  ctx: EngineContext,
  text: string,
  name: string,
  actor: Actor,
  opts: ImportOptions = {},
): Promise<ImportReport> {
  const bundle = parseBundle(text, name);
  const rule = scopeRule(ctx, opts);
  const report: ImportReport = {
    bundle: name,
    memories: bundle.memories.length,
    imported: 0,
    unchanged: 0,
    tombstones: 0,
    proposals: 0,
    scopes: { project: 0, global: 0, rescoped: 0, refused_global: 0, refused_other_scope: 0 },
    proposals_dropped: {},
    refused: [],
  };
  // Tombstones first, so a value rejected in the source store cannot arrive as a memory. Each is
  // armed in the scope its entries would be written to; a global one without --global is armed
  // in this project (arming only ever makes the store stricter).
  const arms = bundle.tombstones
    .map((t) => t as { value_norm?: unknown; scope?: unknown; reason?: unknown })
    .filter((t) => typeof t.value_norm === 'string' && typeof t.scope === 'string')
    .flatMap((t) => {
      const to = rule(t.scope as string);
      const scope = to.scope ?? (to.kind === 'refused_global' ? ctx.binding.project : null) ?? null;
      return scope === null
        ? []
        : [
            {
              op: 'arm',
              value: t.value_norm,
              scope,
              reason: typeof t.reason === 'string' ? t.reason.slice(0, 1000) : undefined,
            },
          ];
    });
  const armed = await applyEach(ctx, arms, actor);
  report.tombstones = armed.filter((s) => s.ok && !s.result.unchanged).length;
  const label = name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(-120);
  const written = new Map<string, string>(); // bundle id → the scope it was written to here
  const bytes = await importArtifacts(ctx, bundle.artifacts);
  let served: Promise<Set<string>> | null = null;
  const servedHere = () => (served ??= servedArtifacts(ctx));
  // Each lineage is planned (its scope decided, its ops built) in bundle order; lineages are
  // applied a chunk at a time and their outcomes read back in the same order, so the report and
  // the journal are what one applyEach per lineage gives.
  type Planned = { id: string; revs: unknown[]; ops: Record<string, unknown>[]; scope: string };
  type Step = Planned | { id: string; refusal: string; code?: 'invalid' };
  const chunkOps = opts.chunkOps ?? IMPORT_CHUNK_OPS;
  let pending: Step[] = [];
  let pendingOps = 0;
  let done = 0;
  const flush = async () => {
    const ops = pending.flatMap((p) => ('ops' in p ? p.ops : []));
    const settled = ops.length > 0 ? await applyEach(ctx, ops, actor) : [];
    let at = 0;
    for (const p of pending) {
      if (!('ops' in p)) {
        report.refused.push({ id: p.id, rev: null, code: p.code ?? 'refused', message: p.refusal });
        continue;
      }
      const mine = settled.slice(at, at + p.ops.length);
      at += p.ops.length;
      for (const [i, s] of mine.entries()) {
        if (s.ok) {
          if (s.result.unchanged) report.unchanged++;
          else report.imported++;
        } else {
          const rev = (p.revs[i] as Partial<Revision>)?.rev ?? null;
          report.refused.push({ id: p.id, rev, code: s.error.code, message: s.error.message });
          break; // later revisions of this lineage depend on this one
        }
      }
      if (mine.every((s) => s.ok)) written.set(p.id, p.scope);
    }
    done += pending.length;
    pending = [];
    pendingOps = 0;
    opts.onProgress?.(done, bundle.memories.length);
  };
  for (const m of bundle.memories) {
    const revs = [...m.revisions].sort(
      (a, b) => ((a as Revision).rev ?? 0) - ((b as Revision).rev ?? 0),
    );
    const last = revs[revs.length - 1] as Partial<Revision> | undefined;
    const from = typeof last?.scope === 'string' ? last.scope : '';
    const to = rule(from);
    report.scopes[to.kind]++;
    if (to.scope === null) {
      pending.push({ id: m.id, refusal: SCOPE_REFUSAL[to.kind]!.message });
      continue;
    }
    const missing = await missingArtifact(ctx, revs as Partial<Revision>[], bytes, servedHere);
    if (missing) {
      pending.push({ id: m.id, refusal: missing, code: 'invalid' });
      continue;
    }
    const scope = to.scope;
    const final = {
      final_rev: last?.rev,
      final_abstract: last?.abstract,
      final_active: last?.status === 'active',
    };
    const ops = revs.map((revision) => ({
      op: 'import',
      revision: revision && typeof revision === 'object' ? { ...revision, scope } : revision,
      bundle: label,
      ...(scope === GLOBAL_SCOPE ? { global: true } : {}),
      ...final,
    }));
    if (pendingOps > 0 && pendingOps + ops.length > chunkOps) await flush();
    pending.push({ id: m.id, revs, ops, scope });
    pendingOps += ops.length;
  }
  if (pending.length > 0) await flush();
  // Proposals last (their targets must exist). None is copied: each is re-derived from what
  // this store can check, or dropped with a counted reason.
  const drop = (why: string) => {
    report.proposals_dropped[why] = (report.proposals_dropped[why] ?? 0) + 1;
  };
  const proposes: Record<string, unknown>[] = [];
  for (const raw of bundle.proposals) {
    const p = raw as Partial<Proposal>;
    if (p.state !== 'pending' || typeof p.id !== 'string') continue;
    const derived = rederive(p, written, label);
    if (typeof derived === 'string') drop(derived);
    else proposes.push(derived);
  }
  const opened = await applyEach(ctx, proposes, actor);
  for (const s of opened) {
    if (s.ok) report.proposals += s.result.replayed ? 0 : 1;
    else drop('value refused here');
  }
  return report;
}

/**
 * A bundle proposal as this store re-derives it, or the reason it is dropped. Only a conflict —
 * a different value for a memory this import wrote — is re-opened, as a value for a person to
 * weigh; its steps and summary are mneme's. Human-only effects never travel in a bundle.
 */
function rederive(
  p: Partial<Proposal>,
  written: Map<string, string>,
  label: string,
): Record<string, unknown> | string {
  switch (p.kind) {
    case 'quarantine':
      return 'quarantine: re-opened by this store for each quarantined memory it imported';
    case 'external_edit':
      return 'external_edit: hand edits are found by the store that holds the file';
    case 'confirm':
    case 'lift':
      return `${p.kind}: a decision only a person takes here`;
    case 'conflict':
      break;
    default:
      return `${String(p.kind).slice(0, 40)}: re-derived by \`mneme sleep\` and \`mneme fsck\` on this store`;
  }
  const target = Array.isArray(p.targets) && p.targets.length === 1 ? p.targets[0] : undefined;
  const step = ((p.draft as { accept?: unknown[] } | null)?.accept ?? [])[0] as
    | { op?: unknown; id?: unknown; abstract?: unknown; body?: unknown; fields?: unknown }
    | undefined;
  if (typeof target !== 'string' || step?.op !== 'supersede' || step.id !== target)
    return 'conflict: re-derived by `mneme sleep` on this store';
  if (typeof step.abstract !== 'string') return 'conflict: no proposed value';
  if (!written.has(target)) return 'conflict: its memory was not imported here';
  return {
    op: 'propose',
    kind: 'conflict',
    targets: [target],
    scope: written.get(target),
    summary: `imported from ${label}: a different value for ${target}: "${step.abstract.slice(0, 200)}"`,
    accept: [
      {
        op: 'supersede',
        id: target,
        abstract: step.abstract,
        ...(typeof step.body === 'string' ? { body: step.body } : {}),
        ...(step.fields && typeof step.fields === 'object'
          ? { fields: step.fields as Record<string, string> }
          : {}),
        reason: 'accepted an imported conflicting value in review',
      },
    ],
    reject: [],
    evidence: [`import:${label}`],
    idempotency_key: `import-proposal:${p.id}`,
  };
}
