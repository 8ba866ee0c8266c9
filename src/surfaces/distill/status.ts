// What the distiller will do and what it has spent: the executor each host's sessions get (the
// rule of choice.ts), whether its program is on PATH, the cost caps in force and today's spend.
// Shown by `mneme distill --status` and `mneme doctor`, from the same settings the product uses.
import fs from 'node:fs';
import path from 'node:path';
import { HOSTS, type Host } from '../../core/transcript.js';
import type { DistillSpend, Engine } from '../../engine/engine.js';
import type { LoadedSettings } from '../config/settings.js';
import { choiceText, executorFor, type HostExecutor } from './choice.js';

export interface HostExecutorStatus {
  host: Host;
  executor: HostExecutor;
  /** The setting that chose it, with its source: `distill.codex_executor = codex (default)`. */
  setting: string;
  program: string | null;
  /** Whether `program` is on PATH; null when nothing is started (off, openai). */
  found: boolean | null;
}

export interface DistillStatus {
  hosts: HostExecutorStatus[];
  caps: {
    max_runs_per_hour: number;
    max_batches: number;
    max_rounds: number;
    max_batch_chars: number;
    timeout_ms: number;
    max_output_bytes: number;
  };
  usage: { runsLastHour: number; today: DistillSpend };
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

export function hostExecutors(loaded: LoadedSettings, env: NodeJS.ProcessEnv) {
  return HOSTS.map((host): HostExecutorStatus => {
    const c = executorFor(loaded, host);
    return {
      host,
      executor: c.kind,
      setting: choiceText(c),
      program: c.program,
      found: c.program === null ? null : onPath(c.program, env),
    };
  });
}

export async function distillStatus(
  engine: Engine,
  loaded: LoadedSettings,
  env: NodeJS.ProcessEnv,
): Promise<DistillStatus> {
  const d = loaded.settings.distill;
  return {
    hosts: hostExecutors(loaded, env),
    caps: {
      max_runs_per_hour: d.max_runs_per_hour,
      max_batches: d.max_batches,
      max_rounds: d.max_rounds,
      max_batch_chars: d.max_batch_chars,
      timeout_ms: d.timeout_ms,
      max_output_bytes: d.max_output_bytes,
    },
    usage: await engine.distillUsage(),
  };
}

/** One line: the caps and how much of them is used now and today. */
export function spendText(st: DistillStatus): string {
  const t = st.usage.today;
  const byHost = Object.entries(t.byHost)
    .map(([h, x]) => `${h} ${x.runs}`)
    .join(', ');
  return (
    `${st.usage.runsLastHour} of ${st.caps.max_runs_per_hour} executor runs in the last hour; ` +
    `today (${t.day} UTC) ${t.runs} run(s)${byHost ? ` (${byHost})` : ''}, ` +
    `${t.promptChars} prompt and ${t.outputChars} output characters; ` +
    `per run at most ${st.caps.max_batches} batches of ${st.caps.max_batch_chars} characters ` +
    `(${st.caps.max_rounds} executor round(s) each), ` +
    `${st.caps.timeout_ms} ms, ${st.caps.max_output_bytes} output bytes`
  );
}

export function executorText(h: HostExecutorStatus): string {
  const found =
    h.found === null ? '' : h.found ? `, \`${h.program}\` found` : `, \`${h.program}\` not on PATH`;
  return h.executor === 'off'
    ? `${h.host}: off — archived, not distilled (${h.setting})`
    : `${h.host}: ${h.executor} (${h.setting})${found}`;
}

export function formatDistillStatus(st: DistillStatus): string {
  return [
    'executor per host:',
    ...st.hosts.map((h) => `  ${executorText(h)}`),
    `caps and spend: ${spendText(st)}`,
  ].join('\n');
}
