// Shared setup for the hook and distiller tests: a temporary store, project directories bound
// to distinct git remotes, the real CLI as a child process, and the recorded host payloads.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAgentVariable } from '../src/surfaces/agent-env.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(REPO, 'bin', 'mneme.js');
export const FIXTURES = path.join(REPO, 'test', 'fixtures');
export const FAKE_EXECUTOR = path.join(FIXTURES, 'fake-executor.mjs');

export interface World {
  dir: string;
  home: string;
  fake: string;
  env: NodeJS.ProcessEnv;
  project: (name: string, remote: string) => string;
  cli: (
    args: string[],
    opts?: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv },
  ) => {
    code: number;
    stdout: string;
    stderr: string;
  };
  json: <T = Record<string, unknown>>(args: string[], cwd: string) => T;
  payload: (name: string, vars: Record<string, string>) => string;
  hook: (
    event: string,
    payload: string,
    cwd: string,
    env?: NodeJS.ProcessEnv,
  ) => { code: number; stdout: string; stderr: string };
  hookLog: () => Record<string, unknown>[];
  cleanup: () => void;
}

export function makeWorld(): World {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-hooks-'));
  const home = path.join(dir, 'store');
  const fake = path.join(dir, 'fake');
  fs.mkdirSync(fake);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    MNEME_HOME: home,
    MNEME_DURABLE: '0',
    MNEME_DISTILL_EXECUTOR: 'command',
    MNEME_DISTILL_COMMAND: `"${process.execPath}" "${FAKE_EXECUTOR}"`,
    FAKE_DIR: fake,
  };
  for (const k of Object.keys(env))
    if (k === 'MNEME_AGENT' || k === 'MNEME_HOOKS_DISABLED' || isAgentVariable(k)) delete env[k];
  const cli: World['cli'] = (args, opts = {}) => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      cwd: opts.cwd ?? dir,
      input: opts.input ?? '',
      env: { ...env, ...(opts.env ?? {}) },
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  return {
    dir,
    home,
    fake,
    env,
    cli,
    project(name, remote) {
      const p = path.join(dir, name);
      fs.mkdirSync(path.join(p, '.git'), { recursive: true });
      fs.writeFileSync(path.join(p, '.git', 'config'), `[remote "origin"]\n\turl = ${remote}\n`);
      return p;
    },
    json(args, cwd) {
      const r = cli(['--json', ...args], { cwd });
      if (r.code !== 0) throw new Error(`mneme ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
      return JSON.parse(r.stdout);
    },
    payload(name, vars) {
      let text = fs.readFileSync(path.join(FIXTURES, 'claude-code', name), 'utf8');
      for (const [k, v] of Object.entries(vars)) text = text.split(`__${k}__`).join(v);
      return text;
    },
    hook(event, payload, cwd, extra = {}) {
      return cli(['hook', event], { cwd, input: payload, env: extra });
    },
    hookLog() {
      const f = path.join(home, '.state', 'hooks.log');
      if (!fs.existsSync(f)) return [];
      return fs
        .readFileSync(f, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    cleanup() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls until the predicate holds (a wait for a detached process, not a timing assertion). */
export async function waitFor<T>(
  what: string,
  fn: () => T | null | undefined | false,
  ms = 30_000,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function contextOf(stdout: string): string {
  if (stdout.trim() === '') return '';
  const o = JSON.parse(stdout) as { hookSpecificOutput?: { additionalContext?: string } };
  return o.hookSpecificOutput?.additionalContext ?? '';
}

export const count = (hay: string, needle: string) => hay.split(needle).length - 1;
