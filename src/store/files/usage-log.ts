// The usage log: monthly JSONL files under usage/, appended without fsync (a lost tail costs a
// little weight, never a memory) and read back in time order, torn lines skipped.
import path from 'node:path';
import type { UsageEvent } from '../port.js';
import { appendDurable, readIfExists } from './atomic.js';
import { safeReaddir } from './dirs.js';

/** Every event (after `since`, when given), oldest first. */
export function readUsage(usageDir: string, since?: string): UsageEvent[] {
  const out: UsageEvent[] = [];
  for (const f of safeReaddir(usageDir).filter((n) => n.endsWith('.jsonl'))) {
    for (const line of (readIfExists(path.join(usageDir, f)) ?? '').split('\n')) {
      if (line.trim() === '') continue;
      try {
        const e = JSON.parse(line) as UsageEvent;
        if (!since || e.at > since) out.push(e);
      } catch {
        /* a torn line */
      }
    }
  }
  return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

export function appendUsage(usageDir: string, events: UsageEvent[]): void {
  if (events.length === 0) return;
  const month = events[0]!.at.slice(0, 7);
  const file = path.join(usageDir, `${month}.jsonl`);
  appendDurable(file, events.map((e) => JSON.stringify(e)).join('\n') + '\n', false);
}
