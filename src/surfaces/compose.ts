// The composition root: the only place that builds a store (files or Postgres), a session
// archive, an embedder, a clock and an engine. Every surface — the CLI, hooks, MCP over stdio,
// and the HTTP server's API, MCP and dashboard — gets its engine from here, so each has the same
// abilities on both stores: source re-reads through the project's files, the vector arm where
// configured, the lock timeout, the tenant. Postgres and the HTTP database layer are loaded only
// when used, so the CLI's fast path (a hook, `mneme recall`) stays small.
import path from 'node:path';
import type { Embedder } from '../core/embed.js';
import { MnemeError } from '../core/errors.js';
import { SchemaRegistry } from '../core/schema.js';
import type { Clock } from '../core/time.js';
import { DEFAULT_RANKING, type RankingModel } from '../core/ranking.js';
import { createEngine, type Binding, type Engine, type SourceFiles } from '../engine/engine.js';
import { FileStore } from '../store/files/file-store.js';
import type { Store } from '../store/port.js';
import type { Database } from '../store/postgres/database.js';
import type { Governance } from '../store/postgres/tenants.js';
import type { SessionStore } from '../store/sessions.js';
import { loadSettings, type LoadedSettings, type Settings } from './config/settings.js';
import { embedderFrom } from './embed/settings.js';
import type { StoreFlags } from './open.js';
import { bindProject, findRepoRoot } from './project.js';
import { projectFiles } from './source-files.js';

// What surfaces name from the store side, through the root: port types and local-file helpers.
export type { SessionMeta, SessionRef, SessionStore } from '../store/sessions.js';
export type { JournalDamage, Store, VerifyReport } from '../store/port.js';
export type { Database } from '../store/postgres/database.js';
export type { Governance, TenantRow, TokenRow } from '../store/postgres/tenants.js';
export { writeFileAtomic } from '../store/files/atomic.js';
export { peekIndexSeq } from '../store/files/index-peek.js';

/** `mneme tenant create`: a tenant of a shared Postgres store (false when it exists). */
export async function createTenant(url: string, name: string): Promise<boolean> {
  const { createTenant, withDatabase } = await import('../store/postgres/tenants.js');
  return withDatabase(url, (db) => createTenant(db, name));
}

/** `mneme token create`: an API token for a tenant, returned once (stored hashed). */
export async function createToken(
  url: string,
  o: { tenant: string; projects: string[] | null; label?: string },
): Promise<string> {
  const { createToken, withDatabase } = await import('../store/postgres/tenants.js');
  return withDatabase(url, (db) => createToken(db, o));
}

/** `mneme tenant|token …` and `journal verify --operator`: governance of a shared database. */
export async function withGovernance<T>(
  url: string,
  fn: (g: Governance) => Promise<T>,
): Promise<T> {
  const { withGovernance } = await import('../store/postgres/tenants.js');
  return withGovernance(url, fn);
}

export interface OpenOptions extends StoreFlags {
  cwd?: string;
  binding?: Binding;
  surface?: 'human' | 'agent';
  clock?: Clock;
  env?: NodeJS.ProcessEnv;
  /** --embedder: the vector arm's embedder (else embed.embedder of the settings). */
  embedder?: string;
  /** The command's settings, when already loaded (else loaded from the flags and `env`). */
  settings?: LoadedSettings;
  /** Refuse (code `locked`) instead of rebuilding the whole index inline: for hooks. */
  deferRebuild?: boolean;
  /** The ranking model (default DEFAULT_RANKING); the benchmark harness passes its variants. */
  ranking?: RankingModel;
}

const systemClock: Clock = () => new Date();

/** The settings of one command: as given, or loaded from its flags and environment. */
const settingsOf = (opts: OpenOptions): LoadedSettings =>
  opts.settings ?? loadSettings(opts, opts.env ?? process.env);

/** --db (or $MNEME_DATABASE_URL) selects Postgres for one tenant; otherwise the embedded store. */
export async function openStore(opts: OpenOptions = {}): Promise<Store> {
  return storeFrom(settingsOf(opts), opts.deferRebuild === true);
}

