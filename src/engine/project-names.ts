// Readable project names. A project scope is an opaque id (`acme-alpha-cf633588`: a slug and a
// hash of the identity); the identity itself — the canonical remote, or the repository path —
// is what a person recognises. The engine records it, store-wide, the first time a binding
// writes to its project (and when a person's view is opened there), so the dashboard can name
// every project by it. Bookkeeping, not memory: a lost record only costs the readable name.
import type { EngineContext } from './context.js';

/** The store-wide record: project scope → identity (remote or path). */
const RECORD = 'project-names';

export interface ProjectEntry {
  scope: string;
  /** The remote or path; the scope's slug when the store never recorded one. */
  name: string;
  /** Whether `name` is the recorded identity (false: only the slug of the scope is known). */
  named: boolean;
  /** Active memories in the project. */
  memories: number;
}

/** The scope's readable part: its slug without the identity hash. */
export const slugOf = (scope: string): string => scope.replace(/-[0-9a-f]{8}$/, '');

export async function recordedNames(ctx: EngineContext): Promise<Record<string, string>> {
  return (await ctx.store.sessions.readShared<Record<string, string>>(RECORD)) ?? {};
}

/**
 * Records the binding's identity as its project's name when the record lacks or differs from
 * it. A binding made from a bare scope id (identity = the id) names nothing.
 */
export async function noteProjectName(ctx: EngineContext): Promise<void> {
  const { project, identity } = ctx.binding;
  if (!project || !identity || identity === project) return;
  const names = await recordedNames(ctx);
  if (names[project] === identity) return;
  await ctx.store.sessions.writeShared(RECORD, { ...names, [project]: identity });
}

/** Every project scope with memories, named and counted, by name. */
export async function listProjects(ctx: EngineContext): Promise<ProjectEntry[]> {
  const [{ byScope }, names] = await Promise.all([ctx.store.status(), recordedNames(ctx)]);
  return Object.entries(byScope)
    .filter(([scope]) => scope !== 'global')
    .map(([scope, memories]) => ({
      scope,
      name: names[scope] ?? slugOf(scope),
      named: names[scope] !== undefined,
      memories,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.scope < b.scope ? -1 : 1));
}
