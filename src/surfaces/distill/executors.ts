// Model executors for the distiller: a prompt in, operation lines out. `command` runs any
// program (prompt on stdin, JSON lines on stdout); `claude` and `codex` run the host's own CLI
// headless with tools disabled; `openai` posts to any OpenAI-compatible chat endpoint. Which one
// runs for a session is choice.ts's rule. Every child gets a timeout, an output cap and the
// distiller's mark (agent-env.ts), so the hooks of the session it starts leave no trace.
import { spawn } from 'node:child_process';
import { MnemeError } from '../../core/errors.js';
import type { Host } from '../../core/transcript.js';
import type { DistillLimits, Executor } from '../../engine/engine.js';
import { distillerSessionEnv } from '../agent-env.js';
import { EXECUTORS } from '../config/schema.js';
import type { LoadedSettings } from '../config/settings.js';
import { choiceText, executorFor, type ExecutorChoice, type ExecutorKind } from './choice.js';

export { EXECUTORS, type ExecutorKind };

export interface DistillSettings {
  executor: ExecutorKind;
  /** The setting that chose it (choice.ts). */
  choice: ExecutorChoice;
  command: string | null;
  timeoutMs: number;
  maxOutputBytes: number;
  model: string | null;
  /** The openai executor's endpoint, chat model and key (openai.*). */
  openai: { baseUrl: string; model: string | null; apiKey: string | null };
  limits: DistillLimits;
}

/**
 * The distiller's settings for one host's sessions (distill.* and openai.*: config file,
 * environment, flags), or null when the distiller is off for that host.
 */
export function distillSettings(loaded: LoadedSettings, host: Host): DistillSettings | null {
  const s = loaded.settings;
  const d = s.distill;
  const choice = executorFor(loaded, host);
  if (choice.kind === 'off') return null;
  if (choice.kind === 'command' && !d.command) {
    throw new MnemeError(
      'invalid',
      `the command executor (${choiceText(choice)}) needs a program to run`,
      {
        hint: 'pass --command PROG, or set distill.command in config.toml (MNEME_DISTILL_COMMAND)',
      },
    );
  }
  return {
    executor: choice.kind,
    choice,
    command: d.command ?? null,
    timeoutMs: d.timeout_ms,
    maxOutputBytes: d.max_output_bytes,
    model: d.model ?? null,
    openai: {
      baseUrl: s.openai.base_url,
      model: s.openai.model ?? null,
      apiKey: s.openai.api_key ?? null,
    },
    limits: {
      maxBatchChars: d.max_batch_chars,
      maxRunsPerHour: d.max_runs_per_hour,
      sheetSize: d.sheet_size,
      maxBatches: d.max_batches,
      maxRounds: d.max_rounds,
    },
  };
}

/** Runs a program with the prompt on stdin; resolves with its stdout. */
export function runProgram(
  file: string,
  args: string[],
  prompt: string,
  opts: {
    shell?: boolean;
    timeoutMs: number;
    maxOutputBytes: number;
    env: NodeJS.ProcessEnv;
    cwd?: string;
  },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      shell: opts.shell ?? false,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: distillerSessionEnv(opts.env),
      cwd: opts.cwd,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let failed: string | null = null;
    const timer = setTimeout(() => {
      failed = `timed out after ${opts.timeoutMs} ms`;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    child.stdout.on('data', (d: Buffer) => {
      size += d.length;
      if (size > opts.maxOutputBytes) {
        failed ??= `output exceeded ${opts.maxOutputBytes} bytes`;
        child.kill('SIGKILL');
        return;
      }
      chunks.push(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 2000) stderr += d.toString('utf8');
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${file}: ${e.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (failed) return reject(new Error(failed));
      if (code !== 0)
        return reject(new Error(`${file} exited with ${code}: ${stderr.trim().slice(0, 300)}`));
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    child.stdin.on('error', () => {}); // a program that ignores its input is fine
    child.stdin.end(prompt);
  });
}

async function openaiChat(prompt: string, s: DistillSettings): Promise<string> {
  const base = s.openai.baseUrl;
  const model = s.openai.model ?? s.model;
  if (!model)
    throw new Error(
      'set openai.model in config.toml (or MNEME_OPENAI_MODEL) to the model the endpoint serves',
    );
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (s.openai.apiKey) headers.authorization = `Bearer ${s.openai.apiKey}`;
  const res = await fetch(`${base.replace(/\/+$/, '')}/chat/completions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model, temperature: 0, messages: [{ role: 'user', content: prompt }] }),
    signal: AbortSignal.timeout(s.timeoutMs),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`endpoint answered ${res.status}: ${text.slice(0, 300)}`);
  if (Buffer.byteLength(text) > s.maxOutputBytes)
    throw new Error('response exceeded the output cap');
  const body = JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] };
  const content = body.choices?.[0]?.message?.content;
  if (typeof content !== 'string') throw new Error('the endpoint returned no message content');
  return content;
}

/** `codex exec -c` override: mneme's MCP entry (setup owns `mcp_servers.mneme`), disabled. */
export const CODEX_MNEME_OFF = 'mcp_servers.mneme={command="mneme",enabled=false}';

export function makeExecutor(s: DistillSettings, env: NodeJS.ProcessEnv, cwd?: string): Executor {
  const common = { timeoutMs: s.timeoutMs, maxOutputBytes: s.maxOutputBytes, env, cwd };
  switch (s.executor) {
    case 'command':
      return (prompt) => runProgram(s.command!, [], prompt, { ...common, shell: true });
    case 'claude':
      // --tools "" removes the built-in tools; --strict-mcp-config keeps the user's MCP servers
      // out; --no-session-persistence keeps the run out of the user's ~/.claude/projects (and
      // `claude --resume`), as --ephemeral does for Codex.
      return (prompt) =>
        runProgram(
          'claude',
          [
            '-p',
            '--tools',
            '',
            '--strict-mcp-config',
            '--no-session-persistence',
            '--output-format',
            'text',
            ...(s.model ? ['--model', s.model] : []),
          ],
          prompt,
          common,
        );
    case 'codex':
      // Codex 0.171 starts the MCP servers of config.toml in `codex exec` too, and offers their
      // tools: mneme's own entry is switched off, so the distiller's model cannot write around
      // the distiller (a whole table, so it holds whether or not setup wrote the entry).
      return (prompt) =>
        runProgram(
          'codex',
          [
            'exec',
            '--sandbox',
            'read-only',
            '--skip-git-repo-check',
            '--ephemeral',
            '-c',
            CODEX_MNEME_OFF,
            ...(s.model ? ['--model', s.model] : []),
            '-',
          ],
          prompt,
          common,
        );
    case 'openai':
      return (prompt) => openaiChat(prompt, s);
  }
}