async function storeFrom(l: LoadedSettings, deferRebuild: boolean): Promise<Store> {
  const target = l.target();
  if (target.kind === 'postgres') {
    // pg is loaded only when a database is used, so the embedded path starts fast.
    const { PostgresStore } = await import('../store/postgres/postgres-store.js');
    return PostgresStore.open(target.url, {
      tenant: target.tenant,
      lockTimeoutMs: l.settings.store.lock_timeout_ms,
    });
  }
  return FileStore.open(target.root, {
    durable: l.settings.store.durable,
    // How long a writer waits for the store lock before a clear `locked` error.
    lockTimeoutMs: l.settings.store.lock_timeout_ms,
    ...(deferRebuild ? { deferFullRebuild: true } : {}),
  });
}

/** The project's files under `dir` (its repository root), or none when unreadable. */
function filesAt(dir: string): SourceFiles | undefined {
  try {
    return projectFiles(findRepoRoot(dir)?.root ?? dir);
  } catch {
    return undefined; // an unreadable working directory: no source bindings from here
  }
}

interface Abilities {
  store: Store;
  clock: Clock;
  registry: SchemaRegistry;
  embedder?: Embedder;
  ranking?: RankingModel;
  /** Setting artifacts.max_bytes. */
  artifactMaxBytes?: number;
}

function assemble(
  a: Abilities,
  binding: Binding,
  surface: 'human' | 'agent',
  files: SourceFiles | undefined,
): Engine {
  return createEngine({
    store: a.store,
    ...(files ? { files } : {}),
    ...(a.embedder ? { embedder: a.embedder } : {}),
    clock: a.clock,
    registry: a.registry,
    binding,
    surface,
    ranking: a.ranking ?? DEFAULT_RANKING,
    ...(a.artifactMaxBytes !== undefined ? { artifactMaxBytes: a.artifactMaxBytes } : {}),
  });
}

/** An engine for one command or process: the store of the flags, the project of `cwd`. */
export async function openEngine(opts: OpenOptions = {}): Promise<Engine> {
  const l = settingsOf(opts);
  const embedder = embedderFrom(l.settings);
  const store = await storeFrom(l, opts.deferRebuild === true);
  const cwd = opts.cwd ?? process.cwd();
  return assemble(
    {
      store,
      clock: opts.clock ?? systemClock,
      registry: new SchemaRegistry(),
      embedder,
      artifactMaxBytes: l.settings.artifacts.max_bytes,
      ...(opts.ranking ? { ranking: opts.ranking } : {}),
    },
    opts.binding ?? bindProject(cwd),
    opts.surface ?? 'human',
    filesAt(cwd),
  );
}

/**
 * The session archive of the store the flags name, for a command that needs it before (or
 * without) an engine — `distill --pending` lists the sessions with work. The same archive
 * `engine.archive()` hands out: files under the embedded store, the tenant's rows on Postgres.
 */
export async function openArchive(
  opts: OpenOptions = {},
): Promise<{ archive: SessionStore; close: () => Promise<void> }> {
  const store = await openStore(opts);
  return { archive: store.sessions, close: () => store.close() };
}

/** What a server asks for per request: a binding, a surface, and the project's root if known. */
export interface ServedEngineRequest {
  binding: Binding;
  surface: 'human' | 'agent';
  /** The repository root on this machine when the caller named the project by path. */
  root?: string | null;
}

/** The project's files for a served request: its root, or the server's own project. */
function servedFiles(
  r: ServedEngineRequest,
  home: { binding: Binding; files: SourceFiles | undefined } | null,
): SourceFiles | undefined {
  if (r.root) return filesAt(r.root);
  if (home && r.binding.project !== null && r.binding.project === home.binding.project)
    return home.files;
  return undefined;
}

export interface ServedStore {
  root: string;
  store: Store;
  /** The settings the server runs with (timeouts and the like). */
  settings: Settings;
  /** An engine over the shared store for one request (cheap). */
  engineFor(r: ServedEngineRequest): Engine;
  /** The MCP engine: the starting directory's project, surface agent. */
  mcpEngine: Engine;
  /** The starting directory's project (the dashboard opens on it). */
  home: Binding;
  /** The store's session archive (trace reads provenance in it). */
  archive: SessionStore;
  reportsDir: string;
  gauges(): Promise<{ journalLength: number; proposalsPending: number }>;
  close(): Promise<void>;
}

