// Opening an engine for a surface: resolve the store location (--store, MNEME_HOME, ~/.mneme),
// open the backend, bind the project of the working directory.
import os from 'node:os';
import path from 'node:path';
import { SchemaRegistry } from '../core/schema.js';
import type { Clock } from '../core/time.js';
import type { Binding } from '../engine/context.js';
import { Engine } from '../engine/engine.js';
import { FileStore } from '../store/files/file-store.js';
import { bindProject, findRepoRoot } from './project.js';
import { projectFiles } from './source-files.js';

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
  const store = await FileStore.open(storeHome(opts), {
    durable: env.MNEME_DURABLE !== '0',
  });
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
    clock: opts.clock ?? (() => new Date()),
    registry: new SchemaRegistry(),
    binding: opts.binding ?? bindProject(cwd),
    surface: opts.surface ?? 'human',
  });
}
