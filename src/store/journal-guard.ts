// What both adapters say and record when a journal's chain does not verify (invariant 14): the
// refusal every write gets, the damage a person's repair acknowledges, and the entries that
// repair appends. The checks themselves are core/journal.ts (verifyChain, judgeChain).
import { MnemeError } from '../core/errors.js';
import {
  GENESIS,
  REPAIR_OP,
  samePassphrase,
  type AnchorRecord,
  type ChainProblem,
  type ChainScan,
  type JournalBody,
  type PassphraseRecord,
} from '../core/journal.js';
import type { JournalDamage, RepairRequest, VerifyReport } from './port.js';

export const REPAIR_COMMAND = 'mneme journal repair';

export function describeBad(bad: ChainProblem): string {
  return `${bad.seq !== null ? `entry #${bad.seq}` : `line ${bad.position}`} — ${bad.problem}`;
}

/** The refusal every write gets while the chain does not verify (reads keep working). */
export function chainRefused(bad: ChainProblem): MnemeError {
  return new MnemeError(
    'refused',
    `the journal's hash chain does not verify, so this store accepts no write until a person repairs it (first bad entry: ${describeBad(bad)}); the repair is \`${REPAIR_COMMAND}\`, run by a person in a terminal`,
    {
      hint: `reads keep working; \`mneme journal verify\` shows the break and \`${REPAIR_COMMAND}\` (a person, outside any agent session) re-anchors the journal and records what was lost`,
      details: { chain: 'broken', first_bad: bad },
    },
  );
}

export const isChainRefusal = (e: unknown): boolean =>
  e instanceof MnemeError && e.details?.chain === 'broken';

/** The damage a repair would acknowledge, from a scan and the anchor it was measured against. */
export function damageOf(
  scan: ChainScan,
  anchor: AnchorRecord | null,
  problem: ChainProblem | null,
): JournalDamage {
  const fromEmpty = anchor !== null && anchor.seq === 0 && anchor.hash === GENESIS;
  const found = anchor !== null && (fromEmpty || scan.anchorAt !== null);
  const lostTail =
    anchor && !found && anchor.seq > scan.tail.seq
      ? { fromSeq: scan.tail.seq + 1, toSeq: anchor.seq, anchorHash: anchor.hash }
      : null;
  const anchored = anchor?.passphrase ?? null;
  const lostPassphrase =
    anchored !== null &&
    !samePassphrase(scan.passphrase, anchored) &&
    !(found && !fromEmpty && samePassphrase(scan.passphraseAtAnchor, anchored));
  return {
    ok: problem === null,
    firstBad: problem,
    lines: scan.lines,
    tail: scan.tail,
    breaks: scan.breaks.map(({ position, line, seq, problem: p }) => ({
      position,
      line,
      seq,
      problem: p,
    })),
    lostTail,
    // The anchor itself is intact when the journal was cut short of it.
    anchor: anchor === null ? 'missing' : found || lostTail ? 'ok' : 'replaced',
    restorePassphrase: lostPassphrase ? anchored : null,
    journalPassphrase: scan.passphrase,
  };
}

/** The `journal_repair` entry: who repaired, why, which breaks it acknowledges, what was lost. */
export function repairBody(d: JournalDamage, req: RepairRequest, anchorName: string): JournalBody {
  return {
    at: req.at,
    actor: req.actor,
    op: REPAIR_OP,
    target: null,
    before: null,
    after: null,
    reason: req.reason,
    idem: null,
    req: null,
    data: {
      first_bad: d.firstBad,
      acknowledges: d.breaks,
      lost_tail: d.lostTail,
      anchor: d.anchor === 'ok' ? 'intact' : `${anchorName} ${d.anchor}`,
      journal: { lines: d.lines, tail: d.tail },
      passphrase: d.restorePassphrase ? 're-recorded from the anchor' : 'unchanged',
    },
  };
}

/** Re-records the anchored review passphrase the journal lost (right after the repair entry). */
export function restoredPassphraseBody(pp: PassphraseRecord, req: RepairRequest): JournalBody {
  return {
    at: req.at,
    actor: req.actor,
    op: 'set_passphrase',
    target: null,
    before: null,
    after: null,
    reason:
      'journal repair: the journal had lost the entry setting this passphrase; re-recorded from the anchor',
    idem: null,
    req: null,
    data: { salt: pp.salt, hash: pp.hash, restored: true },
  };
}

/** The verify report for a scan and its judgement. */
export function reportOf(scan: ChainScan, problem: ChainProblem | null): VerifyReport {
  const repaired = scan.repaired.map(({ seq, position, problem: p }) => ({
    seq,
    position,
    problem: p,
  }));
  if (problem) {
    const inChain = scan.problem !== null;
    return {
      ok: false,
      entries: inChain ? scan.count : scan.lines,
      head: inChain ? scan.head : scan.tail,
      firstBad: problem,
      ...(repaired.length ? { repaired } : {}),
    };
  }
  return {
    ok: true,
    entries: scan.lines,
    head: scan.tail,
    firstBad: null,
    ...(repaired.length ? { repaired } : {}),
  };
}
