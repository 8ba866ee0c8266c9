// Putting the app on a socket: open the store once, build per-request engines over it, bind MCP
// to the starting directory's project, and listen. Loopback unless a token file is given.
// With a Postgres URL (startDbServer) the server keeps no local state: every request carries a
// bearer token, the token names the tenant, and engines are built per request over its store.
import { serve, type ServerType } from '@hono/node-server';
import { MnemeError } from '../../core/errors.js';
import type { Clock } from '../../core/time.js';
import { composeServedStore, composeServedTenants, type Database, type Store } from '../compose.js';
import { loadSettings, type LoadedSettings, type Settings } from '../config/settings.js';
import { mnemeVersion } from '../install-root.js';
import { createApp, type AppOptions } from './app.js';
import { isLoopback, tokenFileResolver, type Caller, type TokenResolver } from './auth.js';
import { Metrics } from './metrics.js';
import { Sessions } from './session.js';

export interface ServeOptions {
  store?: string;
  /** The command's settings (else loaded from `store` and `env`). */
  settings?: LoadedSettings;
  cwd: string;
  env: NodeJS.ProcessEnv;
  host?: string;
  port?: number;
  tokenFile?: string;
  /** A resolver other than a token file (e.g. a Postgres tenants table). */
  resolveToken?: TokenResolver;
  clock?: Clock;
  log?: (line: string) => void;
}

export interface RunningServer {
  url: string;
  sessions: Sessions;
  store: Store;
  close(): Promise<void>;
}

export const DEFAULT_PORT = 7411; // keep in step with cli.ts

export async function startServer(o: ServeOptions): Promise<RunningServer> {
  const host = o.host ?? '127.0.0.1';
  const resolveToken = o.resolveToken ?? (o.tokenFile ? tokenFileResolver(o.tokenFile) : undefined);
  if (!isLoopback(host) && !resolveToken)
    throw new MnemeError('refused', `binding ${host} needs tokens: every request must carry one`, {
      hint: 'pass --token-file FILE (one token per line), or bind 127.0.0.1',
    });
  const served = await composeServedStore({
    store: o.store,
    settings: o.settings,
    cwd: o.cwd,
    env: o.env,
    clock: o.clock,
  });
  const sessions = new Sessions();
  const app = createApp({
    engineFor: ({ binding, surface, root }) => served.engineFor({ binding, surface, root }),
    resolveToken,
    requireToken: !isLoopback(host),
    sessions,
    archive: served.archive,
    reportsDir: served.reportsDir,
    mcpEngine: served.mcpEngine,
    home: served.home,
    metrics: new Metrics(),
    gauges: () => served.gauges(),
    version: mnemeVersion(),
    log: o.log,
  });
  const { url, stop } = await listen(app, host, o.port, slowClientLimits(served.settings));
  return {
    url,
    sessions,
    store: served.store,
    close: async () => {
      await stop();
      await served.close();
    },
  };
}

/**
 * Slow clients are cut off: request headers must arrive within serve.headers_timeout_ms (10 s)
 * and a whole request within serve.request_timeout_ms (60 s).
 */
export function slowClientLimits(s: Settings) {
  const headersTimeout = s.serve.headers_timeout_ms;
  const requestTimeout = Math.max(headersTimeout, s.serve.request_timeout_ms);
  return {
    headersTimeout,
    requestTimeout,
    connectionsCheckingInterval: Math.min(1_000, headersTimeout),
  };
}

async function listen(
  app: ReturnType<typeof createApp>,
  host: string,
  wanted: number | undefined,
  limits: ReturnType<typeof slowClientLimits>,
) {
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve(
      { fetch: app.fetch, hostname: host, port: wanted ?? DEFAULT_PORT, serverOptions: limits },
      () => resolve(s),
    );
    s.once('error', reject);
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : (wanted ?? DEFAULT_PORT);
  const hostPart = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    url: `http://${hostPart}:${port}`,
    stop: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}

export interface DbServeOptions {
  /** postgres://… (or store.database_url, resolved by the caller). */
  db: string;
  /** The command's settings (else the environment's). */
  settings?: LoadedSettings;
  host?: string;
  port?: number;
  poolSize?: number;
  clock?: Clock;
  log?: (line: string) => void;
}

export interface RunningDbServer {
  url: string;
  database: Database;
  close(): Promise<void>;
}

/**
 * The stateless server over a shared Postgres database: no file is written. Every request needs
 * `Authorization: Bearer TOKEN` (401 and no data otherwise, loopback included); the token gives
 * the tenant and the projects it may bind. MCP is bound to the token's first allowed project,
 * or the global scope when the token allows every project. There is no dashboard.
 */
export async function startDbServer(o: DbServeOptions): Promise<RunningDbServer> {
  const host = o.host ?? '127.0.0.1';
  const settings = o.settings ?? loadSettings({}, process.env, { storeFile: false });
  const served = await composeServedTenants({
    db: o.db,
    poolSize: o.poolSize,
    clock: o.clock,
    settings,
    ...(o.log ? { log: o.log } : {}),
  });
  const tokenOf = (caller: Caller) => {
    if (caller.kind !== 'token')
      throw new MnemeError('refused', 'this server serves tenants: a bearer token is required', {
        hint: 'create one with `mneme token create --tenant NAME --db URL`',
      });
    return caller.principal;
  };
  const opts: AppOptions = {
    engineFor: ({ binding, surface, tenant, root }) =>
      served.engineFor({ binding, surface, tenant, root }),
    resolveToken: served.resolveToken,
    requireToken: true,
    dashboard: false,
    archive: null,
    reportsDir: null,
    mcpEngineFor: (caller) => {
      const p = tokenOf(caller);
      const project = p.projects === '*' ? null : (p.projects[0] ?? null);
      return served.engineFor({
        binding: { project, identity: project, reader: { projects: p.projects } },
        surface: 'agent',
        tenant: p.tenant,
      });
    },
    metrics: new Metrics(),
    gauges: async (caller) => {
      const p = tokenOf(caller);
      return served.gauges(p.tenant, p.projects);
    },
    version: mnemeVersion(),
    probe: async () => {
      await served.database.pool.query('SELECT 1');
    },
    log: o.log,
  };
  let stop: (() => Promise<void>) | null = null;
  try {
    const l = await listen(createApp(opts), host, o.port, slowClientLimits(settings.settings));
    stop = l.stop;
    return {
      url: l.url,
      database: served.database,
      close: async () => {
        await stop?.();
        await served.close();
      },
    };
  } catch (e) {
    await served.close();
    throw e;
  }
}
