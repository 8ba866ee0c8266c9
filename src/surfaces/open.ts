// Opening an engine for a surface: resolve the store location (--store, MNEME_HOME, ~/.mneme),
// open the backend, bind the project of the working directory.
import os from 'node:os';
import path from 'node:path';
import { SchemaRegistry } from '../core/schema.js';
import type { Clock } from '../core/time.js';
import type { Binding } from '../engine/context.js';
import { Engine } from '../engine/engine.js';
import { FileStore } from '../store/files/file-store.js';
import { bindProject } from './project.js';

export interface OpenOptions {
  store?: string;
  cwd?: string;
  binding?: Binding;
  surface?: 'human' | 'agent';
  clock?: Clock;
  env?: NodeJS.ProcessEnv;
}

export function storeHome(opts: { store?: string; env?: NodeJS.ProcessEnv }): string {
  const env = opts.env ?? process.env;
  if (opts.store) return path.resolve(opts.store);
  if (env.MNEME_HOME) return path.resolve(env.MNEME_HOME);
  return path.join(os.homedir(), '.mneme');
}

export async function openEngine(opts: OpenOptions = {}): Promise<Engine> {
  const env = opts.env ?? process.env;
  const lockTimeout = Number(env.MNEME_LOCK_TIMEOUT_MS);
  const store = await FileStore.open(storeHome(opts), {
    durable: env.MNEME_DURABLE !== '0',
    // How long a writer waits for the store lock before a clear `locked` error (default 10 s).
    ...(Number.isInteger(lockTimeout) && lockTimeout > 0 ? { lockTimeoutMs: lockTimeout } : {}),
  });
  return new Engine({
    store,
    clock: opts.clock ?? (() => new Date()),
    registry: new SchemaRegistry(),
    binding: opts.binding ?? bindProject(opts.cwd ?? process.cwd()),
    surface: opts.surface ?? 'human',
  });
}
