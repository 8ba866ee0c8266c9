// Every hook run leaves one JSONL line in `<store>/.state/hooks.log` — event, duration, what it
// did or that it found nothing, or the error — so a quiet day and a dead hook look different.
// This is a log, not store truth; it is appended directly.
import fs from 'node:fs';
import path from 'node:path';

export interface HookRecord {
  at: string;
  event: string;
  host: string;
  session: string | null;
  ms: number;
  outcome:
    | 'injected'
    | 'nothing'
    | 'archived'
    | 'disabled'
    | 'coalesced'
    | 'distilled'
    | 'error'
    | 'timeout'
    | 'rebuilding';
  detail?: Record<string, unknown>;
  error?: string;
  pid?: number;
}

export function hookLogFile(storeRoot: string): string {
  return path.join(storeRoot, '.state', 'hooks.log');
}

export function appendHookLog(storeRoot: string, rec: HookRecord): void {
  try {
    fs.mkdirSync(path.join(storeRoot, '.state'), { recursive: true });
    fs.appendFileSync(hookLogFile(storeRoot), `${JSON.stringify(rec)}\n`);
  } catch {
    // The log must never be the reason a hook fails.
  }
}

export function readHookLog(storeRoot: string): HookRecord[] {
  let text: string;
  try {
    text = fs.readFileSync(hookLogFile(storeRoot), 'utf8');
  } catch {
    return [];
  }
  const out: HookRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as HookRecord);
    } catch {
      /* a torn line */
    }
  }
  return out;
}
