// Shared test fixtures: temp stores, a controllable clock, engines bound to fixed scopes, and a
// runner for the real CLI binary.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SchemaRegistry } from '../src/core/schema.js';
import type { Clock } from '../src/core/time.js';
import type { Actor } from '../src/core/types.js';
import type { Binding } from '../src/engine/context.js';
import { Engine } from '../src/engine/engine.js';
import type { Store } from '../src/store/port.js';
import { isAgentVariable } from '../src/surfaces/agent-env.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin', 'mneme.js');

export const PROJECT_A = 'alpha-0000000a';
export const PROJECT_B = 'bravo-0000000b';
export const HUMAN: Actor = { kind: 'human', surface: 'test' };
export const AGENT: Actor = { kind: 'agent', surface: 'test' };
/** mneme's own maintenance: the only actor kind besides the write path that opens proposals. */
export const SLEEP: Actor = { kind: 'sleep', surface: 'sleep' };

export function tmpDir(prefix = 'mneme-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface TestClock extends Clock {
  set(iso: string): void;
  advance(ms: number): void;
}

export function testClock(start = '2026-01-01T00:00:00.000Z'): TestClock {
  let now = Date.parse(start);
  const clock = (() => new Date(now)) as TestClock;
  clock.set = (iso) => (now = Date.parse(iso));
  clock.advance = (ms) => (now += ms);
  return clock;
}

export function engineFor(
  store: Store,
  project: string | null,
  clock: Clock,
  surface: 'human' | 'agent' = 'human',
): Engine {
  const binding: Binding = { project, identity: project };
  return new Engine({ store, clock, registry: new SchemaRegistry(), binding, surface });
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: () => any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export function cli(
  args: string[],
  opts: { home: string; cwd?: string; env?: Record<string, string>; input?: string },
): CliResult {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    MNEME_HOME: opts.home,
    MNEME_DURABLE: '0',
    ...opts.env,
  };
  // A person's terminal unless the test says otherwise: no variable marks an agent session.
  for (const k of Object.keys(env))
    if ((k === 'MNEME_AGENT' || isAgentVariable(k)) && !opts.env?.[k]) delete env[k];
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: opts.cwd ?? opts.home,
    env,
    encoding: 'utf8',
    input: opts.input ?? '',
  });
  return {
    code: r.status ?? -1,
    stdout: r.stdout,
    stderr: r.stderr,
    json: () => JSON.parse(r.stdout),
  };
}

/**
 * The CLI under a real pseudo-terminal (test/fixtures/pty-drive.py), answering its prompts in
 * order like a person would; `out` is the screen transcript.
 */
export function terminal(
  answers: string[],
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv },
): { code: number; out: string } {
  const env: NodeJS.ProcessEnv = { ...opts.env };
  delete env.NODE_TEST_CONTEXT;
  const r = spawnSync(
    'python3',
    [
      path.join(ROOT, 'test', 'fixtures', 'pty-drive.py'),
      JSON.stringify(answers),
      process.execPath,
      BIN,
      ...args,
    ],
    { cwd: opts.cwd, env, encoding: 'utf8', timeout: 60_000 },
  );
  return { code: r.status ?? -1, out: r.stdout };
}

/** A directory that is a git repository with the given origin remote (no git binary needed). */
export function gitRepo(remote: string | null): string {
  const dir = tmpDir('mneme-repo-');
  fs.mkdirSync(path.join(dir, '.git'));
  fs.writeFileSync(
    path.join(dir, '.git', 'config'),
    `[core]\n\trepositoryformatversion = 0\n${remote ? `[remote "origin"]\n\turl = ${remote}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n` : ''}`,
  );
  return dir;
}
