// What the HTTP surface is given: a way to build an engine bound to one project over the shared
// store (so any Store adapter works), how to resolve bearer tokens, and the optional parts
// (dashboard sessions, the session archive for traces, the reports directory, the MCP engine).
import type { Binding } from '../../engine/engine.js';
import type { Engine } from '../../engine/engine.js';
import type { SessionStore } from '../compose.js';
import type { Caller, TokenResolver } from './auth.js';
import type { Metrics, StoreGauges } from './metrics.js';
import type { Sessions } from './session.js';

export interface EngineRequest {
  binding: Binding;
  surface: 'human' | 'agent';
  /** The token's tenant (Postgres); null for the embedded store and the local user. */
  tenant: string | null;
  /** The project's repository root on this machine, when known (source re-reads). */
  root?: string | null;
}

export interface AppOptions {
  /** An engine bound to this project over the shared store; cheap, built per request. */
  engineFor: (r: EngineRequest) => Engine;
  /** Resolves a bearer token to what it grants; without it every token is refused. */
  resolveToken?: TokenResolver;
  /** True on a non-loopback bind: every request must carry a valid bearer token. */
  requireToken?: boolean;
  /** Dashboard sessions (login tickets, cookies, CSRF); absent means nobody can log in. */
  sessions?: Sessions;
  /** The raw session archive, to open the transcript excerpts provenance points at. */
  archive?: SessionStore | null;
  /** `<store>/reports`, if the store has one. */
  reportsDir?: string | null;
  /** The engine MCP over HTTP serves (surface 'agent', bound when the server started). */
  mcpEngine?: Engine | null;
  /** The MCP engine per caller instead (Postgres: the token's tenant); wins over mcpEngine. */
  mcpEngineFor?: (caller: Caller) => Engine;
  /** The project the server was started in: the dashboard opens on it (absent: global only). */
  home?: Binding;
  /** False with no dashboard at all (`--db`: login is a local-user feature). Default true. */
  dashboard?: boolean;
  /** Counters for /metrics; absent means no /metrics route. */
  metrics?: Metrics;
  /** Store gauges for /metrics, for this caller (its tenant with `--db`). */
  gauges?: (caller: Caller) => Promise<StoreGauges>;
  /** What an unauthenticated /api/health checks (throws when the store does not answer). */
  probe?: () => Promise<void>;
  /** Largest request body accepted, in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Where unexpected errors are logged (never sent to the client). */
  log?: (line: string) => void;
  version?: string;
}

export type HttpEnv = { Variables: { caller: Caller } };
