// Open-time and pre-write recovery: the torn journal tail; the files of committed entries a crash
// left unwritten (materialise: every entry past the index's journal_seq has its history file,
// current file, tombstone and proposal effects re-created from its journal line); bringing a
// lagging index up to the journal (catch-up), or rebuilding it whole when it is of an older
// schema, ahead of the journal, or the chain broke. The intent file (.state/intent.json) of the
// older three-sync protocol is still finished or undone here when a store crashed under it.
import fs from 'node:fs';
import path from 'node:path';
import type { Proposal } from '../../core/proposal.js';
import type { CommitRequest } from '../port.js';
import { sha256 } from '../../core/hash.js';
import { parseRevision, serializeRevision } from '../../core/markdown.js';
import { readIfExists, writeFileAtomic } from './atomic.js';
import { flushLocked } from './commit.js';
import { removeStrayTemps } from './dirs.js';
import { applyAfterEffects } from './effects.js';
import {
  findCurrentFilesFor,
  journaledRevisions,
  readLineageFiles,
  writeCurrentFile,
} from './lineage-files.js';
import type { FileParts } from './parts.js';
import { finishPendingPurge, pendingPurgeFile } from './purge-files.js';
import { applyWeightPasses, rebuildIndex, reindexLineages } from './rebuild.js';

export interface Intent {
  seq: number;
  /** The revision being written, if any. */
  id: string | null;
  rev: number | null;
  /** Current-file path before the write (null for a new lineage). */
  before: string | null;
  /** Effects applied after the journal line; redone on recovery if the line committed. */
  tombstone?: CommitRequest['tombstone'];
  proposal?: Proposal;
}

export function needsRecovery(p: FileParts): boolean {
  if (fs.existsSync(p.layout.intentFile)) return true;
  // A group commit that did not finish (killed before or after its sync): its files are due.
  if (p.index.stagedSeq > p.index.journalSeq) return true;
  if (fs.existsSync(pendingPurgeFile(p))) return true;
  if (!p.index.schemaOk) return true;
  // A torn last line must go before the next append, or that append would be glued to it.
  if (p.journalFiles.hasTornTail()) return true;
  // The journal changed since the last commit anchored it (a crash, a restore, tampering).
  if (p.journalFiles.fast() === null) return true;
  return p.index.journalSeq !== p.journalFiles.head().seq;
}

/** An index of an older schema, or one ahead of the journal, is rebuilt whole (when not empty). */
export function needsFullRebuild(p: FileParts): boolean {
  const head = p.journalFiles.head().seq;
  return head > 0 && (!p.index.schemaOk || p.index.journalSeq > head || p.index.stagedSeq > head);
}

/** Runs under the lock before every write: finishes or undoes a crashed commit. */
export function recoverLocked(p: FileParts): void {
  // A group this process is making is finished first (its sync, then its files).
  if (p.group.staged.length > 0) flushLocked(p, () => {});
  if (!needsRecovery(p)) return;
  p.journalFiles.repairTornTail();
  const health = p.journalFiles.check(p.hasData);
  if (!health.ok) {
    // Nothing is healed or finished on a chain that does not verify (an intent is left for
    // after the repair), but the index follows the journal as it stands, so a revision whose
    // journal entry was cut is not served.
    if (health.detected || !p.index.schemaOk || p.index.journalSeq !== p.journalFiles.head().seq)
      rebuildIndex(p);
    return;
  }
  // A journal that verifies again (restored from a backup) is indexed again as it is.
  if (health.cleared) rebuildIndex(p);
  const head = p.journalFiles.head();
  const intentText = readIfExists(p.layout.intentFile);
  if (intentText !== null) {
    let intent: Intent | null = null;
    try {
      intent = JSON.parse(intentText) as Intent;
    } catch {
      intent = null;
    }
    if (intent) resolveIntent(p, intent, head.seq);
    fs.rmSync(p.layout.intentFile, { force: true });
  }
  // Committed entries whose files a crash left unwritten, or torn: re-created from their lines.
  const from = Math.min(p.index.schemaOk ? p.index.journalSeq : 0, head.seq);
  if (from < head.seq) materialiseFrom(p, from, { effects: p.index.schemaOk });
  if (!p.index.schemaOk) rebuildIndex(p);
  // Rows staged for lines the journal does not hold (lost before their sync): rebuilt whole.
  else if (p.index.journalSeq > head.seq || p.index.stagedSeq > head.seq) rebuildIndex(p);
  else if (p.index.journalSeq < head.seq) catchUpIndex(p, p.index.journalSeq);
  else if (p.index.stagedSeq > p.index.journalSeq) catchUpIndex(p, p.index.journalSeq);
  // A purge whose entry committed is finished (its erasure redone), one that did not, forgotten.
  finishPendingPurge(p);
}

