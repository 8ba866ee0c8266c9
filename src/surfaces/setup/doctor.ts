// `mneme doctor`: checks the wiring end to end — the store (opens, journal chain, index caught up),
// each host's settings (MCP entry and hook commands), a live MCP round trip over stdio, the
// distiller's executor, and the last run of each hook. Each check says what to do when not ok.
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Engine } from '../../engine/engine.js';
import { peekIndexSeq } from '../compose.js';
import { sourceText, type LoadedSettings } from '../config/settings.js';
import { mnemeBin, mnemeVersion } from '../install-root.js';
import { readCodexMcpEntry } from './codex-toml.js';
import { wiredEvents, SERVER_NAME, type Json, type JsonObject } from './edits.js';
import { hookSpecs, targets, type Host } from './hosts.js';

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
  /** --store as given, passed on to the spawned MCP server. */
  storeFlag?: string;
  openEngine: () => Promise<Engine>;
  /** Whether this build has a `mneme hook` command. */
  hasHookCommand: boolean;
  mcpTimeoutMs?: number;
}

const REQUIRED_EVENTS = ['session-start', 'pre-tool-use', 'stop', 'session-end', 'pre-compact'];

export async function runDoctor(d: DoctorDeps): Promise<Check[]> {
  const checks: Check[] = [];
  checks.push(...(await storeChecks(d)));
  checks.push(...hostChecks(d));
  checks.push(await mcpRoundTrip(d));
  checks.push(executorCheck(d));
  checks.push(...hookLogChecks(d));
  return checks;
}

async function storeChecks(d: DoctorDeps): Promise<Check[]> {
  const out: Check[] = [];
  const indexSeq = peekIndexSeq(d.storeDir);
  let engine: Engine;
  try {
    engine = await d.openEngine();
  } catch (e) {
    return [
      {
        check: 'store',
        status: 'fail',
        detail: `cannot open the store at ${d.storeDir}: ${(e as Error).message}`,
        fix: 'check the path (--store / MNEME_HOME) and its permissions; `mneme rebuild` recreates the index',
      },
    ];
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
  await engine.close();
  return out;
}

function readJson(file: string): JsonObject | null {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as Json;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

function hostFound(host: Host, d: DoctorDeps): boolean {
  const marks: Record<Host, string[]> = {
    'claude-code': [
      path.join(d.home, '.claude'),
      path.join(d.home, '.claude.json'),
      path.join(d.project, '.claude'),
      path.join(d.project, '.mcp.json'),
    ],
    codex: [path.join(d.home, '.codex'), path.join(d.project, '.codex')],
    cursor: [path.join(d.home, '.cursor'), path.join(d.project, '.cursor')],
  };
  return marks[host].some((p) => fs.existsSync(p));
}

function hostChecks(d: DoctorDeps): Check[] {
  const out: Check[] = [];
  const inv = { command: 'mneme', args: [] };
  for (const host of ['claude-code', 'codex', 'cursor'] as const) {
    if (!hostFound(host, d)) continue;
    const specs = hookSpecs(host, inv, { all: true });
    const files = (['user', 'project'] as const).flatMap((scope) =>
      targets(host, scope, { home: d.home, project: d.project }, specs),
    );
    // MCP entry.
    const mcpIn = files.filter((t) => {
      if (t.tomlMcp) return tomlHasEntry(t.file);
      if (!t.mcpKey) return false;
      const servers = readJson(t.file)?.[t.mcpKey];
      return typeof servers === 'object' && servers !== null && SERVER_NAME in servers;
    });
    out.push(
      mcpIn.length > 0
        ? {
            check: `${host} mcp`,
            status: 'ok',
            detail: `server entry in ${mcpIn.map((t) => t.file).join(', ')}`,
          }
        : {
            check: `${host} mcp`,
            status: 'warn',
            detail: 'no mneme MCP server entry found',
            fix: `run \`mneme setup ${host}\` (add --project for this repository only)`,
          },
    );
    if (host === 'cursor') continue;
    // Hooks: an event counts as wired if either scope's file has it.
    const wired = new Set<string>();
    for (const t of files.filter((f) => f.hooks)) {
      const doc = readJson(t.file);
      if (!doc) continue;
      for (const [event, ok] of wiredEvents(doc, specs)) if (ok) wired.add(event);
    }
    const missing = REQUIRED_EVENTS.filter((e) => !wired.has(e));
    if (wired.size === 0)
      out.push({
        check: `${host} hooks`,
        status: 'warn',
        detail: 'no mneme hooks in the settings files',
        fix: `run \`mneme setup ${host}\`, or install the plugin in plugin/claude-code`,
      });
    else if (!d.hasHookCommand)
      out.push({
        check: `${host} hooks`,
        status: 'fail',
        detail: `hooks are wired (${[...wired].join(', ')}) but this mneme has no \`hook\` command`,
        fix: 'update mneme, or remove the hooks with `mneme setup ' + host + ' --uninstall`',
      });
    else
      out.push({
        check: `${host} hooks`,
        status: missing.length === 0 ? 'ok' : 'warn',
        detail:
          missing.length === 0
            ? `wired: ${[...wired].join(', ')}`
            : `wired: ${[...wired].join(', ')}; missing: ${missing.join(', ')}`,
        ...(missing.length ? { fix: `run \`mneme setup ${host}\` again` } : {}),
      });
  }
  if (out.length === 0)
    out.push({
      check: 'hosts',
      status: 'warn',
      detail: 'no Claude Code, Codex or Cursor settings found under HOME or this project',
      fix: 'run `mneme setup claude-code|codex|cursor` after installing the host',
    });
  return out;
}

const readOr = (file: string) => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

async function mcpRoundTrip(d: DoctorDeps): Promise<Check> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(d.env)) if (v !== undefined) env[k] = v;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [mnemeBin(), ...(d.storeFlag ? ['--store', d.storeFlag] : []), 'mcp'],
    env,
    cwd: d.cwd,
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
    const s = r.structuredContent as { project?: string | null } | undefined;
    return {
      check: 'mcp round trip',
      status: 'ok',
      detail: `\`mneme mcp\` answered status in ${Date.now() - started} ms (project ${s?.project ?? 'none'})`,
    };
  } catch (e) {
    return {
      check: 'mcp round trip',
      status: 'fail',
      detail: `\`mneme mcp\` did not answer: ${(e as Error).message}${stderr ? ` — stderr: ${stderr.trim().slice(0, 300)}` : ''}`,
      fix: 'run `mneme mcp` by hand in this directory and read its stderr',
    };
  } finally {
    await client.close().catch(() => {});
  }
}

