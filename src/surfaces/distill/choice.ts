// Which executor distils a session: the one rule, read by the hook (whether to start a
// distiller), `mneme distill` (what to run) and `mneme doctor` / `distill --status` (what they
// report). distill.executor = host (the default) lets the session's host decide through its own
// key — `claude -p` for Claude Code, `codex exec` for Codex; any other value decides for every
// host; `off` anywhere means the session is archived and never distilled. Kept free of
// child_process: the hook loads it on every Stop.
import type { Host } from '../../core/transcript.js';
import type { EXECUTORS, HOST_EXECUTORS } from '../config/schema.js';
import { settingValue, sourceText, type LoadedSettings, type Source } from '../config/settings.js';

export type ExecutorKind = (typeof EXECUTORS)[number];
export type HostExecutor = (typeof HOST_EXECUTORS)[number];

/** The setting that names the executor of each host's sessions under distill.executor = host. */
export const HOST_EXECUTOR_KEY: Record<Host, string> = {
  'claude-code': 'distill.claude_code_executor',
  codex: 'distill.codex_executor',
  generic: 'distill.generic_executor',
};

export interface ExecutorChoice {
  host: Host;
  kind: HostExecutor;
  /** The setting that decided, and where its value came from. */
  key: string;
  source: Source;
  /** The program it starts (claude, codex, the command's first word); null for openai and off. */
  program: string | null;
}

export function executorFor(loaded: LoadedSettings, host: Host): ExecutorChoice {
  const top = loaded.settings.distill.executor;
  const key = top === 'host' ? HOST_EXECUTOR_KEY[host] : 'distill.executor';
  const kind = settingValue(loaded.settings, key) as HostExecutor;
  const command = loaded.settings.distill.command;
  const program =
    kind === 'claude' || kind === 'codex'
      ? kind
      : kind === 'command'
        ? (command
            ?.trim()
            .split(/\s+/)[0]
            ?.replace(/^["']|["']$/g, '') ?? null)
        : null;
  return { host, kind, key, source: loaded.sources[key]!, program };
}

/** "distill.codex_executor = codex (default)": what decided, as refusals and reports say it. */
export function choiceText(c: ExecutorChoice): string {
  return `${c.key} = ${c.kind} (${sourceText(c.source)})`;
}
