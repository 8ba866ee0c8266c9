// A value rejected in a scope is never served to a reader of that scope, from any scope it also
// reads (DESIGN invariant 8, issue: "a forgotten value comes back through the global scope").
// A project reader reads its project and global: a global memory whose value matches one of the
// project's tombstones is withheld from that project (and only there), and a project memory whose
// value matches a global tombstone is withheld too. Same-scope matches are fsck's to report.
import type { Keyed, Tombstone, TombstoneMatcher } from '../core/normalize.js';
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

/** The matchers built from one tombstone list, kept while a store answers that same list. */
export type Matchers = readonly (readonly [string, TombstoneMatcher])[];
const built = new WeakMap<readonly Tombstone[], Promise<Matchers>>();

async function matchersOf(ctx: EngineContext, tombstones: readonly Tombstone[]): Promise<Matchers> {
  // Loaded only when there is something to match: its Unicode-property patterns cost a hook
  // (a whole process) a few milliseconds to parse at load.
  const { tombstoneMatcher } = await import('../core/normalize.js');
  const keyed = await purgeKeyed(ctx, tombstones);
  return [...new Set(tombstones.map((t) => t.scope))].map(
    (scope) => [scope, tombstoneMatcher(tombstones, scope, keyed)] as const,
  );
}

/**
 * The matchers of the armed tombstones of `scopes`, one per scope that has any (none: []). The
 * tombstones are read every time (a forget on another instance holds at the next read); the
 * matchers are built once per list a store answers: a store that answers the same list while
 * none changed (the Postgres store, by the tenant's tombstone version) spares the rebuild.
 */
export async function scopeMatchers(ctx: EngineContext, scopes: string[]): Promise<Matchers> {
  const tombstones = await ctx.store.tombstones(scopes);
  if (tombstones.length === 0) return [];
  let soon = built.get(tombstones);
  if (!soon) {
    soon = matchersOf(ctx, tombstones);
    built.set(tombstones, soon);
    // A failed build (the purge secret's read) is not kept: the next call tries again.
    soon.catch(() => built.delete(tombstones));
  }
  return soon;
}

/**
 * A check for "matches a tombstone of another scope this binding reads", loaded once per call
 * (scopeMatchers: read every time, built once per list).
 */
export async function rejectedHere(ctx: EngineContext): Promise<RejectedHere> {
  const scopes = [...readableScopes(ctx.binding), ...(ctx.binding.guards ?? [])];
  if (scopes.length < 2) return NONE;
  const matchers = await scopeMatchers(ctx, scopes);
  if (matchers.length === 0) return NONE;
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
