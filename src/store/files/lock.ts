// The cross-process store lock: a lock file holding the owner's pid, created atomically. A lock
// whose owner is dead is broken by renaming it away (only one contender can win the rename).
// Waiting is bounded; past the bound the caller gets a `locked` error naming the holder.
import fs from 'node:fs';
import os from 'node:os';
import { MnemeError } from '../../core/errors.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function ownerAlive(lockFile: string): boolean {
  let text: string;
  try {
    text = fs.readFileSync(lockFile, 'utf8');
  } catch {
    return true; // vanished or unreadable: just retry
  }
  const [pidText, host] = text.split('\n');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) {
    // Written but not yet filled by its owner, or garbage: judge by age.
    try {
      return Date.now() - fs.statSync(lockFile).mtimeMs < 5_000;
    } catch {
      return true;
    }
  }
  if (host !== undefined && host !== os.hostname()) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function withFileLock<T>(
  lockFile: string,
  timeoutMs: number,
  fn: () => Promise<T>,
): Promise<T> {
  const started = Date.now();
  let delay = 2;
  for (;;) {
    // The lock appears with its owner already written in it (a hard link of a filled temp file,
    // which fails if the lock exists): a writer killed while taking it never leaves an empty
    // lock that every other writer has to wait out.
    const tmp = `${lockFile}.tmp-${process.pid}-${Date.now()}`;
    try {
      fs.writeFileSync(tmp, `${process.pid}\n${os.hostname()}\n${new Date().toISOString()}\n`);
      fs.linkSync(tmp, lockFile);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      fs.rmSync(tmp, { force: true });
    }
    if (!ownerAlive(lockFile)) {
      try {
        const stale = `${lockFile}.stale-${process.pid}-${Date.now()}`;
        fs.renameSync(lockFile, stale);
        fs.rmSync(stale, { force: true });
      } catch {
        /* another process broke it first */
      }
      continue;
    }
    if (Date.now() - started > timeoutMs) {
      const holder = fs.existsSync(lockFile)
        ? fs.readFileSync(lockFile, 'utf8').split('\n')[0]
        : '?';
      throw new MnemeError(
        'locked',
        `the store is locked by process ${holder} and did not free up within ${timeoutMs} ms`,
        {
          hint: 'retry shortly; if no mneme process is running, delete .state/lock in the store',
        },
      );
    }
    await sleep(delay + Math.random() * delay);
    delay = Math.min(delay * 2, 50);
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lockFile, { force: true });
  }
}
