// Maintenance reports (`reports/sleep-<time>.md`, `reports/fsck-<time>.md`): plain readable
// files beside the store's truth, written atomically; nothing reads them back.
import path from 'node:path';
import { writeFileAtomic } from './compose.js';

export function writeReport(
  root: string,
  kind: 'sleep' | 'fsck',
  at: string,
  text: string,
): string {
  const name = `${kind}-${at.replace(/[:.]/g, '-')}.md`;
  const file = path.join(root, 'reports', name);
  writeFileAtomic(file, text, false);
  return path.join('reports', name);
}
