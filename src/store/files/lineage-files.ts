// A lineage on disk: its revision files under history/<id>/ and its current file under
// memories/, and which of its revisions the journal records (a lineage with a revision the
// journal does not record is served nowhere).
import fs from 'node:fs';
import path from 'node:path';
import type { JournalEntry } from '../../core/journal.js';
import { parseRevision, serializeRevision } from '../../core/markdown.js';
import type { Revision } from '../../core/types.js';
import { readIfExists, writeFileAtomic } from './atomic.js';
import { walk } from './dirs.js';
import type { Layout } from './layout.js';

/** memories/ holds the current revision of every live memory, and nothing else. */
export function writeCurrentFile(layout: Layout, r: Revision, previousPath: string | null): void {
  const target = layout.currentFile(r.scope, r.type, r.slug);
  if (previousPath && previousPath !== target) fs.rmSync(previousPath, { force: true });
  if (r.status === 'active') writeFileAtomic(target, serializeRevision(r), false);
  else fs.rmSync(target, { force: true });
}

export function readLineageFiles(layout: Layout, id: string): Revision[] | null {
  return readLineageTexts(layout, id)?.revisions ?? null;
}

/** A lineage's revisions, and the exact text of its last revision file. */
export function readLineageTexts(
  layout: Layout,
  id: string,
): { revisions: Revision[]; lastText: string } | null {
  const dir = layout.lineageDir(id);
  let names: string[];
  try {
    names = fs
      .readdirSync(dir)
      .filter((n) => /^\d{6}\.md$/.test(n))
      .sort();
  } catch {
    return null;
  }
  if (names.length === 0) return null;
  let lastText = '';
  const revisions = names.map((n) => {
    lastText = fs.readFileSync(path.join(dir, n), 'utf8');
    return parseRevision(lastText, `history/${id}/${n}`);
  });
  return { revisions, lastText };
}

export function findCurrentFilesFor(layout: Layout, id: string): string[] {
  const out: string[] = [];
  walk(layout.memoriesDir, (f) => {
    if (f.endsWith('.md') && (readIfExists(f) ?? '').includes(`\nid: ${id}\n`)) out.push(f);
  });
  return out;
}

/** id → the revisions the journal records for it. */
export function journaledRevisions(entries: readonly JournalEntry[]): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const e of entries) {
    if (!e.target || !e.after) continue;
    let set = out.get(e.target.id);
    if (!set) out.set(e.target.id, (set = new Set()));
    set.add(e.after.rev);
  }
  return out;
}

/** The first revision of a lineage that the journal does not record, or null. */
export function unjournaledRev(
  lineage: readonly Revision[],
  journaled: Map<string, Set<number>>,
): number | null {
  const set = journaled.get(lineage[0]?.id ?? '');
  for (const r of lineage) if (!set?.has(r.rev)) return r.rev;
  return null;
}
