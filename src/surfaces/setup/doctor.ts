// `mneme doctor`: checks the wiring end to end, by running what the hosts will run. The store
// (opens, journal chain, index caught up); for each host, its configured MCP entry started
// exactly as written (command, arguments, environment) and asked for its store, and its
// configured hook commands run as the host runs them (through the shell, as a probe that only
// says which store it would use) — failing, naming both, when the hooks and the MCP server use
// different stores; whether Codex will run its hooks (trust); the executor each host's sessions
// get, the cost caps and today's spend; and the last run of each hook. Store, executor and
// settings come from the loader and the composition root the product uses (host-commands.ts
// passes them in). Each check says what to do when not ok.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Engine } from '../../engine/engine.js';
import { peekIndexSeq } from '../compose.js';
import type { LoadedSettings } from '../config/settings.js';
import { distillStatus, executorText, hostExecutors, spendText } from '../distill/status.js';
import { HOOK_PROBE_VAR, type HookProbe } from '../hooks/hook-command.js';
import { mnemeVersion } from '../install-root.js';
import {
  codexHookTrust,
  configuredHooks,
  configuredMcp,
  type ConfiguredHook,
  type ConfiguredMcp,
} from './host-config.js';
import type { Host } from './hosts.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';
export interface Check {
  check: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
}

export interface DoctorDeps {
  env: NodeJS.ProcessEnv;
  cwd: string;
  home: string;
  project: string;
  storeDir: string;
  /** The settings the product uses for this store (distill.executor and the rest). */
  settings: LoadedSettings;
  /** The store this doctor checks, as a status names it (open.ts storeLocation). */
  store: string;
  openEngine: () => Promise<Engine>;
  /** Whether this build has a `mneme hook` command. */
  hasHookCommand: boolean;
  mcpTimeoutMs?: number;
}

const REQUIRED_EVENTS = ['session-start', 'pre-tool-use', 'stop', 'session-end', 'pre-compact'];

export async function runDoctor(d: DoctorDeps): Promise<Check[]> {
  const checks: Check[] = [];
  const { checks: store, engine } = await storeChecks(d);
  checks.push(...store);
  try {
    const hosts = await hostChecks(d);
    checks.push(...hosts.checks);
    checks.push(...(await distillerChecks(d, engine, hosts.found)));
    checks.push(...hookLogChecks(d));
  } finally {
    await engine?.close();
  }
  return checks;
}

async function storeChecks(d: DoctorDeps): Promise<{ checks: Check[]; engine: Engine | null }> {
  const out: Check[] = [];
  const indexSeq = peekIndexSeq(d.storeDir);
  let engine: Engine;
  try {
    engine = await d.openEngine();
  } catch (e) {
    const checks: Check[] = [
      {
        check: 'store',
        status: 'fail',
        detail: `cannot open the store at ${d.storeDir}: ${(e as Error).message}`,
        fix: 'check the path (--store / MNEME_HOME) and its permissions; `mneme rebuild` recreates the index',
      },
    ];
    return { checks, engine: null };
  }
  const s = await engine.status();
  out.push({
    check: 'store',
    status: 'ok',
    detail: `${s.location} (${s.backend}): ${s.activeMemories} active memories, project ${s.project ?? 'none'}`,
  });
  const v = await engine.verifyJournal();
  out.push(
    v.ok
      ? {
          check: 'journal',
          status: 'ok',
          detail: `chain intact: ${v.entries} entries, head #${v.head.seq}`,
        }
      : {
          check: 'journal',
          status: 'fail',
          detail: `chain broken at ${v.firstBad?.seq ?? `line ${v.firstBad?.position}`}: ${v.firstBad?.problem}`,
          fix: 'run `mneme journal verify` for details; restore the journal files from a backup',
        },
  );
  const head = v.head.seq;
  if (indexSeq === null)
    out.push({ check: 'index', status: 'ok', detail: 'no index yet; it was built on open' });
  else if (indexSeq === head)
    out.push({ check: 'index', status: 'ok', detail: `index at journal #${head}` });
  else
    out.push({
      check: 'index',
      status: 'warn',
      detail: `index was at #${indexSeq}, journal at #${head}; opening the store caught it up`,
      fix: 'nothing to do unless this repeats; then run `mneme rebuild`',
    });
  return { checks: out, engine };
}