export function resolveIntent(p: FileParts, intent: Intent, headSeq: number): void {
  // A write killed inside writeFileAtomic leaves its temp file beside the target.
  if (intent.id !== null) removeStrayTemps(p.layout.lineageDir(intent.id));
  if (intent.before !== null) removeStrayTemps(path.dirname(intent.before));
  removeStrayTemps(p.layout.stateDir);
  let committed = false;
  if (headSeq >= intent.seq) {
    const e = p.journalFiles.all().find((x) => x.seq === intent.seq);
    committed =
      e !== undefined &&
      (intent.id === null || (e.target?.id === intent.id && e.after?.rev === intent.rev));
  }
  if (committed) {
    // Roll forward: the journal says it happened, so make the files agree.
    if (intent.id !== null) {
      const lineage = readLineageFiles(p.layout, intent.id);
      if (lineage) writeCurrentFile(p.layout, lineage[lineage.length - 1]!, intent.before);
    }
    applyAfterEffects(p, intent.tombstone, intent.proposal);
    return;
  }
  // Roll back: no journal entry, so the write never happened. Tombstone and proposal effects
  // are only written after the journal line, so there is nothing of theirs to undo.
  if (intent.id === null || intent.rev === null) return;
  fs.rmSync(p.layout.historyFile(intent.id, intent.rev), { force: true });
  const lineage = readLineageFiles(p.layout, intent.id);
  const prev = lineage?.[lineage.length - 1];
  if (prev) {
    writeCurrentFile(p.layout, prev, null);
  } else {
    // A brand-new lineage that never committed: remove its current file if it was written.
    for (const f of findCurrentFilesFor(p.layout, intent.id)) fs.rmSync(f, { force: true });
    fs.rmSync(p.layout.lineageDir(intent.id), { recursive: true, force: true });
  }
}

/**
 * Makes the files agree with the journal past `afterSeq` (idempotent): each entry's revision
 * file is rewritten from the text its line carries when missing or different (the line's text
 * is used only when it hashes to the entry's `after.hash`); each lineage touched gets its current
 * file from its last revision, with an older revision's current file at another path removed;
 * with `effects` (the entries of a crashed group), each tombstone and proposal effect is redone
 * in journal order and a differing current file is rewritten; without (a rebuild looking at the
 * whole journal: a purge may have erased effects on purpose, a person may have edited a current
 * file), effects are left and only an absent, empty or stale current file is rewritten. Lines of the older protocol
 * carry no text: their files were synced before the line, and are left as they are.
 */
export function materialiseFrom(
  p: FileParts,
  afterSeq: number,
  opts: { effects: boolean } = { effects: true },
): void {
  const touched = new Set<string>();
  for (const { entry: e, file } of p.journalFiles.linesAfter(afterSeq)) {
    if (e.target && e.after && file !== undefined) {
      const target = p.layout.historyFile(e.target.id, e.after.rev);
      if (readIfExists(target) !== file && textHashes(file, e.after.hash)) {
        removeStrayTemps(p.layout.lineageDir(e.target.id));
        writeFileAtomic(target, file, false);
      }
      touched.add(e.target.id);
    }
    if (opts.effects) {
      const d = e.data as { tombstone?: unknown; proposal?: unknown } | undefined;
      const t = isObject(d?.tombstone) && ('arm' in d.tombstone || 'lift' in d.tombstone);
      const prop = isObject(d?.proposal) && typeof d.proposal.id === 'string';
      if (t || prop)
        applyAfterEffects(
          p,
          t ? (d!.tombstone as CommitRequest['tombstone']) : undefined,
          prop ? (d!.proposal as Proposal) : undefined,
        );
    }
  }
  for (const id of touched) {
    const lineage = readLineageFiles(p.layout, id);
    const last = lineage?.[lineage.length - 1];
    if (!lineage || !last) continue;
    const target = p.layout.currentFile(last.scope, last.type, last.slug);
    for (const r of lineage.slice(0, -1)) {
      const older = p.layout.currentFile(r.scope, r.type, r.slug);
      if (older !== target) fs.rmSync(older, { force: true });
    }
    const text = readIfExists(target);
    const want = serializeRevision(last);
    // Outside a crashed group's window a current file that differs may be a person's edit
    // (rebuild reports it): only one absent, empty or still an earlier revision is rewritten.
    const stale =
      text === null ||
      text === '' ||
      lineage.slice(0, -1).some((r) => serializeRevision(r) === text) ||
      opts.effects;
    if (last.status !== 'active' || (text !== want && stale))
      writeCurrentFile(p.layout, last, null);
  }
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null;

function textHashes(text: string, hash: string): boolean {
  if (sha256(text) === hash) return true;
  try {
    return sha256(serializeRevision(parseRevision(text))) === hash;
  } catch {
    return false;
  }
}

/** Brings an index that lags the journal up to it: the lineages and entries past `afterSeq`. */
export function catchUpIndex(p: FileParts, afterSeq: number): void {
  const all = p.journalFiles.all();
  const journaled = journaledRevisions(all);
  const entries = all.filter((e) => e.seq > afterSeq);
  const ids = new Set<string>();
  for (const e of entries) if (e.target && e.after) ids.add(e.target.id);
  p.index.transaction(() => {
    reindexLineages(p, ids, journaled);
    for (const e of entries) p.index.applyEntry(e);
    applyWeightPasses(p, entries);
    p.index.setMeta('journal_seq', String(p.journalFiles.head().seq));
    p.index.setMeta('staged_seq', String(p.journalFiles.head().seq));
  });
}
