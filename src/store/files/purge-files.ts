// The file store's half of a purge (engine/purge.ts decides it): under the store lock, the purge
// entry is appended (the commit point: it arms the purge tombstone and vouches for every earlier
// journal line it rewrites), then the needles are erased from every file the store keeps — the
// purged revisions become their skeletons, the journal lines, tombstones.jsonl (a value
// tombstone of the purged value is dropped: the purge tombstone replaces it), usage, the session
// archive, `.state/` (distiller pending output, session state), proposals and reports — and from
// the index: its rows re-derived, then SQLite's secure_delete, an FTS merge, VACUUM and a
// truncating WAL checkpoint, so neither free pages nor the WAL keep the old text. Other
// memories' revision files are left as they are (`purge --verify` reports what they hold).
// Also the store's purge secret (purge.key) and the scan `--verify` and `--find` read.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PURGE_OP, type JournalEntry } from '../../core/journal.js';
import { deriveLineage } from '../../core/lineage.js';
import { serializeRevision } from '../../core/markdown.js';
import { eraseJsonText, eraser, newPurgeSecret, redactedEntries } from '../../core/purge.js';
import { chainRefused } from '../journal-guard.js';
import { vouchingBody } from '../purge-body.js';
import type { Revision } from '../../core/types.js';
import type { PurgeReport, PurgeRequest, ScanPlace } from '../port.js';
import { readIfExists, writeFileAtomic } from './atomic.js';
import { commitLocked, flushLocked } from './commit.js';
import { removeStrayTemps, walk } from './dirs.js';
import { findCurrentFilesFor, readLineageFiles } from './lineage-files.js';
import type { FileParts } from './parts.js';

const SECRET_FILE = 'purge.key';

