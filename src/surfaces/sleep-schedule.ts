// When sleep is due, without a cron: `.state/sleep.json` records the last pass (and when the
// store was first seen, so a brand-new store does not sleep on its first session). The
// SessionStart hook asks `isDue` (one small file read) and, when due, starts `mneme sleep
// --if-due` detached; the pass itself takes `.state/sleep.lock` so two never run at once.
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from './compose.js';

export interface SleepState {
  since: string;
  last: string | null;
  report?: string;
}

const file = (root: string) => path.join(root, '.state', 'sleep.json');

export function readSleepState(root: string): SleepState | null {
  try {
    const s = JSON.parse(fs.readFileSync(file(root), 'utf8')) as SleepState;
    return typeof s.since === 'string' ? s : null;
  } catch {
    return null;
  }
}

export function writeSleepState(root: string, s: SleepState): void {
  writeFileAtomic(file(root), `${JSON.stringify(s, null, 2)}\n`, false);
}

/**
 * Due when the last pass (or, before any, the first sighting) is older than the interval
 * (sleep.interval_hours).
 */
export function isDue(root: string, now: Date, intervalHours: number): boolean {
  const s = readSleepState(root);
  if (!s) {
    try {
      writeSleepState(root, { since: now.toISOString(), last: null });
    } catch {
      /* a read-only store: never due */
    }
    return false;
  }
  return now.getTime() - Date.parse(s.last ?? s.since) >= intervalHours * 3_600_000;
}

export function sleepLockFiles(root: string) {
  const base = path.join(root, '.state', 'sleep');
  return { lock: `${base}.lock`, pending: `${base}.pending` };
}
