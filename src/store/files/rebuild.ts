// The full index rebuild from the files (the index is only a cache of them): every lineage the
// journal records, every journal entry, the weights as of each scope's last sleep pass, and the
// hand edits found on the way. Also the weight recomputation a catch-up or commit shares.
import path from 'node:path';
import type { JournalEntry } from '../../core/journal.js';
import { deriveLineage } from '../../core/lineage.js';
import { computeWeights } from '../../core/weight.js';
import type { Revision } from '../../core/types.js';
import { weightPasses } from '../derived.js';
import type { RebuildReport } from '../port.js';
import { readIfExists } from './atomic.js';
import { safeReaddir } from './dirs.js';
import { collectHandEdits } from './hand-edits.js';
import {
  journaledRevisions,
  readLineageFiles,
  readLineageTexts,
  unjournaledRev,
} from './lineage-files.js';
import type { FileParts } from './parts.js';
import { readUsage } from './usage-log.js';

export function rebuildIndex(
  p: FileParts,
  onProgress?: (done: number, total: number) => void,
): RebuildReport {
  const report: RebuildReport = {
    memories: 0,
    revisions: 0,
    journalEntries: 0,
    usageEvents: 0,
    problems: [],
    handEdits: [],
  };
  const ids = safeReaddir(p.layout.historyDir).filter((n) => n.startsWith('mem_'));
  const currentByPath = new Map<string, { last: Revision; text: string }>();
  const all = p.journalFiles.all();
  const journaled = journaledRevisions(all);
  const withheld = new Set<string>();
  p.index.transaction(() => {
    p.index.reset();
    ids.forEach((id, i) => {
      try {
        const read = readLineageTexts(p.layout, id);
        const missing = read ? unjournaledRev(read.revisions, journaled) : null;
        if (read && missing !== null) {
          // Never committed, or its journal entry was cut: the whole lineage stays unserved
          // (serving the revisions before it could bring back a corrected or retracted value).
          withheld.add(id);
          report.problems.push(
            `history/${id}/${String(missing).padStart(6, '0')}.md has no journal entry: ${id} is withheld from every read (see \`mneme fsck\`)`,
          );
        } else if (read) {
          const lineage = read.revisions;
          p.fault('during-rebuild');
          p.index.replaceLineage(deriveLineage(lineage));
          report.memories++;
          report.revisions += lineage.length;
          const last = lineage[lineage.length - 1]!;
          if (last.status === 'active')
            currentByPath.set(p.layout.currentFile(last.scope, last.type, last.slug), {
              last,
              text: read.lastText,
            });
        }
      } catch (e) {
        report.problems.push((e as Error).message);
      }
      if (onProgress && (i % 500 === 0 || i === ids.length - 1)) onProgress(i + 1, ids.length);
    });
    for (const e of all) {
      report.journalEntries++;
      p.index.applyEntry(e);
    }
    applyWeightPasses(p, all);
    p.index.setMeta('journal_seq', String(p.journalFiles.head().seq));
    p.index.setMeta('staged_seq', String(p.journalFiles.head().seq));
  });
  collectHandEdits(p.layout, currentByPath, withheld, report.handEdits);
  for (const f of safeReaddir(p.layout.usageDir)) {
    const text = readIfExists(path.join(p.layout.usageDir, f)) ?? '';
    report.usageEvents += text.split('\n').filter(Boolean).length;
  }
  return report;
}

/** Re-reads these lineages from their files (one the journal does not fully record is dropped). */
export function reindexLineages(
  p: FileParts,
  ids: Iterable<string>,
  journaled: Map<string, Set<number>>,
): void {
  for (const id of ids) {
    const lineage = readLineageFiles(p.layout, id);
    if (lineage && unjournaledRev(lineage, journaled) === null)
      p.index.replaceLineage(deriveLineage(lineage));
    else p.index.removeLineage(id);
  }
}

/**
 * Weights are a cache of the usage log: for each scope, the last `sleep_pass` entry among
 * `entries` names the watermark its weights were computed at; recompute them the same way.
 */
export function applyWeightPasses(p: FileParts, entries: readonly JournalEntry[]): void {
  const last = weightPasses(entries);
  if (last.size === 0) return;
  const usage = readUsage(p.layout.usageDir);
  for (const [scope, at] of last) {
    const subjects = p.index.current([scope], false);
    p.index.setWeights([scope], computeWeights(usage, subjects, at));
  }
}