// ---- hosts: what each one runs ------------------------------------------------------------------

const HOST_MARKS: Record<Host, (d: DoctorDeps) => string[]> = {
  'claude-code': (d) => [
    path.join(d.home, '.claude'),
    path.join(d.home, '.claude.json'),
    path.join(d.project, '.claude'),
    path.join(d.project, '.mcp.json'),
  ],
  codex: (d) => [
    d.env.CODEX_HOME ? path.resolve(d.env.CODEX_HOME) : path.join(d.home, '.codex'),
    path.join(d.project, '.codex'),
  ],
  cursor: (d) => [path.join(d.home, '.cursor'), path.join(d.project, '.cursor')],
};

/** A store as one of the host's programs will use it: the MCP entry, or a hook and its source. */
type UsedStore =
  | { store: string; kind: 'mcp'; where: string }
  | { store: string; kind: 'hook'; event: string; from: string };

/** "hooks session-start, stop (store from flag --store); the MCP server in ~/.claude.json" */
function usersText(used: UsedStore[]): string {
  const parts: string[] = [];
  const hooks = used.filter((u) => u.kind === 'hook');
  for (const from of [...new Set(hooks.map((h) => h.from))])
    parts.push(
      `hooks ${hooks
        .filter((h) => h.from === from)
        .map((h) => h.event)
        .join(', ')} (store from ${from})`,
    );
  for (const u of used) if (u.kind === 'mcp') parts.push(`the MCP server in ${u.where}`);
  return parts.join('; ');
}

async function hostChecks(d: DoctorDeps): Promise<{ checks: Check[]; found: Host[] }> {
  const out: Check[] = [];
  const found: Host[] = [];
  const dirs = { home: d.home, project: d.project };
  const probes = new Map<string, Promise<ProbeResult>>();
  for (const host of ['claude-code', 'codex', 'cursor'] as const) {
    if (!HOST_MARKS[host](d).some((p) => fs.existsSync(p))) continue;
    found.push(host);
    const used: UsedStore[] = [];
    // MCP: every entry the host would start, started exactly as written.
    const entries = configuredMcp(host, dirs, d.env);
    if (entries.length === 0)
      out.push({
        check: `${host} mcp`,
        status: 'warn',
        detail: 'no mneme MCP server entry found',
        fix: `run \`mneme setup ${host}\` (add --project for this repository only)`,
      });
    for (const e of entries) {
      const r = await runMcpEntry(d, e);
      out.push(r.check);
      if (r.store) used.push({ store: r.store, kind: 'mcp', where: e.where });
    }
    if (host === 'cursor') {
      out.push(...storeAgreement(d, host, used));
      continue;
    }
    // Hooks: every configured `mneme hook` command, run as the host runs it.
    const hooks = configuredHooks(host, dirs, d.env);
    const runnable = host === 'codex' ? codexTrusted(hooks, dirs, d, out) : hooks;
    out.push(hookWiring(d, host, hooks, runnable));
    for (const h of runnable) {
      if (!probes.has(h.command)) probes.set(h.command, probeHook(d, h.command));
      const p = await probes.get(h.command)!;
      if ('problem' in p) {
        out.push({
          check: `${host} hook ${h.event}`,
          status: 'fail',
          detail: `${h.file} runs \`${h.command}\`, which ${p.problem}`,
          fix: `run that command in ${d.project} to see why, or \`mneme setup ${host}\` again`,
        });
        continue;
      }
      used.push({ store: p.store, kind: 'hook', event: h.event, from: p.storeFrom });
    }
    out.push(...storeAgreement(d, host, used));
  }
  if (out.length === 0)
    out.push({
      check: 'hosts',
      status: 'warn',
      detail: 'no Claude Code, Codex or Cursor settings found under HOME or this project',
      fix: 'run `mneme setup claude-code|codex|cursor` after installing the host',
    });
  return { checks: out, found };
}

