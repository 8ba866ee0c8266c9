// The write path's storage half: the one-sync commit protocol (DESIGN invariant 13, and
// docs/reliability.md "The commit protocol"). Every commit made while the store lock is held is
// *staged*: its journal line — the chained entry plus, outside the hashed entry, the exact text
// of the revision file it commits — is written (no sync) and its index rows go in, so the next
// op of the same group sees it. When the lock section ends, `flushLocked` makes the group
// durable with one fdatasync of the journal (the commit point of every line in it), and only
// then writes the history and current files, the tombstone and proposal effects (none synced)
// and advances the index's journal_seq. Whatever a crash leaves undone after the journal lines
// is re-created from them by recovery (recovery.ts materialise). Nothing is acknowledged before
// the sync: the engine returns only once the lock section, flush included, has returned.
import { commitEntry, type JournalEntry } from '../../core/journal.js';
import { deriveLineage } from '../../core/lineage.js';
import { serializeRevision } from '../../core/markdown.js';
import type { Revision, RevisionView } from '../../core/types.js';
import { MnemeError } from '../../core/errors.js';
import type { CommitRequest } from '../port.js';
import { chainRefused } from '../journal-guard.js';
import { writeFileAtomic } from './atomic.js';
import { applyAfterEffects } from './effects.js';
import { writeCurrentFile } from './lineage-files.js';
import type { FileParts, StagedCommit } from './parts.js';
import { applyWeightPasses, rebuildIndex } from './rebuild.js';

/**
 * Stages one commit under the store lock (see the file's comment). `markBehind` is called when
 * the journal line landed but the index did not take its rows (the store catches the index up
 * before its next read).
 */
export function commitLocked(
  p: FileParts,
  req: CommitRequest,
  markBehind: () => void,
): JournalEntry {
  // The tail against its anchor, before anything is written: a few stat calls and one read.
  const health = p.journalFiles.check(p.hasData);
  if (health.ok ? health.cleared : health.detected) {
    flushLocked(p, markBehind);
    rebuildIndex(p);
  }
  if (!health.ok) throw chainRefused(health.firstBad);
  const head = p.journalFiles.head();
  const r = req.revision;
  let views: RevisionView[] | null = null;
  let beforePath: string | null = null;
  let text: string | undefined;
  if (r) {
    const before = p.index.lineage(r.id);
    const prevCurrent = before?.[before.length - 1];
    beforePath = prevCurrent
      ? p.layout.currentFile(prevCurrent.scope, prevCurrent.type, prevCurrent.slug)
      : null;
    views = deriveLineage([...(before ?? []), r]);
    text = serializeRevision(r);
  }
  // The hashed form is built in core (commitEntry), chained to the head checked above.
  const entry = p.journalFiles.appendLine(commitEntry(head, req), health.anchor, text);
  const staged: StagedCommit = {
    entry,
    revision: r,
    text,
    beforePath,
    indexed: false,
    ...(req.tombstone ? { tombstone: req.tombstone } : {}),
    ...(req.proposal ? { proposal: req.proposal } : {}),
  };
  p.group.staged.push(staged);
  p.fault('after-journal');
  // The line is written (and is the commit point once the group's sync returns): from here on
  // the write stands whatever happens. An index that fails stays behind the journal (its
  // journal_seq is not advanced), so recovery or the next read catches it up.
  try {
    p.index.transaction(() => {
      if (views) p.index.replaceLineage(views);
      p.index.applyEntry(entry);
      applyWeightPasses(p, [entry]);
      p.index.setMeta('staged_seq', String(entry.seq));
    });
    staged.indexed = true;
  } catch {
    markBehind();
  }
  p.fault('after-index');
  return entry;
}

/**
 * Ends a group commit under the store lock: one sync of the journal, then the files. A failed
 * sync throws (the group's writes are not known durable, so none is acknowledged); anything that
 * fails after it only marks the store behind — the writes stand, recovery re-creates the files.
 */
export function flushLocked(p: FileParts, markBehind: () => void): void {
  const staged = p.group.staged.splice(0);
  if (staged.length === 0 && !p.journalFiles.dirty) return;
  try {
    p.journalFiles.sync();
  } catch (e) {
    markBehind();
    throw new MnemeError(
      'internal',
      `the journal could not be synced to disk (${(e as Error).message}); the last ${staged.length} write(s) may not be durable`,
      { hint: 'check the disk (space, errors), then run `mneme fsck`' },
    );
  }
  try {
    p.fault('group-after-sync');
    for (const s of staged) materialise(p, s);
    p.fault('group-after-files');
    const last = staged[staged.length - 1];
    // An entry whose rows did not go in keeps journal_seq where it was: catch-up redoes it.
    if (staged.some((s) => !s.indexed)) markBehind();
    else if (last)
      p.index.transaction(() => {
        p.index.setMeta('journal_seq', String(last.entry.seq));
        p.index.setMeta('staged_seq', String(last.entry.seq));
      });
  } catch {
    markBehind();
  }
}

/** One staged commit's files and effects, written after the sync (none synced: see recovery). */
function materialise(p: FileParts, s: StagedCommit): void {
  const r: Revision | null = s.revision;
  if (r && s.text !== undefined) {
    writeFileAtomic(p.layout.historyFile(r.id, r.rev), s.text, false);
    p.fault('group-after-history');
    writeCurrentFile(p.layout, r, s.beforePath);
    p.fault('group-after-current');
  }
  if (s.tombstone || s.proposal) {
    applyAfterEffects(p, s.tombstone, s.proposal);
    p.fault('group-after-effects');
  }
}
