// The write path's storage half: one commit. It writes an intent, the revision files (temp +
// rename), then the journal line (the commit point), then its effects and the index rows; what
// fails after the journal line is left for recovery (recovery.ts) or the next read to finish.
import fs from 'node:fs';
import { commitEntry, type JournalEntry } from '../../core/journal.js';
import { deriveLineage } from '../../core/lineage.js';
import { serializeRevision } from '../../core/markdown.js';
import type { RevisionView } from '../../core/types.js';
import type { CommitRequest } from '../port.js';
import { chainRefused } from '../journal-guard.js';
import { writeFileAtomic } from './atomic.js';
import { applyAfterEffects } from './effects.js';
import { writeCurrentFile } from './lineage-files.js';
import type { FileParts } from './parts.js';
import { applyWeightPasses, rebuildIndex } from './rebuild.js';
import type { Intent } from './recovery.js';

/**
 * Commits under the store lock. `markBehind` is called when the journal line landed but an
 * effect or the index did not (the store catches the index up before its next read).
 */
export function commitLocked(
  p: FileParts,
  req: CommitRequest,
  markBehind: () => void,
): JournalEntry {
  // The tail against its anchor, before anything is written: a few stat calls and one read.
  const health = p.journalFiles.check(p.hasData);
  if (health.ok ? health.cleared : health.detected) rebuildIndex(p);
  if (!health.ok) throw chainRefused(health.firstBad);
  const head = p.journalFiles.head();
  const r = req.revision;
  const hasEffects = r !== null || req.tombstone !== undefined || req.proposal !== undefined;
  let views: RevisionView[] | null = null;
  let beforePath: string | null = null;
  let before: RevisionView[] | null = null;
  if (r) {
    before = p.index.lineage(r.id);
    const prevCurrent = before?.[before.length - 1];
    beforePath = prevCurrent
      ? p.layout.currentFile(prevCurrent.scope, prevCurrent.type, prevCurrent.slug)
      : null;
  }
  if (hasEffects) {
    const intent: Intent = {
      seq: head.seq + 1,
      id: r?.id ?? null,
      rev: r?.rev ?? null,
      before: beforePath,
      ...(req.tombstone ? { tombstone: req.tombstone } : {}),
      ...(req.proposal ? { proposal: req.proposal } : {}),
    };
    writeFileAtomic(p.layout.intentFile, JSON.stringify(intent), p.durable);
    p.fault('after-intent');
  }
  if (r) {
    writeFileAtomic(p.layout.historyFile(r.id, r.rev), serializeRevision(r), p.durable);
    p.fault('after-history');
    writeCurrentFile(p.layout, r, beforePath);
    p.fault('after-current');
    views = deriveLineage([...(before ?? []), r]);
  }
  // The hashed form is built in core (commitEntry), chained to the head checked above.
  const entry = p.journalFiles.appendEntry(commitEntry(head, req), health.anchor);
  p.fault('after-journal');
  // The journal line is the commit point (invariant 13): from here on the write is reported as
  // done whatever happens, and what is left undone is the store's to finish. Effects that fail
  // keep the intent file, so recovery redoes them; an index that fails stays behind the
  // journal (its journal_seq is not advanced), so recovery or the next read catches it up.
  let finished = true;
  try {
    applyAfterEffects(p, req.tombstone, req.proposal);
  } catch {
    finished = false;
  }
  try {
    p.index.transaction(() => {
      if (views) p.index.replaceLineage(views);
      p.index.applyEntry(entry);
      applyWeightPasses(p, [entry]);
      p.index.setMeta('journal_seq', String(entry.seq));
    });
  } catch {
    markBehind();
  }
  p.fault('after-index');
  if (hasEffects && finished) fs.rmSync(p.layout.intentFile, { force: true });
  if (!finished) markBehind();
  return entry;
}
