// A host may write its payload and leave stdin open: the hook answers as soon as one whole JSON
// object has arrived, as it does when stdin ends — through the real `mneme hook` child process.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { BIN, contextOf, makeWorld } from './hook-helpers.js';

interface Run {
  code: number | null;
  stdout: string;
}

/**
 * `mneme hook session-start` with stdin a pipe we write `input` into, after `delayMs` (so the
 * hook is already reading), and unless `close`, leave open.
 */
function hookOverPipe(
  env: NodeJS.ProcessEnv,
  cwd: string,
  input: string,
  close: boolean,
  delayMs = 0,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'hook', 'session-start'], {
      cwd,
      env,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    // The guard against the bug itself: a hook stuck on its stdin fails the test, not the run.
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('mneme hook did not exit with its stdin left open'));
    }, 30_000);
    child.on('exit', (code) => {
      clearTimeout(guard);
      child.stdin.destroy();
      resolve({ code, stdout });
    });
    setTimeout(() => {
      if (input) child.stdin.write(input);
      if (close) child.stdin.end();
    }, delayMs);
  });
}

test('mneme hook: a payload in a pipe the host leaves open is answered as when the pipe ends', async () => {
  const w = makeWorld();
  try {
    const a = w.project('a', 'git@github.com:acme/alpha.git');
    assert.equal(
      w.cli(
        [
          'remember',
          '--type',
          'procedure',
          '--abstract',
          'Deploys go through the staging gate first',
          '--field',
          'subject=deploys',
        ],
        { cwd: a },
      ).code,
      0,
    );
    const payload = (s: string) =>
      w.payload('session-start.json', { SESSION: s, TRANSCRIPT: '', CWD: a });
    const env = { ...w.env, MNEME_HOOK_TIMEOUT_MS: '3000' };

    // Does: the stdin closed after the payload (what the hosts do) injects the memory.
    const closed = await hookOverPipe(env, a, payload('sess-closed'), true);
    assert.equal(closed.code, 0);
    assert.match(contextOf(closed.stdout), /staging gate/);

    // The payload written, the pipe left open: the same answer, not a wait for the end of input.
    const open = await hookOverPipe(env, a, payload('sess-open'), false);
    assert.equal(open.code, 0);
    assert.match(contextOf(open.stdout), /staging gate/);
    // Written only once the hook waits on its stdin (a pipe it may find empty, not ready).
    const late = await hookOverPipe(env, a, payload('sess-late'), false, 1500);
    assert.equal(late.code, 0);
    assert.match(contextOf(late.stdout), /staging gate/);

    const log = w.hookLog().filter((l) => l.event === 'session-start');
    assert.deepEqual(
      log.map((l) => l.outcome),
      ['injected', 'injected', 'injected'],
    );
  } finally {
    w.cleanup();
  }
});
