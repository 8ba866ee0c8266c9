// One distiller per session at a time. The lock file `.state/distill/<host>--<session>.lock`
// holds the running distiller's pid; a trigger that finds it held leaves a `.pending` marker,
// which the running distiller picks up before it exits. A lock whose pid is dead is stale.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { SessionRef } from '../compose.js';

export interface FlightFiles {
  lock: string;
  pending: string;
}

export function flightFiles(storeRoot: string, ref: SessionRef): FlightFiles {
  const base = path.join(storeRoot, '.state', 'distill', `${ref.host}--${ref.session}`);
  return { lock: `${base}.lock`, pending: `${base}.pending` };
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid holding the lock, if that process is alive. */
export function lockHolder(f: FlightFiles): number | null {
  let text: string;
  try {
    text = fs.readFileSync(f.lock, 'utf8');
  } catch {
    return null;
  }
  const pid = Number(text.trim());
  if (!Number.isInteger(pid) || pid <= 0) {
    // Being written this instant: count it as held unless it is old.
    try {
      return Date.now() - fs.statSync(f.lock).mtimeMs < 5_000 ? -1 : null;
    } catch {
      return null;
    }
  }
  return alive(pid) ? pid : null;
}

/** Takes the lock for this process, breaking a stale one; false when a live process holds it. */
export function tryAcquire(f: FlightFiles): boolean {
  fs.mkdirSync(path.dirname(f.lock), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(f.lock, 'wx');
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    if (lockHolder(f) !== null) return false;
    try {
      // Only one contender wins the rename of a stale lock.
      fs.renameSync(f.lock, `${f.lock}.stale-${process.pid}`);
      fs.rmSync(`${f.lock}.stale-${process.pid}`, { force: true });
    } catch {
      /* someone else broke it; try again */
    }
  }
  return false;
}

export function release(f: FlightFiles): void {
  try {
    if (fs.readFileSync(f.lock, 'utf8').trim() === String(process.pid)) fs.rmSync(f.lock);
  } catch {
    /* already gone */
  }
}

export function markPending(f: FlightFiles, handoff: boolean): void {
  fs.mkdirSync(path.dirname(f.pending), { recursive: true });
  // Once a handoff is asked for, a later plain trigger must not lose it.
  let prior = '';
  try {
    prior = fs.readFileSync(f.pending, 'utf8');
  } catch {
    /* none */
  }
  fs.writeFileSync(f.pending, handoff || prior.includes('handoff') ? 'handoff' : 'pending');
}

/** Consumes the pending marker; returns null when there was none. */
export function takePending(f: FlightFiles): { handoff: boolean } | null {
  let text: string;
  try {
    text = fs.readFileSync(f.pending, 'utf8');
    fs.rmSync(f.pending, { force: true });
  } catch {
    return null;
  }
  return { handoff: text.includes('handoff') };
}

/** Starts `mneme distill` detached from the hook, so the hook returns at once. */
export function spawnDistiller(args: string[], cwd: string, env: NodeJS.ProcessEnv): number | null {
  const bin = process.argv[1];
  if (!bin) return null;
  const child = spawn(process.execPath, [bin, ...args], {
    cwd,
    env,
    detached: true,
    stdio: 'ignore',
  });
  child.on('error', () => {});
  child.unref();
  return child.pid ?? null;
}
