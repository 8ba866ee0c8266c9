// The refusal record, .state/journal-broken.json: a chain that does not verify is recorded here
// with the journal's and the anchor's identity as they were, and every write is refused at once
// while both stay unchanged, until a person runs `mneme journal repair`.
import fs from 'node:fs';
import type { ChainProblem } from '../../core/journal.js';
import { readIfExists, writeFileAtomic } from './atomic.js';
import { anchorId, sameFp, type Fingerprint } from './journal-anchor.js';

export interface BrokenMark {
  firstBad: ChainProblem;
  /** The journal and its anchor as they were when the break was found. */
  fp: Fingerprint | null;
  anchor: string | null;
  at: string;
}

export function readBroken(brokenFile: string): BrokenMark | null {
  try {
    const text = readIfExists(brokenFile);
    if (text === null) return null;
    const m = JSON.parse(text) as BrokenMark;
    return m && typeof m.firstBad?.problem === 'string' ? m : brokenUnreadable();
  } catch {
    return brokenUnreadable();
  }
}

export function writeBroken(
  brokenFile: string,
  headFile: string,
  firstBad: ChainProblem,
  fp: Fingerprint | null,
): void {
  const mark: BrokenMark = {
    firstBad,
    fp,
    anchor: anchorId(headFile),
    at: new Date().toISOString(),
  };
  writeFileAtomic(brokenFile, `${JSON.stringify(mark, null, 2)}\n`, false);
}

/** Whether a recorded break still stands: the segments and HEAD are as they were then. */
export function markStands(mark: BrokenMark, fp: Fingerprint | null, headFile: string): boolean {
  return sameFp(mark.fp, fp) && mark.anchor === anchorId(headFile);
}

export function clearBroken(brokenFile: string): void {
  fs.rmSync(brokenFile, { force: true });
}

const brokenUnreadable = (): BrokenMark => ({
  firstBad: {
    seq: null,
    position: 0,
    problem: '.state/journal-broken.json (a recorded break) is unreadable',
  },
  fp: null,
  anchor: 'unreadable',
  at: '',
});
