// `mneme hook <event> [--host HOST]` as a command: read the host's payload from stdin, run the
// hook under a time limit, print its answer. Shared by the full CLI (agent-commands.ts) and the
// fast dispatch (cli/fast.ts). Never throws and never exits non-zero: an unknown event, a
// failure or a timeout becomes a line in the hook log.
import fs from 'node:fs';
import { isHost, type Host } from '../../core/transcript.js';
import { isDistillerSession } from '../agent-env.js';
import { loadSettings, sourceText, type LoadedSettings } from '../config/settings.js';
import { localRoot, storeLocation, type StoreFlags } from '../open.js';
import { appendHookLog } from './hook-log.js';
import { HOOK_EVENTS, type HookEvent } from './payload.js';

const INJECT_EVENTS = new Set<HookEvent>(['session-start', 'pre-tool-use', 'user-prompt-submit']);
const STDIN_CAP = 16 * 1024 * 1024;
export const DEFAULT_HOOK_HOST = 'claude-code';
/** Codex 0.171 gives SessionEnd hooks at most 3 s; mneme's own limit stays inside it. */
export const CODEX_SESSION_END_MS = 2500;

/**
 * The host's payload. Read with synchronous reads of fd 0 (setting up process.stdin, or the
 * thread pool an `fs.read` needs, costs a hook 5-30 ms); a terminal, like /dev/null, gives no
 * payload and is not waited on. Reading stops at end of input or as soon as what arrived is one
 * whole JSON object, so a host that writes its payload and leaves the pipe open is answered at
 * once. Should a read fail (EAGAIN on a non-blocking pipe, a closed fd), the stream reads the
 * rest the same way. A host that leaves stdin open and never writes is waited on until its own
 * hook timeout ends the process: a synchronous read holds off the time limit's timer, and a
 * read pending in the thread pool would hold off the exit itself (docs/hooks.md).
 */
function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    if (fs.fstatSync(0).isCharacterDevice()) return Promise.resolve('');
    const buf = Buffer.allocUnsafe(64 * 1024);
    for (;;) {
      const n = fs.readSync(0, buf, 0, buf.length, null);
      if (n === 0) return Promise.resolve(Buffer.concat(chunks).toString('utf8'));
      size += n;
      // Past the cap the payload is refused anyway: stop reading (stdin may never end).
      if (size > STDIN_CAP) return Promise.resolve('');
      chunks.push(Buffer.from(buf.subarray(0, n)));
      const whole = wholeJson(chunks);
      if (whole !== null) return Promise.resolve(whole);
    }
  } catch {
    return readStream(chunks, size);
  }
}

/** The text so far when it is one complete JSON object (a payload's shape), else null. */
function wholeJson(chunks: Buffer[]): string | null {
  const last = chunks[chunks.length - 1]!;
  let i = last.length - 1;
  while (i >= 0 && (last[i] === 0x20 || last[i] === 0x0a || last[i] === 0x0d || last[i] === 0x09))
    i--;
  if (i < 0 || last[i] !== 0x7d) return null; // not ending in "}": more is coming
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    JSON.parse(text);
    return text;
  } catch {
    return null;
  }
}

