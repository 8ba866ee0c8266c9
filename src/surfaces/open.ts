// Which store a command works on: the one reading of the store flags (--store, --db, --tenant,
// MNEME_HOME, ~/.mneme), where local state lives, and how a child is pointed at the same store.
// Nothing here opens anything: surfaces/compose.ts builds stores and engines from these.
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { MnemeError } from '../core/errors.js';

export function storeHome(opts: { store?: string; env?: NodeJS.ProcessEnv }): string {
  const env = opts.env ?? process.env;
  if (opts.store) return path.resolve(opts.store);
  if (env.MNEME_HOME) return path.resolve(env.MNEME_HOME);
  return path.join(os.homedir(), '.mneme');
}

/** The global flags that say which store a command works on, as every command receives them. */
export interface StoreFlags {
  store?: string;
  db?: string;
  tenant?: string;
}

export type StoreTarget =
  { kind: 'files'; root: string } | { kind: 'postgres'; url: string; tenant: string };

/**
 * The one reading of the store flags: --db (or $MNEME_DATABASE_URL unless --store is given)
 * selects Postgres for one tenant; otherwise the embedded store at --store, $MNEME_HOME or
 * ~/.mneme. Every command, hook and child process resolves its store here.
 */
export function storeTarget(flags: StoreFlags, env: NodeJS.ProcessEnv = process.env): StoreTarget {
  if (flags.db && flags.store) throw new MnemeError('invalid', 'pass --store or --db, not both');
  const url = flags.db ?? (flags.store ? undefined : env.MNEME_DATABASE_URL);
  if (!url) return { kind: 'files', root: storeHome({ store: flags.store, env }) };
  const tenant = flags.tenant ?? env.MNEME_TENANT;
  if (!tenant) {
    throw new MnemeError('invalid', 'a Postgres store needs a tenant', {
      hint: 'pass --tenant NAME or set MNEME_TENANT (create one with `mneme tenant create NAME`)',
    });
  }
  return { kind: 'postgres', url, tenant };
}

/**
 * Where a command keeps what is local to this machine — the hook log, the distiller's locks,
 * sleep and fsck reports (the session archive is the store's own: files, or the tenant's rows
 * on Postgres): the embedded store's own
 * directory, or for a Postgres store a directory of its own per database and tenant
 * ($XDG_STATE_HOME/mneme/…, default ~/.local/state/mneme/…), never an embedded store's home.
 */
export function localRoot(flags: StoreFlags, env: NodeJS.ProcessEnv = process.env): string {
  const t = storeTarget(flags, env);
  if (t.kind === 'files') return t.root;
  let where = t.url;
  try {
    const u = new URL(t.url);
    u.password = ''; // the same database whatever password reaches it
    where = u.toString();
  } catch {
    /* not a URL pg would take either; hash it as given */
  }
  const id = createHash('sha256').update(`${where}\u0000${t.tenant}`).digest('hex').slice(0, 12);
  const base = env.XDG_STATE_HOME || path.join(env.HOME || os.homedir(), '.local', 'state');
  return path.join(base, 'mneme', `pg-${t.tenant.replace(/[^a-zA-Z0-9_.-]/g, '_')}-${id}`);
}

/**
 * How a detached child (distiller, rebuild, sleep) is pointed at the same store: --store on its
 * command line, or the database and tenant in its environment (a URL may carry a password,
 * which a command line would show to every user of the machine).
 */
export function childStore(
  flags: StoreFlags,
  env: NodeJS.ProcessEnv,
): { args: string[]; env: NodeJS.ProcessEnv } {
  const t = storeTarget(flags, env);
  if (t.kind === 'postgres')
    return { args: [], env: { ...env, MNEME_DATABASE_URL: t.url, MNEME_TENANT: t.tenant } };
  return { args: flags.store ? ['--store', flags.store] : [], env };
}