/** The store's purge secret (purge.key, mode 0600), created once if asked. */
export function purgeSecretFile(root: string, create: boolean): string | null {
  const file = path.join(root, SECRET_FILE);
  const read = () => readIfExists(file)?.trim() || null;
  const have = read();
  if (have || !create) return have;
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(tmp, `${newPurgeSecret((n) => crypto.randomBytes(n))}\n`, { mode: 0o600 });
  try {
    fs.linkSync(tmp, file); // fails if another process created it first: theirs stands
  } catch {
    /* created concurrently */
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return read();
}

/**
 * The redo record of a purge (.state/purge.json): written before the purge entry, removed once
 * the erasure is done. It holds the needles in clear for as long as the value is still in the
 * store anyway, so a crash after the commit point leaves recovery what it needs to finish.
 */
export interface PendingPurge {
  seq: number;
  id: string;
  needles: string[];
  skeletons: Revision[];
}

export const pendingPurgeFile = (p: FileParts) => path.join(p.layout.stateDir, 'purge.json');

export function purgeLocked(p: FileParts, req: PurgeRequest, markBehind: () => void): PurgeReport {
  const health = p.journalFiles.check(p.hasData);
  if (!health.ok) throw chainRefused(health.firstBad);
  const e = eraser(req.needles);
  const rewritten = redactedEntries(p.journalFiles.all(), e);
  const body = vouchingBody(req.body, rewritten);
  const pending: PendingPurge = {
    seq: p.journalFiles.head().seq + 1,
    id: req.id,
    needles: req.needles,
    skeletons: req.skeletons,
  };
  writeFileAtomic(pendingPurgeFile(p), JSON.stringify(pending), p.durable);
  p.fault('purge-after-pending');
  let entry: JournalEntry;
  try {
    entry = commitLocked(
      p,
      { body, revision: null, tombstone: { arm: req.tombstone } },
      markBehind,
    );
    // The purge entry's sync (the commit point) comes before any erasure.
    flushLocked(p, markBehind);
  } catch (err) {
    // Not committed: the purge did not happen, and its redo record goes with it.
    if (p.journalFiles.head().seq < pending.seq) fs.rmSync(pendingPurgeFile(p), { force: true });
    throw err;
  }
  p.fault('purge-after-journal');
  // The purge entry is the commit point (invariant 13): what follows is the store's to finish,
  // here or by recovery (finishPendingPurge) after a crash.
  const places = erasePurged(p, pending);
  fs.rmSync(pendingPurgeFile(p), { force: true });
  return { entry, redactedEntries: [...rewritten.keys()], places };
}

/**
 * Recovery's half (under the lock, after the intent is resolved): a purge whose redo record is
 * left is finished if its entry committed, and forgotten if not. Idempotent.
 */
export function finishPendingPurge(p: FileParts): boolean {
  const file = pendingPurgeFile(p);
  const text = readIfExists(file);
  if (text === null) return false;
  removeStrayTemps(p.layout.stateDir);
  let pending: PendingPurge | null = null;
  try {
    pending = JSON.parse(text) as PendingPurge;
  } catch {
    pending = null; // torn before its rename landed: never written, so never committed
  }
  if (pending) {
    const e = p.journalFiles.all().find((x) => x.seq === pending!.seq);
    if (e && e.op === PURGE_OP && e.target?.id === pending.id) erasePurged(p, pending);
  }
  fs.rmSync(file, { force: true });
  return true;
}

/** A purged memory's index rows re-derived and the old bytes compacted away (a re-run purge). */
export function resecurePurged(p: FileParts, id: string): string[] {
  const lineage = readLineageFiles(p.layout, id) ?? [];
  const places: string[] = [];
  if (lineage[lineage.length - 1]?.status === 'purged')
    for (const f of findCurrentFilesFor(p.layout, id)) {
      fs.rmSync(f, { force: true });
      places.push(path.relative(p.layout.root, f));
    }
  secureIndex(p, id, lineage.length > 0 ? deriveLineage(lineage) : null, new Map());
  return [...places, path.relative(p.layout.root, p.layout.indexFile)];
}

/** Erases a committed purge's needles from every place; safe to run again on what it did. */
function erasePurged(p: FileParts, pending: PendingPurge): string[] {
  const e = eraser(pending.needles);
  const root = p.layout.root;
  const places: string[] = [];
  const rel = (f: string) => path.relative(root, f);

  // 1. The journal lines before the purge entry, each keeping its hash (the purge entry vouches
  //    for the new content; what is already rewritten holds no needle and stays as it is).
  const rewritten = redactedEntries(
    p.journalFiles.all().filter((x) => x.seq < pending.seq),
    e,
  );
  p.journalFiles.rewriteEntries(rewritten, pending.id);
  p.fault('purge-after-journal-rewrite');

  // 2. tombstones.jsonl: a value tombstone of the purged value goes (and any lift of it); the
  //    purge tombstone, appended by the commit, holds the same guard as keyed hashes.
  const tombText = readIfExists(p.layout.tombstonesFile);
  if (tombText !== null) {
    const lines = tombText.split('\n');
    const dropKeys = new Set<string>();
    for (const line of lines) {
      try {
        const ev = JSON.parse(line) as {
          event?: string;
          kind?: string;
          key?: string;
          memory?: string;
        };
        if (
          ev.event === 'arm' &&
          ev.kind !== 'purged' &&
          (e.holds(line) || ev.memory === pending.id)
        )
          dropKeys.add(String(ev.key));
      } catch {
        /* a torn line */
      }
    }
    const kept = lines.filter((line) => {
      try {
        const ev = JSON.parse(line) as { key?: string; kind?: string };
        return ev.kind === 'purged' || !dropKeys.has(String(ev.key));
      } catch {
        return line.trim() === '' ? true : !e.holds(line);
      }
    });
    if (kept.length !== lines.length) {
      writeFileAtomic(p.layout.tombstonesFile, kept.join('\n'), p.durable);
      p.tombstones.reset();
      places.push(rel(p.layout.tombstonesFile));
    }
  }

  // 3. Every other file that holds the value, except memories of other lineages.
  const skip = new Set([
    p.layout.tombstonesFile,
    p.layout.lockFile,
    p.layout.intentFile,
    pendingPurgeFile(p),
    path.join(root, SECRET_FILE),
  ]);
  walk(root, (file) => {
    if (skip.has(file)) return;
    const r = rel(file);
    if (r.startsWith(`.index${path.sep}`) || r.startsWith(`journal${path.sep}`)) return;
    // Revisions are rewritten only as skeletons (step 4); other memories stay as they are.
    if (r.startsWith(`memories${path.sep}`) || r.startsWith(`history${path.sep}`)) return;
    const text = readIfExists(file);
    if (text === null || !e.holds(text)) return;
    let next: string;
    if (file.endsWith('.jsonl'))
      next = text
        .split('\n')
        .map((line) => eraseJsonText(line, e) ?? line)
        .join('\n');
    else if (file.endsWith('.json')) next = eraseJsonText(text, e) ?? text;
    else next = e.text(text);
    if (next !== text) {
      writeFileAtomic(file, next, p.durable);
      places.push(r);
    }
  });
  p.fault('purge-after-files');

  // 4. The purged revisions: their skeletons; the current file goes if the current one is purged
  //    (found by the lineage id it holds, so a crash after its rename leaves none behind).
  for (const s of pending.skeletons) {
    writeFileAtomic(p.layout.historyFile(s.id, s.rev), serializeRevision(s), p.durable);
    places.push(rel(p.layout.historyFile(s.id, s.rev)));
  }
  p.fault('purge-after-revisions');
  const lineage = readLineageFiles(p.layout, pending.id) ?? [];
  const last = lineage[lineage.length - 1];
  if (last && last.status === 'purged')
    for (const f of findCurrentFilesFor(p.layout, pending.id)) {
      fs.rmSync(f, { force: true });
      places.push(rel(f));
    }

  // 5. The index: rows re-derived, the old bytes overwritten and compacted away.
  secureIndex(p, pending.id, lineage.length > 0 ? deriveLineage(lineage) : null, rewritten);
  places.push(rel(p.layout.indexFile));
  return places;
}

function secureIndex(
  p: FileParts,
  id: string,
  views: ReturnType<typeof deriveLineage> | null,
  rewritten: ReadonlyMap<number, JournalEntry>,
): void {
  const db = p.index.db;
  db.pragma('secure_delete = ON');
  try {
    p.index.transaction(() => {
      if (views) p.index.replaceLineage(views);
      else p.index.removeLineage(id);
      for (const en of rewritten.values()) p.index.putIdempotent(en);
      const vec = db
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vec'")
        .get();
      if (vec) db.prepare('DELETE FROM vec WHERE id = ?').run(id);
    });
    // FTS5 keeps a deleted row's tokens in older segments until they merge: merge them all.
    db.exec("INSERT INTO fts(fts) VALUES('optimize')");
    db.exec('VACUUM');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.pragma('secure_delete = OFF');
  }
}

/** Every file under the store, as text (JSON lines one by one), for `--verify` and `--find`. */
export function scanFiles(root: string, visit: (place: ScanPlace, text: string) => void): void {
  walk(root, (file) => {
    const where = path.relative(root, file);
    if (where === SECRET_FILE) return;
    let buf: Buffer;
    try {
      buf = fs.readFileSync(file);
    } catch {
      return;
    }
    const m = /^history[\\/](mem_[0-9A-Z]{26})[\\/](\d{6})\.md$/.exec(where);
    const place: ScanPlace = m ? { where, id: m[1]!, rev: Number(m[2]) } : { where };
    if (file.endsWith('.jsonl')) {
      buf
        .toString('utf8')
        .split('\n')
        .forEach((line, i) => {
          if (line !== '') visit({ ...place, line: i + 1 }, line);
        });
      return;
    }
    const mem = /^memories[\\/]/.test(where)
      ? /\nid: (mem_[0-9A-Z]{26})\n/.exec(buf.toString('utf8'))
      : null;
    visit(mem ? { ...place, id: mem[1]! } : place, buf.toString('utf8'));
    // Binary files (the index) also as Latin-1, so no byte sequence hides a match.
    if (buf.includes(0)) visit(place, buf.toString('latin1'));
  });
}
