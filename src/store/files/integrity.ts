// fsck's integrity phase for the file store: the journal chain; each revision file against the
// hash its journal entry recorded (an edited or unreadable file names its memory); files with
// no journal entry; index rows against the files; current files that differ from their
// revision (hand edits); a commit left half done; unreadable proposal files.
// Incremental (the default for fsck): a lineage whose files are unchanged since it was last
// checked clean — every revision file's mtime and size, the hash its journal entry records (which
// its content matched), its index rows and its current file's mtime and size, all as they were
// — is not read again. The marks live in the store, .state/fsck-marks.json (the store's own
// state: it travels with the store and a lost file only makes the next run full), rewritten
// every CHECKPOINT_EVERY lineages (or a quarter of the marks held, if more) so an interrupted run
// continues where it stopped.
import fs from 'node:fs';
import path from 'node:path';
import { sha256 } from '../../core/hash.js';
import { journaledHashes } from '../../core/journal.js';
import { parseRevision, serializeRevision } from '../../core/markdown.js';
import { toRevision } from '../../core/revision.js';
import type { Revision } from '../../core/types.js';
import { chainFindings } from '../derived.js';
import type { IntegrityFinding, IntegrityOptions, VerifyReport } from '../port.js';
import { readIfExists, writeFileAtomic } from './atomic.js';
import { safeReaddir } from './dirs.js';
import { handEditFindings } from './hand-edits.js';
import type { FileParts } from './parts.js';

/**
 * How many lineages an incremental check reads between two saves of its marks, at least; the
 * gap grows to a quarter of the marks held, since each save rewrites all of them (a fixed gap
 * made a first check of 100k lineages quadratic: 369 s against 127 s for `--full`).
 */
export const CHECKPOINT_EVERY = 200;
const checkpointGap = (marks: Record<string, Mark>) =>
  Math.max(CHECKPOINT_EVERY, Math.ceil(Object.keys(marks).length / 4));

/** A lineage checked clean: its fingerprint then, and its current file (relative path). */
interface Mark {
  fp: string;
  current: string | null;
}

function loadMarks(file: string): Record<string, Mark> {
  try {
    const m = JSON.parse(readIfExists(file) ?? '') as { version?: number; lineages?: unknown };
    if (m.version === 1 && m.lineages && typeof m.lineages === 'object')
      return m.lineages as Record<string, Mark>;
  } catch {
    /* missing or unreadable: check everything */
  }
  return {};
}

