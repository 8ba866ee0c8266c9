// Hand-edit detection: a file under memories/ that is not byte-identical to the revision it
// copies was edited outside mneme (or belongs to no memory). Rebuild reports them, fsck turns
// them into findings, and a write checks the one file it is about to replace.
import fs from 'node:fs';
import path from 'node:path';
import { serializeRevision } from '../../core/markdown.js';
import { toRevision } from '../../core/revision.js';
import type { Revision } from '../../core/types.js';
import type { IntegrityFinding, RebuildReport } from '../port.js';
import { readIfExists } from './atomic.js';
import { walk } from './dirs.js';
import type { Layout } from './layout.js';

/** A live memory's current file, when it differs from its revision. */
export function handEditOf(
  layout: Layout,
  current: Revision,
): { path: string; text: string } | null {
  if (current.status !== 'active') return null;
  const file = layout.currentFile(current.scope, current.type, current.slug);
  const text = readIfExists(file);
  if (text === null || text === serializeRevision(toRevision(current))) return null;
  return { path: path.relative(layout.root, file), text };
}

/** Rebuild's pass: every current file not identical to its recorded revision (or not recorded). */
export function collectHandEdits(
  layout: Layout,
  currentByPath: Map<string, { last: Revision; text: string }>,
  withheld: Set<string>,
  out: RebuildReport['handEdits'],
): void {
  // Hand edits: a file under memories/ that is not byte-identical to its recorded revision.
  walk(layout.memoriesDir, (f) => {
    if (!f.endsWith('.md')) return;
    const text = fs.readFileSync(f, 'utf8');
    const recorded = currentByPath.get(f);
    // The current file is a copy of its last history file; serialize only when they differ.
    if (recorded && (recorded.text === text || serializeRevision(recorded.last) === text)) return;
    const idMatch = /\nid: (mem_[0-9A-Z]{26})\n/.exec(text);
    if (!recorded && idMatch && withheld.has(idMatch[1]!)) return; // reported above
    out.push({
      path: path.relative(layout.root, f),
      id: idMatch?.[1] ?? recorded?.last.id ?? null,
      text,
    });
  });
}

/** fsck's pass: hand edits and orphan files under memories/, as findings. */
export function handEditFindings(
  layout: Layout,
  currentByPath: Map<string, Revision>,
  withheldIds: Set<string>,
  out: IntegrityFinding[],
  /** Current files already accounted for (unchanged since a clean fsck): not read again. */
  skip: ReadonlySet<string> = new Set(),
): void {
  walk(layout.memoriesDir, (f) => {
    if (!f.endsWith('.md') || skip.has(f)) return;
    const rel = path.relative(layout.root, f);
    const text = readIfExists(f) ?? '';
    const recorded = currentByPath.get(f);
    if (recorded && serializeRevision(recorded) === text) return;
    const id = /\nid: (mem_[0-9A-Z]{26})\n/.exec(text)?.[1] ?? recorded?.id;
    if (!recorded && id && withheldIds.has(id)) return; // reported with its revision
    if (recorded || id)
      out.push({
        kind: 'hand_edit',
        severity: 'warning',
        memory: id ?? recorded!.id,
        path: rel,
        text,
        message: `${rel} was edited outside mneme`,
      });
    else
      out.push({
        kind: 'orphan_file',
        severity: 'warning',
        path: rel,
        message: `${rel} belongs to no memory`,
      });
  });
}
