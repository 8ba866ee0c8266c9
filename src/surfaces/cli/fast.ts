// The fast dispatch: `mneme hook <event>` (run by the agent host at every session start, prompt
// and edit) and plain `mneme recall WORDS` start without commander and without the modules of
// every other command, so a whole process costs little more than node's own start.
//
// This parser understands only what it can answer exactly as the full CLI would: the global
// --json, --config, --store, --db and --tenant, recall's --limit/--as-of/--known-at/--explain/--min-trust, hook's --host.
// For anything else — help, an unknown or repeated option, a value that fails its check, a
// missing argument, `--`, a value that starts with "-" — it returns null and the caller runs the
// full CLI, which gives the usual answer or error. The flags' meaning (defaults, checks, the
// engine call and the printing) comes from shared.ts and hooks/hook-command.ts, which the full
// CLI uses too; test/cli-fast-path.test.ts holds the two paths to the same output.
import { LIMITS } from '../../core/limits.js';
import type { Engine } from '../../engine/engine.js';
import { openEngine } from '../compose.js';
import type { StoreFlags } from '../open.js';
import {
  MIN_TRUST_CHOICES,
  RECALL_DEFAULT_LIMIT,
  cliSurface,
  parseIntOpt,
  recallAndPrint,
  reportError,
  type Io,
  type RecallFlags,
} from './shared.js';

export type FastCommand =
  | ({ cmd: 'recall'; words: string[]; flags: RecallFlags; json: boolean } & StoreFlags)
  | ({ cmd: 'hook'; event: string; host?: string; json: boolean } & StoreFlags);

type Kind = 'flag' | 'value';
const GLOBAL: Record<string, Kind> = {
  '--json': 'flag',
  '--config': 'value',
  '--store': 'value',
  '--db': 'value',
  '--tenant': 'value',
};
const COMMAND: Record<FastCommand['cmd'], Record<string, Kind>> = {
  recall: {
    '--limit': 'value',
    '--as-of': 'value',
    '--known-at': 'value',
    '--explain': 'flag',
    '--min-trust': 'value',
    '--no-knowledge': 'flag',
  },
  hook: { '--host': 'value' },
};

/** The command line as the fast path reads it, or null when the full CLI must handle it. */
export function parseFast(argv: readonly string[]): FastCommand | null {
  let cmd: FastCommand['cmd'] | null = null;
  const positionals: string[] = [];
  const opts = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('-') || arg === '-') {
      if (cmd !== null) positionals.push(arg);
      else if (arg === 'recall' || arg === 'hook') cmd = arg;
      else return null;
      continue;
    }
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const kind = GLOBAL[name] ?? (cmd ? COMMAND[cmd][name] : undefined);
    if (!kind || opts.has(name)) return null;
    if (kind === 'flag') {
      if (eq > 0) return null;
      opts.set(name, true);
      continue;
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value.startsWith('-')) return null;
    opts.set(name, value);
  }
  const str = (name: string) => {
    const v = opts.get(name);
    return typeof v === 'string' ? v : undefined;
  };
  // The store flags, as the full CLI passes them to every command.
  const where: StoreFlags = {};
  for (const k of ['store', 'db', 'tenant', 'config'] as const) {
    const v = str(`--${k}`);
    if (v !== undefined) where[k] = v;
  }
  if (cmd === 'hook') {
    if (positionals.length !== 1) return null;
    const host = str('--host');
    return {
      cmd,
      event: positionals[0]!,
      ...(host !== undefined ? { host } : {}),
      json: opts.has('--json'),
      ...where,
    };
  }
  if (cmd !== 'recall' || positionals.length === 0) return null;
  let limit = RECALL_DEFAULT_LIMIT;
  const limitText = str('--limit');
  if (limitText !== undefined) {
    try {
      limit = parseIntOpt('--limit')(limitText);
    } catch {
      return null; // the full CLI reports it
    }
  }
  // Past the bounds of the engine's recall schema, the full CLI gives its refusal.
  const query = positionals.join(' ');
  if (limit > LIMITS.recallLimit || query.length > LIMITS.queryChars || query.trim() === '')
    return null;
  const minTrust = str('--min-trust');
  if (minTrust !== undefined && !(MIN_TRUST_CHOICES as readonly string[]).includes(minTrust))
    return null;
  const flags: RecallFlags = { limit };
  const asOf = str('--as-of');
  const knownAt = str('--known-at');
  if (asOf !== undefined) flags.asOf = asOf;
  if (knownAt !== undefined) flags.knownAt = knownAt;
  if (opts.has('--explain')) flags.explain = true;
  if (opts.has('--no-knowledge')) flags.knowledge = false;
  if (minTrust !== undefined) flags.minTrust = minTrust as RecallFlags['minTrust'];
  return {
    cmd,
    words: positionals,
    flags,
    json: opts.has('--json'),
    ...where,
  };
}

/** Runs the command if the fast path understands it: its exit code, or null for the full CLI. */
export async function runFast(argv: readonly string[], io: Io): Promise<number | null> {
  const p = parseFast(argv);
  if (!p) return null;
  if (p.cmd === 'hook') {
    try {
      const { hookCommand } = await import('../hooks/hook-command.js');
      await hookCommand({ ...p, env: io.env, cwd: io.cwd, stdout: io.stdout });
      return 0;
    } catch (e) {
      return reportError(e, p.json, io); // as the full CLI would; hookCommand itself never throws
    }
  }
  let engine: Engine | null = null;
  try {
    engine = await openEngine({
      store: p.store,
      db: p.db,
      tenant: p.tenant,
      config: p.config,
      cwd: io.cwd,
      env: io.env,
      surface: cliSurface(io.env),
    });
    await recallAndPrint(engine, p.words, p.flags, io, p.json);
    return 0;
  } catch (e) {
    return reportError(e, p.json, io);
  } finally {
    if (engine) await engine.close();
  }
}