function readStream(chunks: Buffer[], size: number): Promise<string> {
  if (process.stdin.isTTY) return Promise.resolve('');
  return new Promise((resolve) => {
    process.stdin.on('data', (d: Buffer) => {
      size += d.length;
      if (size > STDIN_CAP) {
        process.stdin.destroy();
        return resolve('');
      }
      chunks.push(d);
      const whole = wholeJson(chunks);
      if (whole === null) return;
      process.stdin.destroy();
      resolve(whole);
    });
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/**
 * `mneme doctor` runs each hook command exactly as the host has it, with this variable set: the
 * hook then prints which store and settings file it would use, as one JSON line, and does
 * nothing else (no payload read, no log line).
 */
export const HOOK_PROBE_VAR = 'MNEME_HOOK_PROBE';

export interface HookProbe {
  probe: 'mneme-hook';
  event: string;
  host: string;
  store: string | null;
  /** Where the store came from: `flag --store`, `env MNEME_HOME`, a config file, `default`. */
  storeFrom: string | null;
  config: string | null;
  error?: string;
}

function probe(a: HookCommand): void {
  const flags: StoreFlags = { store: a.store, db: a.db, tenant: a.tenant, config: a.config };
  const out: HookProbe = {
    probe: 'mneme-hook',
    event: a.event,
    host: a.host ?? DEFAULT_HOOK_HOST,
    store: null,
    storeFrom: null,
    config: null,
  };
  try {
    const loaded = loadSettings(flags, a.env);
    out.store = storeLocation(loaded.target());
    const key = loaded.storeKind === 'postgres' ? 'store.database_url' : 'store.home';
    out.storeFrom = sourceText(loaded.sources[key]!);
    out.config = loaded.file?.path ?? null;
  } catch (e) {
    out.error = (e as Error).message.slice(0, 500);
  }
  a.stdout(`${JSON.stringify(out)}\n`);
}

export interface HookCommand extends StoreFlags {
  event: string;
  /** --host as given (default claude-code; an unknown host answers in the generic dialect). */
  host?: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout: (s: string) => void;
}

export async function hookCommand(a: HookCommand): Promise<void> {
  // A session the distiller started: no log line, no settings, no store (agent-env.ts).
  if (isDistillerSession(a.env)) return;
  if (a.env[HOOK_PROBE_VAR] === '1') return probe(a);
  const flags: StoreFlags = { store: a.store, db: a.db, tenant: a.tenant, config: a.config };
  let root: string;
  try {
    root = localRoot(flags, a.env);
  } catch (e) {
    // Store flags that name no store (--db without a tenant): nowhere to log; say so and leave.
    process.stderr.write(`mneme hook: ${(e as Error).message}\n`);
    return;
  }
  const given = a.host ?? DEFAULT_HOOK_HOST;
  const host: Host = isHost(given) ? given : 'generic';
  if (!(HOOK_EVENTS as readonly string[]).includes(a.event)) {
    appendHookLog(root, {
      at: new Date().toISOString(),
      event: String(a.event).slice(0, 40),
      host,
      session: null,
      ms: 0,
      outcome: 'error',
      error: `unknown hook event; use one of ${HOOK_EVENTS.join(', ')}`,
    });
    return;
  }
  const ev = a.event as HookEvent;
  let settings: LoadedSettings;
  try {
    settings = loadSettings(flags, a.env);
  } catch (e) {
    // A setting refused (config.toml, environment): the log says which; the host goes on.
    appendHookLog(root, {
      at: new Date().toISOString(),
      event: ev,
      host,
      session: null,
      ms: 0,
      outcome: 'error',
      error: (e as Error).message.slice(0, 500),
    });
    return;
  }
  const limit = Math.min(
    settings.settings.hooks.timeout_ms ?? (INJECT_EVENTS.has(ev) ? 900 : 5000),
    // Codex runs SessionEnd but clamps its timeout to 3 s, then kills the hook: stop first and
    // say so in the log (the distiller it would start picks the rest up at the next trigger).
    host === 'codex' && ev === 'session-end' ? CODEX_SESSION_END_MS : Infinity,
  );
  // The host must never wait on us for long: past the limit we log and leave, exit 0.
  const timer = setTimeout(() => {
    appendHookLog(root, {
      at: new Date().toISOString(),
      event: ev,
      host,
      session: null,
      ms: limit,
      outcome: 'timeout',
    });
    process.exit(0);
  }, limit);
  try {
    const stdin = await readStdin();
    const { runHook } = await import('./run-hook.js');
    const { stdout } = await runHook({
      event: ev,
      host,
      stdin,
      env: a.env,
      ...flags,
      settings,
      cwd: a.cwd,
    });
    if (stdout) a.stdout(stdout);
  } finally {
    clearTimeout(timer);
  }
}