export function onPath(program: string, env: NodeJS.ProcessEnv): boolean {
  if (program.includes('/')) return fs.existsSync(program);
  return (env.PATH ?? '').split(path.delimiter).some((dir) => {
    if (!dir) return false;
    try {
      fs.accessSync(path.join(dir, program), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function executorCheck(d: DoctorDeps): Check {
  // The same settings the distiller reads (config file, environment, default claude).
  const { executor: kind, command } = d.settings.settings.distill;
  const from = sourceText(d.settings.sources['distill.executor']!);
  const program =
    kind === 'claude'
      ? 'claude'
      : kind === 'codex'
        ? 'codex'
        : kind === 'command'
          ? command?.trim().split(/\s+/)[0]
          : null;
  if (kind === 'openai')
    return {
      check: 'distiller',
      status: 'ok',
      detail: `executor openai (from ${from}); the endpoint is not contacted by doctor`,
    };
  if (!program)
    return {
      check: 'distiller',
      status: 'fail',
      detail: `executor "${kind}" needs a command`,
      fix: 'set distill.command in config.toml (or MNEME_DISTILL_COMMAND) to the program to run',
    };
  return onPath(program, d.env)
    ? {
        check: 'distiller',
        status: 'ok',
        detail: `executor ${kind} (from ${from}): \`${program}\` found`,
      }
    : {
        check: 'distiller',
        // The default executor the person never chose: sessions are archived, not distilled.
        status: from === 'default' ? 'warn' : 'fail',
        detail: `executor ${kind} (from ${from}): \`${program}\` is not on PATH${from === 'default' ? ': sessions are archived but not distilled' : ''}`,
        fix:
          kind === 'command'
            ? `install ${program} or point distill.command (MNEME_DISTILL_COMMAND) at it`
            : `install ${program}, or choose another distill.executor (docs/configuration.md)`,
      };
}

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

/** Codex's config.toml names an `[mcp_servers.mneme]` table, whatever its layout. */
function tomlHasEntry(file: string): boolean {
  try {
    return readCodexMcpEntry(file, readOr(file)) !== null;
  } catch {
    return false; // not valid TOML: Codex cannot read the entry either
  }
}
