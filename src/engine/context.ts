// What the engine is given, never reaches for: the store, the clock, the type registry and the
// scope this engine is bound to. A surface binds the scope once at start; no call can widen it.
import type { Embedder } from '../core/embed.js';
import type { RankingModel } from '../core/ranking.js';
import { GLOBAL_SCOPE } from '../core/scope.js';
import type { SchemaRegistry } from '../core/schema.js';
import type { Clock } from '../core/time.js';
import type { Store } from '../store/port.js';

export interface Binding {
  /** The project scope writes go to by default (null when bound to global only). */
  project: string | null;
  /** Human-readable identity of the project (remote or path), for status output. */
  identity: string | null;
  /**
   * Projects this reader acts for without reading them (an API token bound to projects reading
   * global alone): their tombstones still withhold what they rejected. Never widens a read.
   */
  guards?: readonly string[];
  /**
   * Who reads through this binding, when a surface serves a principal (an API token): the
   * projects it may read. The outbound filter (outbound.ts) decides by it; absent: every project
   * (the local user, a CLI, a hook).
   */
  reader?: { projects: readonly string[] | '*' };
}

/**
 * The project's files, as the engine may read them for source bindings (injected by a surface
 * so the engine stays testable). Paths are project-relative and already checked by the engine;
 * a reader must still refuse anything that resolves outside `root` or is not a regular file.
 */
export interface SourceFiles {
  root: string;
  read(rel: string): Buffer | null;
  /** The commit HEAD points at; null without a repository or before the first commit. */
  head(): string | null;
  /** Whether `commit` is HEAD or one of its ancestors; null when that cannot be told. */
  isAncestor(commit: string): boolean | null;
  /**
   * The repository's tracked files (`git ls-files`: .gitignore honoured), project-relative and
   * '/'-separated; null when git cannot list them here (no repository, no git). The knowledge
   * index reads only these.
   */
  tracked?(): string[] | null;
  /**
   * Where a project path really leads, every symlink resolved: its project-relative target
   * ('/'-separated), 'outside' when it leaves the project, null when nothing is there.
   */
  target?(rel: string): string | 'outside' | null;
}

export interface EngineContext {
  store: Store;
  clock: Clock;
  registry: SchemaRegistry;
  binding: Binding;
  /** Human surfaces may see quarantined memories; agent surfaces never do. */
  surface: 'human' | 'agent';
  /** The bound project's files (source binding and drift); absent where there is no project. */
  files?: SourceFiles;
  /** The optional vector arm's embedder; absent, recall is lexical only (the default). */
  embedder?: Embedder;
  /**
   * The ranking model recall scores with (core/ranking.ts). The composition root passes
   * DEFAULT_RANKING; the benchmark harness passes variants for its ablations. Absent: default.
   */
  ranking?: RankingModel;
  /** The largest artifact a remember may carry (setting artifacts.max_bytes; default 64 MiB). */
  artifactMaxBytes?: number;
}

export const readableScopes = (b: Binding): string[] =>
  b.project ? [b.project, GLOBAL_SCOPE] : [GLOBAL_SCOPE];