/** The findings, given the chain's verification (taken first, under the store's rules). */
export function integrityFindings(
  p: FileParts,
  v: VerifyReport,
  opts: IntegrityOptions = {},
): IntegrityFinding[] {
  const out: IntegrityFinding[] = chainFindings(v);
  const marksFile = path.join(p.layout.stateDir, 'fsck-marks.json');
  const marks = opts.full ? {} : loadMarks(marksFile);
  const saveMarks = () => {
    fs.mkdirSync(p.layout.stateDir, { recursive: true });
    writeFileAtomic(marksFile, JSON.stringify({ version: 1, lineages: marks }), p.durable);
  };
  const stats = opts.stats ?? { checked: 0, skipped: 0 };
  const seen = new Set<string>();
  const handled = new Set<string>();
  let sinceSave = 0;
  let gap = checkpointGap(marks);
  if (fs.existsSync(p.layout.intentFile))
    out.push({
      kind: 'half_done_write',
      severity: 'error',
      path: '.state/intent.json',
      message: 'a commit was left half done (recovery finishes or undoes it on the next write)',
    });
  const journaled = journaledHashes(p.journalFiles.all());
  const indexed = p.index.allRevisionKeys();
  const onDisk = new Set<string>();
  const withheldIds = new Set<string>();
  const statOf = (f: string) => {
    try {
      const st = fs.statSync(f);
      return [st.mtimeMs, st.size];
    } catch {
      return null;
    }
  };
  for (const id of safeReaddir(p.layout.historyDir)) {
    if (!id.startsWith('mem_')) continue;
    seen.add(id);
    const dir = path.join(p.layout.historyDir, id);
    const names = safeReaddir(dir).filter((n) => /^\d{6}\.md$/.test(n));
    // A lineage with an unjournaled revision is withheld: it has no index rows on purpose.
    const withheld = names.some((n) => !journaled.has(`${id}#${Number(n.slice(0, 6))}`));
    if (withheld) withheldIds.add(id);
    const fingerprint = (current: string | null) =>
      sha256(
        JSON.stringify([
          names.map((n) => {
            const key = `${id}#${Number(n.slice(0, 6))}`;
            return [n, statOf(path.join(dir, n)), journaled.get(key), indexed.get(key)];
          }),
          withheld,
          current,
          current === null ? null : statOf(path.join(p.layout.root, current)),
        ]),
      );
    const mark = marks[id];
    if (mark && mark.fp === fingerprint(mark.current)) {
      for (const n of names) onDisk.add(`${id}#${Number(n.slice(0, 6))}`);
      if (mark.current !== null) handled.add(path.join(p.layout.root, mark.current));
      stats.skipped++;
      continue;
    }
    stats.checked++;
    const before = out.length;
    let last: Revision | null = null;
    for (const n of names) {
      const rev = Number(n.slice(0, 6));
      const key = `${id}#${rev}`;
      onDisk.add(key);
      const text = readIfExists(path.join(dir, n));
      const where = `history/${id}/${n}`;
      if (text === null) {
        out.push({
          kind: 'revision_unreadable',
          severity: 'error',
          memory: id,
          rev,
          path: where,
          message: `${where} cannot be read`,
        });
        continue;
      }
      let parsed: Revision | null = null;
      try {
        parsed = parseRevision(text, where);
      } catch (e) {
        out.push({
          kind: 'revision_unreadable',
          severity: 'error',
          memory: id,
          rev,
          path: where,
          message: (e as Error).message,
        });
      }
      const want = journaled.get(key);
      if (want === undefined) {
        out.push({
          kind: 'revision_unjournaled',
          severity: 'error',
          memory: id,
          rev,
          path: where,
          message: `${where} has no journal entry (cut from the journal, or added by hand): ${id} is withheld from every read. Repair: restore the journal from a backup (the memory is served again once its entries are back); or accept the loss: a person moves history/${id}/ and its current file under memories/ out of the store, runs \`mneme rebuild\`, and remembers it again if it still holds`,
        });
      } else if (sha256(text) !== want) {
        out.push({
          kind: 'revision_hash',
          severity: 'error',
          memory: id,
          rev,
          path: where,
          message: `${where} does not match the hash its journal entry recorded (edited or damaged)`,
        });
      }
      if (parsed && !withheld) {
        last = parsed;
        const doc = indexed.get(key);
        if (doc === undefined)
          out.push({
            kind: 'index_missing',
            severity: 'warning',
            memory: id,
            rev,
            message: `the index has no row for ${key}`,
          });
        else if (!sameRevision(JSON.parse(doc) as Revision, parsed))
          out.push({
            kind: 'index_stale',
            severity: 'warning',
            memory: id,
            rev,
            message: `the index row for ${key} differs from its file`,
          });
      }
    }
    // Its current file, checked here so that its mark covers it.
    let current: string | null = null;
    if (last && last.status === 'active' && !withheld) {
      const file = p.layout.currentFile(last.scope, last.type, last.slug);
      const text = readIfExists(file);
      if (text !== null) {
        handled.add(file);
        current = path.relative(p.layout.root, file);
        if (serializeRevision(last) !== text)
          out.push({
            kind: 'hand_edit',
            severity: 'warning',
            memory: /\nid: (mem_[0-9A-Z]{26})\n/.exec(text)?.[1] ?? last.id,
            path: current,
            text,
            message: `${current} was edited outside mneme`,
          });
      }
    }
    if (out.length === before) marks[id] = { fp: fingerprint(current), current };
    else delete marks[id];
    if (++sinceSave >= gap) {
      saveMarks();
      sinceSave = 0;
      gap = checkpointGap(marks);
      p.fault('fsck_checkpoint');
    }
  }
  // A revision the journal committed with no file: under the one-sync commit, what a power loss
  // can take after the journal's sync (the files are written after it, unsynced).
  for (const key of journaled.keys())
    if (!onDisk.has(key)) {
      const [id, rev] = key.split('#');
      const where = `history/${id}/${rev!.padStart(6, '0')}.md`;
      out.push({
        kind: 'revision_unreadable',
        severity: 'error',
        memory: id,
        rev: Number(rev),
        path: where,
        message: `${where} is missing, though the journal committed it: \`mneme rebuild\` writes it again from its journal line (lines written before mneme carried the revision text cannot: restore the file from a backup)`,
      });
    }
  for (const id of Object.keys(marks)) if (!seen.has(id)) delete marks[id];
  for (const key of indexed.keys())
    if (!onDisk.has(key)) {
      const [id, rev] = key.split('#');
      out.push({
        kind: 'index_stale',
        severity: 'warning',
        memory: id,
        rev: Number(rev),
        message: `the index holds ${key}, which has no revision file`,
      });
    }
  handEditFindings(p.layout, new Map(), withheldIds, out, handled);
  // A finding that names a memory (an index row of a missing file, a file of another memory
  // under this one's path) keeps that lineage checked next time too.
  for (const f of out) if (f.memory) delete marks[f.memory];
  saveMarks();
  for (const n of safeReaddir(p.layout.proposalsDir).filter((x) => x.endsWith('.json'))) {
    try {
      JSON.parse(readIfExists(path.join(p.layout.proposalsDir, n)) ?? '');
    } catch {
      out.push({
        kind: 'proposal_unreadable',
        severity: 'warning',
        path: `proposals/${n}`,
        message: `proposals/${n} is not valid JSON`,
      });
    }
  }
  return out;
}

function sameRevision(a: Revision, b: Revision): boolean {
  return serializeRevision(toRevision(a)) === serializeRevision(toRevision(b));
}
