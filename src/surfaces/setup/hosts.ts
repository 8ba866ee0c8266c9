// Where each agent host keeps its settings, and what mneme adds there: the MCP server entry and
// (for hosts with command hooks) one `mneme hook <event>` command per lifecycle event.
import fs from 'node:fs';
import path from 'node:path';
import type { HookSpec, JsonObject } from './edits.js';

export const HOSTS = ['claude-code', 'codex', 'cursor'] as const;
export type Host = (typeof HOSTS)[number];
export type SetupScope = 'user' | 'project';

/** How a host should start mneme: a program and the arguments before the subcommand. */
export interface Invocation {
  command: string;
  args: string[];
}

export interface Target {
  file: string;
  format: 'json' | 'toml';
  /** JSON key holding MCP servers (json targets that carry the MCP entry). */
  mcpKey?: string;
  /** This file carries hook commands. */
  hooks?: HookSpec[];
  /** This TOML file carries the MCP entry in a managed block. */
  tomlMcp?: boolean;
}

interface HookEvent {
  hostEvent: string;
  event: string;
  matcher?: string;
  optional?: boolean;
  /** Seconds the host waits for the hook (10 unless the host allows less). */
  timeout?: number;
}

const CLAUDE_EVENTS: HookEvent[] = [
  { hostEvent: 'SessionStart', event: 'session-start' },
  { hostEvent: 'UserPromptSubmit', event: 'user-prompt-submit', optional: true },
  { hostEvent: 'PreToolUse', event: 'pre-tool-use', matcher: 'Edit|Write|NotebookEdit' },
  { hostEvent: 'Stop', event: 'stop' },
  { hostEvent: 'SessionEnd', event: 'session-end' },
  { hostEvent: 'PreCompact', event: 'pre-compact' },
];

// Codex (developers.openai.com/codex/hooks): the same JSON shape in hooks.json; file edits go
// through its apply_patch tool.
const CODEX_EVENTS: HookEvent[] = [
  { hostEvent: 'SessionStart', event: 'session-start' },
  { hostEvent: 'UserPromptSubmit', event: 'user-prompt-submit', optional: true },
  { hostEvent: 'PreToolUse', event: 'pre-tool-use', matcher: 'apply_patch|Edit|Write' },
  { hostEvent: 'Stop', event: 'stop' },
  // Codex 0.171 clamps a SessionEnd hook's timeout to 3 s (and warns on every start if it is
  // longer); mneme's session-end takes tens of milliseconds.
  { hostEvent: 'SessionEnd', event: 'session-end', timeout: 3 },
  { hostEvent: 'PreCompact', event: 'pre-compact' },
];

const quote = (s: string) => (/^[A-Za-z0-9_./:@=-]+$/.test(s) ? s : JSON.stringify(s));

/** `mneme hook <event>`; hosts other than Claude Code (the hook's default) name themselves. */
export const hookCommand = (
  inv: Invocation,
  event: string,
  host: Host = 'claude-code',
  storeArgs: readonly string[] = [],
) =>
  [inv.command, ...inv.args]
    .map(quote)
    .concat(
      'hook',
      event,
      ...(host === 'claude-code' ? [] : ['--host', host]),
      ...storeArgs.map(quote),
    )
    .join(' ');

export function hookSpecs(
  host: Host,
  inv: Invocation,
  opts: { promptHook?: boolean; all?: boolean; storeArgs?: readonly string[] } = {},
): HookSpec[] {
  const events = host === 'claude-code' ? CLAUDE_EVENTS : host === 'codex' ? CODEX_EVENTS : [];
  return events
    .filter((e) => opts.all || !e.optional || opts.promptHook)
    .map((e) => ({
      hostEvent: e.hostEvent,
      event: e.event,
      ...(e.matcher ? { matcher: e.matcher } : {}),
      command: hookCommand(inv, e.event, host, opts.storeArgs),
      timeout: e.timeout ?? 10,
    }));
}

export function mcpEntry(host: Host, inv: Invocation, env: Record<string, string>): JsonObject {
  const entry: JsonObject = host === 'claude-code' ? { type: 'stdio' } : {};
  entry.command = inv.command;
  entry.args = [...inv.args, 'mcp'];
  if (Object.keys(env).length > 0) entry.env = env;
  return entry;
}

export function targets(
  host: Host,
  scope: SetupScope,
  dirs: { home: string; project: string },
  specs: HookSpec[],
): Target[] {
  const base = scope === 'user' ? dirs.home : dirs.project;
  switch (host) {
    case 'claude-code':
      return [
        {
          file: path.join(base, '.claude', 'settings.json'),
          format: 'json',
          hooks: specs,
        },
        {
          file: scope === 'user' ? path.join(base, '.claude.json') : path.join(base, '.mcp.json'),
          format: 'json',
          mcpKey: 'mcpServers',
        },
      ];
    case 'codex':
      return [
        { file: path.join(base, '.codex', 'config.toml'), format: 'toml', tomlMcp: true },
        { file: path.join(base, '.codex', 'hooks.json'), format: 'json', hooks: specs },
      ];
    case 'cursor':
      return [
        { file: path.join(base, '.cursor', 'mcp.json'), format: 'json', mcpKey: 'mcpServers' },
      ];
  }
}

/** `mneme` on PATH when it is there (portable configs), else this node and this bin. */
export function resolveInvocation(env: NodeJS.ProcessEnv, bin: string): Invocation {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    // npx puts its cache on PATH for the one command it runs; a host started later has none.
    if (!dir || /[\\/]_npx[\\/]/.test(dir)) continue;
    const candidate = path.join(dir, 'mneme');
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.realpathSync(candidate) === fs.realpathSync(bin))
        return { command: 'mneme', args: [] };
    } catch {
      /* not here */
    }
  }
  return { command: process.execPath, args: [bin] };
}
