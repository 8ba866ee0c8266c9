// Reading what a host is configured to run: its mneme MCP server entry (command, arguments,
// environment) and its `mneme hook …` commands, from the files the host itself reads —
// Claude Code's ~/.claude.json (user and per-project "local" entries), .mcp.json and
// settings.json; Codex's config.toml (parsed as TOML, whatever layout Codex rewrote it into)
// and hooks.json — and whether Codex will run those hooks (it skips a hook until the person
// trusts it: `[hooks.state."<hooks.json>:<event>:<group>:<handler>"] trusted_hash`, and loads a
// project's .codex/ only for a project with `[projects."<dir>"] trust_level = "trusted"`).
// Read only; `mneme doctor` runs what it finds. Setup's writers are in edits.ts.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ourHookEvent, SERVER_NAME, type Json, type JsonObject } from './edits.js';
import type { Host, SetupScope } from './hosts.js';

export interface Dirs {
  home: string;
  project: string;
}

export interface ConfiguredMcp {
  host: Host;
  /** Where the entry is: the file, and for ~/.claude.json's per-project entries the project. */
  file: string;
  where: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Codex: variables passed through from the host's environment (`env_vars`). */
  envVars: string[];
  cwd: string | null;
  /** The entry is there but cannot be run as written (no command). */
  problem?: string;
}

export interface ConfiguredHook {
  host: Host;
  scope: SetupScope;
  file: string;
  hostEvent: string;
  /** The mneme event the command runs (`session-start`). */
  event: string;
  command: string;
  group: number;
  handler: number;
}

const lazy = createRequire(import.meta.url);

const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

export function readJsonFile(file: string): JsonObject | null {
  const text = readText(file);
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as Json;
    return isObject(v) ? v : null;
  } catch {
    return null;
  }
}

/** A TOML file as data, or null when absent; a parse failure is returned as `problem`. */
export function readTomlFile(
  file: string,
): { doc: Record<string, unknown> } | { problem: string } | null {
  const text = readText(file);
  if (text === null) return null;
  try {
    const toml = lazy('smol-toml') as typeof import('smol-toml');
    return { doc: toml.parse(text) as Record<string, unknown> };
  } catch (e) {
    return { problem: `${file} is not valid TOML: ${String((e as Error).message).split('\n')[0]}` };
  }
}

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

const stringMap = (v: unknown): Record<string, string> =>
  isObject(v)
    ? Object.fromEntries(
        Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'),
      )
    : {};

function entryOf(host: Host, file: string, where: string, e: unknown): ConfiguredMcp {
  const o = isObject(e) ? e : {};
  const command = typeof o.command === 'string' ? o.command : '';
  return {
    host,
    file,
    where,
    command,
    args: strings(o.args),
    env: stringMap(o.env),
    envVars: strings(o.env_vars),
    cwd: typeof o.cwd === 'string' ? o.cwd : null,
    ...(command ? {} : { problem: 'the entry has no command' }),
  };
}

/** Codex's home: $CODEX_HOME, else ~/.codex (as Codex resolves it). */
export function codexHome(dirs: Dirs, env: NodeJS.ProcessEnv): string {
  return env.CODEX_HOME ? path.resolve(env.CODEX_HOME) : path.join(dirs.home, '.codex');
}

/** Whether Codex loads this project's .codex/ (the person trusted the folder). */
export function codexProjectTrusted(dirs: Dirs, env: NodeJS.ProcessEnv): boolean {
  const user = readTomlFile(path.join(codexHome(dirs, env), 'config.toml'));
  if (!user || !('doc' in user)) return false;
  const projects = user.doc.projects;
  if (!isObject(projects as Json)) return false;
  const p = (projects as Record<string, unknown>)[dirs.project];
  return isObject(p as Json) && (p as Record<string, unknown>).trust_level === 'trusted';
}

