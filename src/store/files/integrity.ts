// fsck's integrity phase for the file store: the journal chain; each revision file against the
// hash its journal entry recorded (an edited or unreadable file names its memory); files with
// no journal entry; index rows against the files; current files that differ from their
// revision (hand edits); a commit left half done; unreadable proposal files.
import fs from 'node:fs';
import path from 'node:path';
import { sha256 } from '../../core/hash.js';
import { journaledHashes } from '../../core/journal.js';
import { parseRevision, serializeRevision } from '../../core/markdown.js';
import { toRevision } from '../../core/revision.js';
import type { Revision } from '../../core/types.js';
import { chainFindings } from '../derived.js';
import type { IntegrityFinding, VerifyReport } from '../port.js';
import { readIfExists } from './atomic.js';
import { safeReaddir } from './dirs.js';
import { handEditFindings } from './hand-edits.js';
import type { FileParts } from './parts.js';

/** The findings, given the chain's verification (taken first, under the store's rules). */
export function integrityFindings(p: FileParts, v: VerifyReport): IntegrityFinding[] {
  const out: IntegrityFinding[] = chainFindings(v);
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
  const currentByPath = new Map<string, Revision>();
  const withheldIds = new Set<string>();
  for (const id of safeReaddir(p.layout.historyDir)) {
    if (!id.startsWith('mem_')) continue;
    const dir = path.join(p.layout.historyDir, id);
    const names = safeReaddir(dir).filter((n) => /^\d{6}\.md$/.test(n));
    // A lineage with an unjournaled revision is withheld: it has no index rows on purpose.
    const withheld = names.some((n) => !journaled.has(`${id}#${Number(n.slice(0, 6))}`));
    if (withheld) withheldIds.add(id);
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
    if (last && last.status === 'active')
      currentByPath.set(p.layout.currentFile(last.scope, last.type, last.slug), last);
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
  handEditFindings(p.layout, currentByPath, withheldIds, out);
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
