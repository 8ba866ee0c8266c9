// Putting the app on a socket: open the store once, build per-request engines over it, bind MCP
// to the starting directory's project, and listen. Loopback unless a token file is given.
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { MnemeError } from '../../core/errors.js';
import { SchemaRegistry } from '../../core/schema.js';
import type { Clock } from '../../core/time.js';
import { Engine } from '../../engine/engine.js';
import { FileStore } from '../../store/files/file-store.js';
import { SessionFiles } from '../../store/files/session-files.js';
import type { Store } from '../../store/port.js';
import { mnemeVersion } from '../install-root.js';
import { storeHome } from '../open.js';
import { bindProject } from '../project.js';
import { createApp } from './app.js';
import { isLoopback, tokenFileResolver, type TokenResolver } from './auth.js';
import { Sessions } from './session.js';

export interface ServeOptions {
  store?: string;
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
  const root = storeHome({ store: o.store, env: o.env });
  const store = await FileStore.open(root, { durable: o.env.MNEME_DURABLE !== '0' });
  const clock = o.clock ?? (() => new Date());
  const registry = new SchemaRegistry();
  const sessions = new Sessions();
  const mcpEngine = new Engine({
    store,
    clock,
    registry,
    binding: bindProject(o.cwd),
    surface: 'agent',
  });
  const app = createApp({
    engineFor: ({ binding, surface }) => new Engine({ store, clock, registry, binding, surface }),
    resolveToken,
    requireToken: !isLoopback(host),
    sessions,
    archive: new SessionFiles(root),
    reportsDir: path.join(root, 'reports'),
    mcpEngine,
    version: mnemeVersion(),
    log: o.log,
  });
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: o.port ?? DEFAULT_PORT }, () =>
      resolve(s),
    );
    s.once('error', reject);
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : (o.port ?? DEFAULT_PORT);
  const hostPart = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    url: `http://${hostPart}:${port}`,
    sessions,
    store,
    close: async () => {
      await new Promise<void>((r) => {
        server.close(() => r());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      await store.close();
    },
  };
}
