// What the engine is given, never reaches for: the store, the clock, the type registry and the
// scope this engine is bound to. A surface binds the scope once at start; no call can widen it.
import { GLOBAL_SCOPE } from '../core/scope.js';
import type { SchemaRegistry } from '../core/schema.js';
import type { Clock } from '../core/time.js';
import type { Store } from '../store/port.js';

export interface Binding {
  /** The project scope writes go to by default (null when bound to global only). */
  project: string | null;
  /** Human-readable identity of the project (remote or path), for status output. */
  identity: string | null;
}

export interface EngineContext {
  store: Store;
  clock: Clock;
  registry: SchemaRegistry;
  binding: Binding;
  /** Human surfaces may see quarantined memories; agent surfaces never do. */
  surface: 'human' | 'agent';
}

export const readableScopes = (b: Binding): string[] =>
  b.project ? [b.project, GLOBAL_SCOPE] : [GLOBAL_SCOPE];
