// Opening an engine for a surface: resolve the store location (--store, MNEME_HOME, ~/.mneme),
// open the backend, bind the project of the working directory.
import os from 'node:os';
import path from 'node:path';
import { SchemaRegistry } from '../core/schema.js';
import type { Clock } from '../core/time.js';
import type { Binding } from '../engine/context.js';
import { Engine } from '../engine/engine.js';
import { MnemeError } from '../core/errors.js';
import { FileStore } from '../store/files/file-store.js';
import type { Store } from '../store/port.js';
import { embedderFromEnv } from './embed/settings.js';
import { bindProject, findRepoRoot } from './project.js';
import { projectFiles } from './source-files.js';

export interface OpenOptions {
  store?: string;
  /** A shared Postgres store (default $MNEME_DATABASE_URL unless --store is given). */
  db?: string;
  /** The tenant of the Postgres store (default $MNEME_TENANT). */
  tenant?: string;
  cwd?: string;
  binding?: Binding;
  surface?: 'human' | 'agent';
  clock?: Clock;
  env?: NodeJS.ProcessEnv;
  /** The vector arm's embedder (default $MNEME_EMBEDDER; off when neither is set). */
  embedder?: string;
  /** Refuse (code `locked`) instead of rebuilding the whole index inline: for hooks. */
  deferRebuild?: boolean;
}

export function storeHome(opts: { store?: string; env?: NodeJS.ProcessEnv }): string {
  const env = opts.env ?? process.env;
  if (opts.store) return path.resolve(opts.store);
  if (env.MNEME_HOME) return path.resolve(env.MNEME_HOME);
  return path.join(os.homedir(), '.mneme');
}

/** --db (or $MNEME_DATABASE_URL) selects Postgres for one tenant; otherwise the embedded store. */
export async function openStore(opts: OpenOptions = {}): Promise<Store> {
  const env = opts.env ?? process.env;
  if (opts.db && opts.store) throw new MnemeError('invalid', 'pass --store or --db, not both');
  const db = opts.db ?? (opts.store ? undefined : env.MNEME_DATABASE_URL);
  if (db) {
    const tenant = opts.tenant ?? env.MNEME_TENANT;
    if (!tenant) {
      throw new MnemeError('invalid', 'a Postgres store needs a tenant', {
        hint: 'pass --tenant NAME or set MNEME_TENANT (create one with `mneme tenant create NAME`)',
      });
    }
    // pg is loaded only when a database is used, so the embedded path starts fast.
    const { PostgresStore } = await import('../store/postgres/postgres-store.js');
    return PostgresStore.open(db, { tenant });
  }
  const lockTimeout = Number(env.MNEME_LOCK_TIMEOUT_MS);
  return FileStore.open(storeHome(opts), {
    durable: env.MNEME_DURABLE !== '0',
    // How long a writer waits for the store lock before a clear `locked` error (default 10 s).
    ...(Number.isInteger(lockTimeout) && lockTimeout > 0 ? { lockTimeoutMs: lockTimeout } : {}),
    ...(opts.deferRebuild ? { deferFullRebuild: true } : {}),
  });
}

export async function openEngine(opts: OpenOptions = {}): Promise<Engine> {
  const embedder = embedderFromEnv(opts.env ?? process.env, opts.embedder);
  const store = await openStore(opts);
  const cwd = opts.cwd ?? process.cwd();
  let files;
  try {
    files = projectFiles(findRepoRoot(cwd)?.root ?? cwd);
  } catch {
    files = undefined; // an unreadable working directory: no source bindings from here
  }
  return new Engine({
    store,
    ...(files ? { files } : {}),
    ...(embedder ? { embedder } : {}),
    clock: opts.clock ?? (() => new Date()),
    registry: new SchemaRegistry(),
    binding: opts.binding ?? bindProject(cwd),
    surface: opts.surface ?? 'human',
  });
}
