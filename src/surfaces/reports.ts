// Maintenance reports (`reports/sleep-<time>.md`, `reports/fsck-<time>.md`): plain readable
// files beside the store's truth, written atomically. Each opens with the scopes its run read
// (engine/outbound.ts reportHead): a report is served only to a reader of all of them.
import path from 'node:path';
import { reportHead } from '../engine/engine.js';
import { writeFileAtomic } from './compose.js';

export function writeReport(
  root: string,
  kind: 'sleep' | 'fsck',
  at: string,
  text: string,
  scopes: readonly string[],
): string {
  const name = `${kind}-${at.replace(/[:.]/g, '-')}.md`;
  const file = path.join(root, 'reports', name);
  writeFileAtomic(file, reportHead(scopes) + text, false);
  return path.join('reports', name);
}
