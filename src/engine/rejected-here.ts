// A value rejected in a scope is never served to a reader of that scope, from any scope it also
// reads (DESIGN invariant 8, issue: "a forgotten value comes back through the global scope").
// A project reader reads its project and global: a global memory whose value matches one of the
// project's tombstones is withheld from that project (and only there), and a project memory whose
// value matches a global tombstone is withheld too. Same-scope matches are fsck's to report.
import type { Keyed, Tombstone } from '../core/normalize.js';
import { GLOBAL_SCOPE } from '../core/scope.js';
import type { Revision } from '../core/types.js';
import { readableScopes, type EngineContext } from './context.js';

export type RejectedHere = (v: Pick<Revision, 'scope' | 'abstract' | 'body'>) => Tombstone | null;

const NONE: RejectedHere = () => null;

/**
 * The scopes whose tombstones guard a write into `scope` from this binding, besides `scope`
 * itself: writing to global from a project is guarded by the project's tombstones (its own
 * readers would see the value), and writing to a project by global's.
 */
export function guardingScopes(ctx: EngineContext, scope: string): string[] {
  const project = ctx.binding.project;
  if (scope === GLOBAL_SCOPE) return project ? [GLOBAL_SCOPE, project] : [GLOBAL_SCOPE];
  return [scope, GLOBAL_SCOPE];
}

/** The keyed hash purge tombstones are matched with, read only when one is armed. */
export async function purgeKeyed(
  ctx: EngineContext,
  tombstones: readonly Tombstone[],
): Promise<Keyed | null> {
  if (!tombstones.some((t) => t.kind === 'purged')) return null;
  const secret = await ctx.store.purgeSecret(false);
  if (!secret) return null; // the matcher refuses: purged values armed, no secret to match them
  const { keyedHash } = await import('../core/purge.js');
  return keyedHash(secret);
}

/** A check for "matches a tombstone of another scope this binding reads", loaded once per call. */
export async function rejectedHere(ctx: EngineContext): Promise<RejectedHere> {
  const scopes = [...readableScopes(ctx.binding), ...(ctx.binding.guards ?? [])];
  if (scopes.length < 2) return NONE;
  const tombstones = await ctx.store.tombstones(scopes);
  if (tombstones.length === 0) return NONE;
  // Loaded only when there is something to match: its Unicode-property patterns cost a hook
  // (a whole process) a few milliseconds to parse at load.
  const { tombstoneMatcher } = await import('../core/normalize.js');
  const keyed = await purgeKeyed(ctx, tombstones);
  const matchers = [...new Set(tombstones.map((t) => t.scope))].map(
    (scope) => [scope, tombstoneMatcher(tombstones, scope, keyed)] as const,
  );
  // The same reading as the write gate: the abstract as a value, the body as a passage.
  return (v) => {
    for (const [scope, match] of matchers) {
      if (scope === v.scope) continue;
      const hit = match.value(v.abstract) ?? (v.body ? match.passage(v.body) : null);
      if (hit) return hit;
    }
    return null;
  };
}
