// journal/HEAD, the anchor: the last committed entry (so a cut tail shows), the review
// passphrase as of that entry (so dropping its `set_passphrase` line shows), and a checkpoint —
// the stat identity (size, inode, change time) of the segments right after that commit, so a
// write can tell in a few stat calls whether anything touched them since.
import fs from 'node:fs';
import path from 'node:path';
import { sha256 } from '../../core/hash.js';
import type { PassphraseRecord } from '../../core/journal.js';
import { readIfExists, writeFileAtomic } from './atomic.js';

/**
 * HEAD is one record of this many bytes (JSON padded with spaces), overwritten in place: one
 * sector, so a crash leaves the old record or the new one.
 */
const HEAD_BYTES = 512;
export const ANCHOR_NAME = 'journal/HEAD';

/** The segments' stat identity right after a commit; any later change to them changes it. */
export interface Fingerprint {
  seg: string;
  size: number;
  ino: string;
  ctime: string;
  /** Hash of the earlier (sealed) segments' names and stat identities ('' when there are none). */
  sealed: string;
}

/** The HEAD record. Version 1 held only seq and hash; it is upgraded after a full verify. */
export interface Anchor {
  v: 2;
  seq: number;
  hash: string;
  pp: PassphraseRecord | null;
  cp: Fingerprint | null;
}

export type AnchorRead =
  { state: 'missing' } | { state: 'unreadable' } | { state: 'ok'; anchor: Anchor; legacy: boolean };

/**
 * Overwrites HEAD in place as one fixed-width record (one sector), not by rename: replacing a
 * file by rename makes ext4 flush it, which cost more than the rest of a write.
 */
export function writeAnchor(headFile: string, a: Anchor): void {
  const record = `${JSON.stringify(a)}`.padEnd(HEAD_BYTES - 1) + '\n';
  let fd: number;
  try {
    fd = fs.openSync(headFile, 'r+');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    writeFileAtomic(headFile, record, false);
    return;
  }
  try {
    fs.writeSync(fd, record, 0);
    const size = fs.fstatSync(fd).size;
    if (size > record.length) fs.ftruncateSync(fd, record.length);
  } finally {
    fs.closeSync(fd);
  }
}

export function readAnchor(headFile: string): AnchorRead {
  // (JSON.parse ignores the record's padding.)
  let text: string | null;
  try {
    text = readIfExists(headFile);
  } catch {
    return { state: 'unreadable' };
  }
  if (text === null) return { state: 'missing' };
  try {
    const h = JSON.parse(text) as Partial<Anchor>;
    if (typeof h.seq !== 'number' || typeof h.hash !== 'string') return { state: 'unreadable' };
    if (h.v !== 2)
      return {
        state: 'ok',
        legacy: true,
        anchor: { v: 2, seq: h.seq, hash: h.hash, pp: null, cp: null },
      };
    const pp = h.pp && typeof h.pp.salt === 'string' && typeof h.pp.hash === 'string' ? h.pp : null;
    return {
      state: 'ok',
      legacy: false,
      anchor: { v: 2, seq: h.seq, hash: h.hash, pp, cp: h.cp ?? null },
    };
  } catch {
    return { state: 'unreadable' };
  }
}

/** A hash of HEAD's bytes (null when missing): a recorded break stands while both are unchanged. */
export function anchorId(headFile: string): string | null {
  try {
    const text = readIfExists(headFile);
    return text === null ? null : sha256(text);
  } catch {
    return 'unreadable';
  }
}

/** The segments' stat identity now (null when there is no segment). */
export function fingerprintOf(segs: string[]): Fingerprint | null {
  if (segs.length === 0) return null;
  try {
    const stats = segs.map((f) => fs.statSync(f, { bigint: true }));
    const id = (i: number) =>
      `${path.basename(segs[i]!)}:${stats[i]!.size}:${stats[i]!.ino}:${stats[i]!.ctimeNs}`;
    const last = stats[stats.length - 1]!;
    return {
      seg: path.basename(segs[segs.length - 1]!),
      size: Number(last.size),
      ino: String(last.ino),
      ctime: String(last.ctimeNs),
      sealed:
        segs.length > 1
          ? sha256(
              segs
                .slice(0, -1)
                .map((_, i) => id(i))
                .join('\n'),
            )
          : '',
    };
  } catch {
    // A segment vanished between the listing and its stat: a fingerprint nothing matches.
    return { seg: '', size: -1, ino: '', ctime: '', sealed: '' };
  }
}

export function sameFp(a: Fingerprint | null | undefined, b: Fingerprint | null): boolean {
  if (!a || !b) return !a && !b;
  return (
    a.seg === b.seg &&
    a.size === b.size &&
    a.ino === b.ino &&
    a.ctime === b.ctime &&
    a.sealed === b.sealed
  );
}