/** `mneme serve` over the embedded store: one store, engines per request, MCP bound to `cwd`. */
export async function composeServedStore(o: {
  store?: string;
  config?: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  clock?: Clock;
  embedder?: string;
  settings?: LoadedSettings;
}): Promise<ServedStore> {
  // Without settings from the command, an ambient $MNEME_DATABASE_URL does not apply here.
  const l =
    o.settings ??
    loadSettings(
      { store: o.store, config: o.config, embedder: o.embedder },
      { ...o.env, MNEME_DATABASE_URL: '' },
    );
  const target = l.target();
  if (target.kind !== 'files') throw new MnemeError('invalid', 'serve --store takes a directory');
  const embedder = embedderFrom(l.settings);
  const store = await storeFrom(l, false);
  const a: Abilities = {
    store,
    clock: o.clock ?? systemClock,
    registry: new SchemaRegistry(),
    embedder,
    artifactMaxBytes: l.settings.artifacts.max_bytes,
  };
  const home = { binding: bindProject(o.cwd), files: filesAt(o.cwd) };
  return {
    root: target.root,
    store,
    settings: l.settings,
    engineFor: (r) => assemble(a, r.binding, r.surface, servedFiles(r, home)),
    mcpEngine: assemble(a, home.binding, 'agent', home.files),
    home: home.binding,
    archive: store.sessions,
    reportsDir: path.join(target.root, 'reports'),
    gauges: async () => ({
      journalLength: (await store.status()).journalHead.seq,
      proposalsPending: (await store.proposals({ state: 'pending' })).length,
    }),
    close: () => store.close(),
  };
}

export interface ServedTenants {
  database: Database;
  resolveToken(token: string): Promise<
    | {
        tenant: string;
        projects: string[] | '*';
        within: <T>(fn: () => Promise<T>) => Promise<T>;
      }
    | { refused: string; hint: string }
    | null
  >;
  engineFor(r: ServedEngineRequest & { tenant: string | null }): Engine;
  gauges(
    tenant: string | null,
    projects: readonly string[] | '*',
  ): Promise<{ journalLength: number; proposalsPending: number }>;
  close(): Promise<void>;
}

/**
 * `mneme serve --db`: one Postgres database, a store per tenant seen in a valid token (engines
 * are built synchronously per request, so the store lookup happens while the token resolves).
 */
export async function composeServedTenants(o: {
  db: string;
  poolSize?: number;
  clock?: Clock;
  env?: NodeJS.ProcessEnv;
  /** The command's settings (else the environment's: there is no store directory). */
  settings?: LoadedSettings;
  /** The server's log (a usage write that failed and is retried). */
  log?: (line: string) => void;
}): Promise<ServedTenants> {
  const settings = (o.settings ?? loadSettings({}, o.env ?? process.env, { storeFile: false }))
    .settings;
  const embedder: Embedder | undefined = embedderFrom(settings);
  const { openDatabase } = await import('../store/postgres/database.js');
  const database = await openDatabase(o.db, {
    poolSize: o.poolSize,
    lockTimeoutMs: settings.store.lock_timeout_ms,
    ...(o.log ? { log: o.log } : {}),
  });
  const clock = o.clock ?? systemClock;
  const registry = new SchemaRegistry();
  const stores = new Map<string, Store>();
  const storeOf = (tenant: string | null): Store => {
    const s = tenant === null ? undefined : stores.get(tenant);
    if (!s)
      throw new MnemeError('refused', 'this server serves tenants: a bearer token is required', {
        hint: 'create one with `mneme token create --tenant NAME --db URL`',
      });
    return s;
  };
  return {
    database,
    resolveToken: async (token) => {
      const grant = await database.resolveToken(token);
      if (!grant || 'refused' in grant) return grant;
      stores.set(grant.tenant, await database.storeFor(grant.tenant));
      return { tenant: grant.tenant, projects: grant.projects ?? '*', within: grant.within };
    },
    engineFor: (r) =>
      assemble(
        {
          store: storeOf(r.tenant),
          clock,
          registry,
          embedder,
          artifactMaxBytes: settings.artifacts.max_bytes,
        },
        r.binding,
        r.surface,
        // A team server reads no file of its own host for a request: no source binding, no
        // source re-read, no knowledge refresh by server path (the callers' repositories are
        // on their machines).
        undefined,
      ),
    gauges: async (tenant, projects) => {
      const store = storeOf(tenant);
      const scopes = projects === '*' ? undefined : ['global', ...projects];
      return {
        journalLength: (await store.status()).journalHead.seq,
        proposalsPending: (await store.proposals({ state: 'pending', scopes })).length,
      };
    },
    close: () => database.close(),
  };
}