/** The hooks Codex will run; one check naming those it skips (untrusted, disabled). */
function codexTrusted(
  hooks: ConfiguredHook[],
  dirs: { home: string; project: string },
  d: DoctorDeps,
  out: Check[],
): ConfiguredHook[] {
  const skipped = new Map<string, string[]>();
  const runs = hooks.filter((h) => {
    const t = codexHookTrust(h, dirs, d.env);
    if (t === 'trusted') return true;
    skipped.set(t, [...(skipped.get(t) ?? []), h.event]);
    return false;
  });
  if (hooks.length === 0) return runs;
  if (skipped.size === 0)
    out.push({
      check: 'codex hook trust',
      status: 'ok',
      detail: `trusted in ${path.join(d.env.CODEX_HOME ?? path.join(d.home, '.codex'), 'config.toml')} ([hooks.state]); Codex asks again if a hook changed since`,
    });
  else {
    const why: Record<string, string> = {
      untrusted: 'not trusted yet',
      disabled: 'disabled in [hooks.state]',
      'project-untrusted': `in a project Codex does not trust ([projects."${d.project}"] trust_level)`,
    };
    out.push({
      check: 'codex hook trust',
      status: 'warn',
      detail: `Codex skips ${[...skipped].map(([t, events]) => `${events.join(', ')} (${why[t]})`).join('; ')}`,
      fix: 'start `codex` in this repository and trust mneme’s hooks when it asks (or with /hooks); then run doctor again',
    });
  }
  return runs;
}

const REQUIRED_EVENTS_OF = (host: Host) => (host === 'cursor' ? [] : REQUIRED_EVENTS);

function hookWiring(
  d: DoctorDeps,
  host: Host,
  hooks: ConfiguredHook[],
  runnable: ConfiguredHook[],
): Check {
  const wired = [...new Set(runnable.map((h) => h.event))];
  const missing = REQUIRED_EVENTS_OF(host).filter((e) => !wired.includes(e));
  if (hooks.length === 0)
    return {
      check: `${host} hooks`,
      status: 'warn',
      detail: 'no mneme hooks in the settings files',
      fix: `run \`mneme setup ${host}\`, or install the plugin in plugin/claude-code`,
    };
  if (!d.hasHookCommand)
    return {
      check: `${host} hooks`,
      status: 'fail',
      detail: `hooks are wired (${wired.join(', ')}) but this mneme has no \`hook\` command`,
      fix: `update mneme, or remove the hooks with \`mneme setup ${host} --uninstall\``,
    };
  const files = [...new Set(hooks.map((h) => h.file))].join(', ');
  return {
    check: `${host} hooks`,
    status: missing.length === 0 ? 'ok' : 'warn',
    detail:
      (wired.length ? `wired: ${wired.join(', ')}` : 'none will run') +
      (missing.length ? `; missing: ${missing.join(', ')}` : '') +
      ` (${files})`,
    ...(missing.length
      ? {
          // Configured but skipped by the host (Codex trust) is fixed in the host, not by setup.
          fix: missing.every((e) => hooks.some((h) => h.event === e))
            ? 'trust them in Codex (see codex hook trust above)'
            : `run \`mneme setup ${host}\` again`,
        }
      : {}),
  };
}

/** One check per host: which store its hooks and its MCP server use, failing when they differ. */
function storeAgreement(d: DoctorDeps, host: Host, used: UsedStore[]): Check[] {
  if (used.length === 0) return [];
  // Hooks first: the store they inject from is the one the person expects to see.
  const stores = [
    ...new Set([...used.filter((u) => u.kind === 'hook'), ...used].map((u) => u.store)),
  ];
  if (stores.length > 1)
    return [
      {
        check: `${host} stores`,
        status: 'fail',
        detail: `the hooks and the MCP server use different stores: ${stores
          .map((s) => `${s} ← ${usersText(used.filter((u) => u.store === s))}`)
          .join(' | ')}. Memories written over MCP are not the ones the hooks inject`,
        fix: `run \`mneme --store DIR setup ${host}\` with the store you mean: it writes it into the MCP entry and every hook command`,
      },
    ];
  const [store] = stores as [string];
  const hooks = used.some((u) => u.kind === 'hook');
  const mcp = used.some((u) => u.kind === 'mcp');
  const who =
    hooks && mcp ? 'hooks and MCP server both use' : hooks ? 'hooks use' : 'MCP server uses';
  return [
    store === d.store
      ? { check: `${host} stores`, status: 'ok', detail: `${who} ${store}` }
      : {
          check: `${host} stores`,
          status: 'warn',
          detail: `${who} ${store}, not the store this doctor checked (${d.store})`,
          fix: `run \`mneme --store ${store} doctor\` to check that store`,
        },
  ];
}

