// Which store a command works on: the one reading of the store flags (--store, --db, --tenant,
// --config, MNEME_HOME, ~/.mneme), where local state lives, and how a child is pointed at the same store.
// Nothing here opens anything: surfaces/compose.ts builds stores and engines from these.
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { redactUrl } from '../core/redact.js';
import { resolveStore, type StoreTarget } from './config/settings.js';

/** The flags that say which store a command works on, as every command receives them. */
export interface StoreFlags {
  store?: string;
  db?: string;
  tenant?: string;
  /** --config FILE: a config file instead of the store's config.toml (it may name the store). */
  config?: string;
}

export type { StoreTarget };

/**
 * The one reading of the store flags: --db (or $MNEME_DATABASE_URL unless --store is given)
 * selects Postgres for one tenant; otherwise the embedded store at --store, $MNEME_HOME, the
 * [store] of a --config file, or ~/.mneme (precedence and checks: config/settings.ts). Every
 * command, hook and child process resolves its store here.
 */
export function storeTarget(flags: StoreFlags, env: NodeJS.ProcessEnv = process.env): StoreTarget {
  return resolveStore(flags, env);
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
  // A --config file goes along (it may hold the store and the child's settings).
  const config = flags.config ? ['--config', path.resolve(flags.config)] : [];
  if (t.kind === 'postgres')
    return { args: config, env: { ...env, MNEME_DATABASE_URL: t.url, MNEME_TENANT: t.tenant } };
  return { args: [...config, ...(flags.store ? ['--store', flags.store] : [])], env };
}

/**
 * A store as its status names it (`location`): the embedded store's directory, or the
 * database (password masked) and tenant. `mneme doctor` compares the hooks' and the MCP
 * server's stores in this form.
 */
export function storeLocation(t: StoreTarget): string {
  return t.kind === 'files' ? t.root : `${redactUrl(t.url)} (tenant ${t.tenant})`;
}