/** Every mneme MCP entry the host would start, in the files it reads for this project. */
export function configuredMcp(host: Host, dirs: Dirs, env: NodeJS.ProcessEnv): ConfiguredMcp[] {
  const out: ConfiguredMcp[] = [];
  const fromJson = (file: string, key: string) => {
    const doc = readJsonFile(file);
    const servers = doc?.[key];
    if (isObject(servers) && SERVER_NAME in servers)
      out.push(entryOf(host, file, file, servers[SERVER_NAME]));
    return doc;
  };
  switch (host) {
    case 'claude-code': {
      const user = path.join(dirs.home, '.claude.json');
      const doc = fromJson(user, 'mcpServers');
      // `claude mcp add` (scope local) keeps the entry under the project in ~/.claude.json.
      const projects = doc?.projects;
      const local = isObject(projects) ? projects[dirs.project] : undefined;
      const servers = isObject(local) ? local.mcpServers : undefined;
      if (isObject(servers) && SERVER_NAME in servers)
        out.push(
          entryOf(host, user, `${user} (projects["${dirs.project}"])`, servers[SERVER_NAME]),
        );
      fromJson(path.join(dirs.project, '.mcp.json'), 'mcpServers');
      break;
    }
    case 'codex': {
      const files = [path.join(codexHome(dirs, env), 'config.toml')];
      if (codexProjectTrusted(dirs, env))
        files.push(path.join(dirs.project, '.codex', 'config.toml'));
      for (const file of files) {
        const r = readTomlFile(file);
        if (!r) continue;
        if ('problem' in r) {
          out.push({ ...entryOf(host, file, file, {}), problem: r.problem });
          continue;
        }
        const servers = r.doc.mcp_servers;
        if (isObject(servers as Json) && SERVER_NAME in (servers as object))
          out.push(entryOf(host, file, file, (servers as Record<string, unknown>)[SERVER_NAME]));
      }
      break;
    }
    case 'cursor':
      fromJson(path.join(dirs.home, '.cursor', 'mcp.json'), 'mcpServers');
      fromJson(path.join(dirs.project, '.cursor', 'mcp.json'), 'mcpServers');
      break;
  }
  return out;
}

/** The files holding a host's hooks, by scope (Claude Code's settings, Codex's hooks.json). */
export function hookFiles(
  host: Host,
  dirs: Dirs,
  env: NodeJS.ProcessEnv,
): { scope: SetupScope; file: string }[] {
  switch (host) {
    case 'claude-code':
      return [
        { scope: 'user', file: path.join(dirs.home, '.claude', 'settings.json') },
        { scope: 'project', file: path.join(dirs.project, '.claude', 'settings.json') },
        { scope: 'project', file: path.join(dirs.project, '.claude', 'settings.local.json') },
      ];
    case 'codex':
      return [
        { scope: 'user', file: path.join(codexHome(dirs, env), 'hooks.json') },
        { scope: 'project', file: path.join(dirs.project, '.codex', 'hooks.json') },
      ];
    case 'cursor':
      return [];
  }
}

/** Every `mneme hook …` command in the host's hook files, where it sits in each. */
export function configuredHooks(host: Host, dirs: Dirs, env: NodeJS.ProcessEnv): ConfiguredHook[] {
  const out: ConfiguredHook[] = [];
  for (const { scope, file } of hookFiles(host, dirs, env)) {
    const hooks = readJsonFile(file)?.hooks;
    if (!isObject(hooks)) continue;
    for (const [hostEvent, groups] of Object.entries(hooks)) {
      if (!Array.isArray(groups)) continue;
      groups.forEach((g, group) => {
        const handlers = isObject(g) && Array.isArray(g.hooks) ? g.hooks : [];
        handlers.forEach((h, handler) => {
          const command = isObject(h) ? h.command : undefined;
          const event = ourHookEvent(command);
          if (event && typeof command === 'string')
            out.push({ host, scope, file, hostEvent, event, command, group, handler });
        });
      });
    }
  }
  return out;
}

/** `SessionStart` → `session_start`, as Codex names events in a hook's trust key. */
const snake = (hostEvent: string) => hostEvent.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

export type CodexTrust = 'trusted' | 'untrusted' | 'disabled' | 'project-untrusted';

/**
 * Whether Codex will run this hook. A hook Codex has never been told to trust is skipped; the
 * trust is recorded by hash of the hook as it was trusted, which only Codex computes: a hook
 * changed since it was trusted ("modified") shows here as trusted, and Codex asks again.
 */
export function codexHookTrust(h: ConfiguredHook, dirs: Dirs, env: NodeJS.ProcessEnv): CodexTrust {
  if (h.scope === 'project' && !codexProjectTrusted(dirs, env)) return 'project-untrusted';
  const user = readTomlFile(path.join(codexHome(dirs, env), 'config.toml'));
  const hooks = user && 'doc' in user ? user.doc.hooks : undefined;
  const state = isObject(hooks as Json) ? (hooks as Record<string, unknown>).state : undefined;
  const key = `${h.file}:${snake(h.hostEvent)}:${h.group}:${h.handler}`;
  const entry = isObject(state as Json) ? (state as Record<string, unknown>)[key] : undefined;
  if (!isObject(entry as Json)) return 'untrusted';
  const e = entry as Record<string, unknown>;
  if (e.enabled === false) return 'disabled';
  return typeof e.trusted_hash === 'string' && e.trusted_hash !== '' ? 'trusted' : 'untrusted';
}