/** The environment the host gives an MCP server it starts. */
function mcpEnv(d: DoctorDeps, e: ConfiguredMcp): Record<string, string> {
  const env: Record<string, string> = {};
  // Codex starts MCP servers with a short list of its own variables plus the entry's `env` and
  // `env_vars`; Claude Code and Cursor pass their whole environment on.
  const passed = e.host === 'codex' ? [...CODEX_MCP_ENV, ...e.envVars] : Object.keys(d.env);
  for (const k of passed) {
    const v = d.env[k];
    if (v !== undefined) env[k] = v;
  }
  return { ...env, ...e.env };
}

/** The variables Codex passes to every MCP server it starts (codex-rs rmcp-client). */
const CODEX_MCP_ENV = [
  'HOME',
  'LOGNAME',
  'PATH',
  'SHELL',
  'USER',
  '__CF_USER_TEXT_ENCODING',
  'LANG',
  'LC_ALL',
  'TERM',
  'TMPDIR',
  'TZ',
];

async function runMcpEntry(
  d: DoctorDeps,
  e: ConfiguredMcp,
): Promise<{ check: Check; store: string | null }> {
  const check = `${e.host} mcp`;
  const shown = [e.command, ...e.args].join(' ');
  if (e.problem)
    return {
      check: {
        check,
        status: 'fail',
        detail: `${e.where}: ${e.problem}`,
        fix: `run \`mneme setup ${e.host}\` again`,
      },
      store: null,
    };
  const transport = new StdioClientTransport({
    command: e.command,
    args: e.args,
    env: mcpEnv(d, e),
    cwd: e.cwd ?? d.project,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  const client = new Client({ name: 'mneme-doctor', version: mnemeVersion() });
  const started = Date.now();
  try {
    await client.connect(transport, { timeout: d.mcpTimeoutMs ?? 15000 });
    const r = await client.callTool({ name: 'status', arguments: {} }, undefined, {
      timeout: d.mcpTimeoutMs ?? 15000,
    });
    if (r.isError) throw new Error(JSON.stringify(r.content));
    const s = r.structuredContent as { project?: string | null; store?: string } | undefined;
    const store = typeof s?.store === 'string' ? s.store : null;
    return {
      check: {
        check,
        status: store ? 'ok' : 'warn',
        detail: `${e.where}: \`${shown}\` answered status in ${Date.now() - started} ms — store ${store ?? 'not reported (an older mneme)'}, project ${s?.project ?? 'none'}`,
        ...(store ? {} : { fix: 'update the mneme the entry runs' }),
      },
      store,
    };
  } catch (err) {
    return {
      check: {
        check,
        status: 'fail',
        detail: `${e.where}: \`${shown}\` did not answer: ${(err as Error).message}${stderr ? ` — stderr: ${stderr.trim().slice(0, 300)}` : ''}`,
        fix: `run \`${shown}\` by hand in ${d.project} and read its stderr, or \`mneme setup ${e.host}\` again`,
      },
      store: null,
    };
  } finally {
    await client.close().catch(() => {});
  }
}

type ProbeResult = { store: string; storeFrom: string } | { problem: string };

/**
 * Runs one configured hook command as the host does (`sh -c`, in the project, the host's
 * environment) with the probe variable set: `mneme hook` then only says which store it uses.
 */
function probeHook(d: DoctorDeps, command: string): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], {
      cwd: d.project,
      env: { ...d.env, [HOOK_PROBE_VAR]: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ problem: `cannot start: ${e.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout
        .split('\n')
        .map((l) => {
          try {
            return JSON.parse(l) as HookProbe;
          } catch {
            return null;
          }
        })
        .find((x) => x?.probe === 'mneme-hook');
      const err = stderr.trim().slice(0, 300);
      if (line?.error) resolve({ problem: `refuses its settings: ${line.error}` });
      else if (line?.store) resolve({ store: line.store, storeFrom: line.storeFrom ?? '?' });
      else
        resolve({
          problem:
            signal !== null
              ? `did not finish in 15 s`
              : code !== 0
                ? `exits with ${code}${err ? `: ${err}` : ''}`
                : 'did not answer as `mneme hook` does (an older mneme, or another program)',
        });
    });
    child.stdin.on('error', () => {});
    child.stdin.end('');
  });
}

// ---- the distiller ------------------------------------------------------------------------------

async function distillerChecks(
  d: DoctorDeps,
  engine: Engine | null,
  found: Host[],
): Promise<Check[]> {
  const out: Check[] = [];
  // The same rule the hook and `mneme distill` follow (distill/choice.ts), per host with hooks.
  const shown = hostExecutors(d.settings, d.env).filter(
    (h) => (found as string[]).includes(h.host) || (h.host === 'generic' && h.executor !== 'off'),
  );
  for (const h of shown.length ? shown : hostExecutors(d.settings, d.env)) {
    const check = `distiller ${h.host}`;
    const fromDefault = h.setting.endsWith('(default)');
    if (h.executor === 'command' && !d.settings.settings.distill.command)
      out.push({
        check,
        status: 'fail',
        detail: `${executorText(h)}: the command executor needs a command`,
        fix: 'set distill.command in config.toml (or MNEME_DISTILL_COMMAND) to the program to run',
      });
    else if (h.found === false)
      out.push({
        check,
        // The default executor the person never chose: sessions are archived, not distilled.
        status: fromDefault ? 'warn' : 'fail',
        detail: `${executorText(h)}${fromDefault ? ': sessions are archived but not distilled' : ''}`,
        fix:
          h.executor === 'command'
            ? `install ${h.program} or point distill.command (MNEME_DISTILL_COMMAND) at it`
            : `install ${h.program}, or choose another executor for ${h.host} sessions (docs/configuration.md)`,
      });
    else
      out.push({
        check,
        status: 'ok',
        detail:
          executorText(h) +
          (h.executor === 'openai' ? '; the endpoint is not contacted by doctor' : ''),
      });
  }
  if (engine) {
    const st = await distillStatus(engine, d.settings, d.env);
    const capped = st.usage.runsLastHour >= st.caps.max_runs_per_hour;
    out.push({
      check: 'distiller spend',
      status: capped ? 'warn' : 'ok',
      detail: spendText(st),
      ...(capped
        ? {
            fix: 'the cap is reached: distillation waits for the next hour; raise distill.max_runs_per_hour to allow more',
          }
        : {}),
    });
  }
  return out;
}

const readOr = (file: string) => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

/** The hook log is JSON lines written by `mneme hook`; show the last run of each host/event. */
function hookLogChecks(d: DoctorDeps): Check[] {
  const file = path.join(d.storeDir, '.state', 'hooks.log');
  const text = readOr(file);
  if (text === '')
    return [
      {
        check: 'hook runs',
        status: 'warn',
        detail: 'no hook has run yet (no .state/hooks.log)',
        fix: 'start a session in a host with mneme hooks wired, then run doctor again',
      },
    ];
  const last = new Map<string, Record<string, unknown>>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const e = JSON.parse(line) as Record<string, unknown>;
      if (typeof e.event !== 'string') continue;
      last.set(`${typeof e.host === 'string' ? `${e.host} ` : ''}${e.event}`, e);
    } catch {
      /* a torn or foreign line: skip */
    }
  }
  if (last.size === 0)
    return [{ check: 'hook runs', status: 'warn', detail: `${file} has no readable entries` }];
  return [...last].map(([key, e]): Check => {
    const outcome = typeof e.outcome === 'string' ? e.outcome : null;
    const failed = outcome === 'error' || outcome === 'timeout' || typeof e.error === 'string';
    const ms = typeof e.ms === 'number' ? ` in ${e.ms} ms` : '';
    const what = [outcome, typeof e.error === 'string' ? e.error.slice(0, 200) : null]
      .filter(Boolean)
      .join(': ');
    return {
      check: `hook ${key}`,
      status: failed ? 'warn' : 'ok',
      detail: `last run ${String(e.at ?? '?')}${ms}${what ? ` — ${what}` : ''}`,
      ...(failed ? { fix: `see ${file}` } : {}),
    };
  });
}
