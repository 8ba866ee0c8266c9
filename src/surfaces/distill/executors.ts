// Model executors for the distiller: a prompt in, operation lines out. `command` runs any
// program (prompt on stdin, JSON lines on stdout); `claude` and `codex` run the host's own CLI
// headless with tools disabled; `openai` posts to any OpenAI-compatible chat endpoint. Every
// child gets a timeout, an output cap and MNEME_HOOKS_DISABLED=1 so its own hooks stay quiet.
import { spawn } from 'node:child_process';
import { MnemeError } from '../../core/errors.js';
import { DISTILL_DEFAULTS, type DistillLimits, type Executor } from '../../engine/engine.js';

export const EXECUTORS = ['claude', 'codex', 'openai', 'command'] as const;
export type ExecutorKind = (typeof EXECUTORS)[number];

export interface DistillSettings {
  executor: ExecutorKind;
  command: string | null;
  timeoutMs: number;
  maxOutputBytes: number;
  model: string | null;
  limits: DistillLimits;
}

const int = (v: string | undefined, fallback: number, name: string): number => {
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0)
    throw new MnemeError('invalid', `${name} must be a non-negative integer, not "${v}"`);
  return n;
};

/** Flags win over the environment; config.toml [distill] is not read yet (no TOML parser). */
export function distillSettings(
  env: NodeJS.ProcessEnv,
  flags: { executor?: string; command?: string } = {},
): DistillSettings {
  const executor = flags.executor ?? env.MNEME_DISTILL_EXECUTOR ?? 'claude';
  if (!(EXECUTORS as readonly string[]).includes(executor)) {
    throw new MnemeError('invalid', `unknown distill executor "${executor}"`, {
      hint: `use one of: ${EXECUTORS.join(', ')}`,
    });
  }
  const command = flags.command ?? env.MNEME_DISTILL_COMMAND ?? null;
  if (executor === 'command' && !command) {
    throw new MnemeError('invalid', 'the command executor needs a program to run', {
      hint: 'pass --command PROG or set MNEME_DISTILL_COMMAND',
    });
  }
  return {
    executor: executor as ExecutorKind,
    command,
    timeoutMs: int(env.MNEME_DISTILL_TIMEOUT_MS, 180_000, 'MNEME_DISTILL_TIMEOUT_MS'),
    maxOutputBytes: int(
      env.MNEME_DISTILL_MAX_OUTPUT_BYTES,
      1 << 20,
      'MNEME_DISTILL_MAX_OUTPUT_BYTES',
    ),
    model: env.MNEME_DISTILL_MODEL ?? null,
    limits: {
      maxBatchChars: int(
        env.MNEME_DISTILL_MAX_BATCH_CHARS,
        DISTILL_DEFAULTS.maxBatchChars,
        'MNEME_DISTILL_MAX_BATCH_CHARS',
      ),
      maxRunsPerHour: int(
        env.MNEME_DISTILL_MAX_RUNS_PER_HOUR,
        DISTILL_DEFAULTS.maxRunsPerHour,
        'MNEME_DISTILL_MAX_RUNS_PER_HOUR',
      ),
      sheetSize: int(
        env.MNEME_DISTILL_SHEET_SIZE,
        DISTILL_DEFAULTS.sheetSize,
        'MNEME_DISTILL_SHEET_SIZE',
      ),
      maxBatches: int(
        env.MNEME_DISTILL_MAX_BATCHES,
        DISTILL_DEFAULTS.maxBatches,
        'MNEME_DISTILL_MAX_BATCHES',
      ),
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
      env: { ...opts.env, MNEME_HOOKS_DISABLED: '1' },
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

async function openaiChat(
  prompt: string,
  s: DistillSettings,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const base = env.MNEME_OPENAI_BASE_URL ?? 'https://api.openai.com/v1';
  const model = env.MNEME_OPENAI_MODEL ?? s.model;
  if (!model) throw new Error('set MNEME_OPENAI_MODEL to the model the endpoint serves');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (env.MNEME_OPENAI_API_KEY) headers.authorization = `Bearer ${env.MNEME_OPENAI_API_KEY}`;
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

export function makeExecutor(s: DistillSettings, env: NodeJS.ProcessEnv, cwd?: string): Executor {
  const common = { timeoutMs: s.timeoutMs, maxOutputBytes: s.maxOutputBytes, env, cwd };
  switch (s.executor) {
    case 'command':
      return (prompt) => runProgram(s.command!, [], prompt, { ...common, shell: true });
    case 'claude':
      // --tools "" removes the built-in tools; --strict-mcp-config keeps the user's MCP servers out.
      return (prompt) =>
        runProgram(
          'claude',
          [
            '-p',
            '--tools',
            '',
            '--strict-mcp-config',
            '--output-format',
            'text',
            ...(s.model ? ['--model', s.model] : []),
          ],
          prompt,
          common,
        );
    case 'codex':
      return (prompt) =>
        runProgram(
          'codex',
          [
            'exec',
            '--sandbox',
            'read-only',
            '--skip-git-repo-check',
            '--ephemeral',
            ...(s.model ? ['--model', s.model] : []),
            '-',
          ],
          prompt,
          common,
        );
    case 'openai':
      return (prompt) => openaiChat(prompt, s, env);
  }
}
