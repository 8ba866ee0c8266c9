// The file store's side of the journal guard (journal-guard.ts says what is recorded): the
// anchor as read from journal/HEAD, the damage a person's repair acknowledges, the repair
// itself, and the full re-verification a reader's `journal verify` gets under the lock.
import fs from 'node:fs';
import { MnemeError } from '../../core/errors.js';
import { samePassphrase, type JournalEntry } from '../../core/journal.js';
import type {
  JournalAnchor,
  JournalDamage,
  RepairReport,
  RepairRequest,
  VerifyReport,
} from '../port.js';
import { damageOf, repairBody, restoredPassphraseBody } from '../journal-guard.js';
import { readIfExists } from './atomic.js';
import type { FileParts } from './parts.js';
import { rebuildIndex } from './rebuild.js';
import { resolveIntent, type Intent } from './recovery.js';

/** Under the lock: the whole chain judged again, a break recorded or a healed one lifted. */
export function verifyLocked(p: FileParts): VerifyReport {
  p.journalFiles.repairTornTail();
  const health = p.journalFiles.check(p.hasData, { full: true });
  if (health.ok ? health.cleared : health.detected) rebuildIndex(p);
  return p.journalFiles.verify(p.hasData);
}

export function anchorOf(p: FileParts): JournalAnchor {
  const read = p.journalFiles.readAnchor();
  if (read.state === 'ok')
    return {
      present: true,
      head: { seq: read.anchor.seq, hash: read.anchor.hash },
      ...(read.legacy ? {} : { passphrase: read.anchor.pp }),
    };
  // No anchor yet on a store that has never committed anything is not a loss.
  return p.journalFiles.segments().length === 0 && !p.hasData()
    ? { present: true, head: { seq: 0, hash: '0'.repeat(64) }, passphrase: null }
    : { present: false };
}

export function damageNow(p: FileParts): JournalDamage {
  const ev = p.journalFiles.evaluate(p.hasData);
  const anchor =
    ev.read.state === 'ok'
      ? {
          seq: ev.read.anchor.seq,
          hash: ev.read.anchor.hash,
          ...(ev.read.legacy ? {} : { passphrase: ev.read.anchor.pp }),
        }
      : null;
  const d = damageOf(ev.scan, anchor, ev.problem);
  // A recorded break nothing shows any more still needs a person's word to lift it.
  return d.ok && p.journalFiles.hasBrokenMark() ? { ...d, ok: false } : d;
}

/** Under the lock: re-anchors a journal whose chain does not verify, and records the loss. */
export function repairLocked(p: FileParts, req: RepairRequest): RepairReport {
  p.journalFiles.repairTornTail();
  const damage = damageNow(p);
  if (damage.ok) return { damage, entries: [] };
  // Finish or undo what a crash left while the chain was broken, against the journal as it
  // stands (before the repair entry takes the next seq an intent may name).
  const intentText = readIfExists(p.layout.intentFile);
  if (intentText !== null) {
    try {
      resolveIntent(p, JSON.parse(intentText) as Intent, p.journalFiles.head().seq);
    } catch {
      /* an unreadable intent: nothing to finish */
    }
    fs.rmSync(p.layout.intentFile, { force: true });
  }
  const anchorFor = (pp: typeof damage.journalPassphrase) => ({
    v: 2 as const,
    seq: 0,
    hash: '',
    pp,
    cp: null,
  });
  const entries: JournalEntry[] = [];
  entries.push(
    p.journalFiles.append(
      repairBody(damage, req, 'journal/HEAD'),
      anchorFor(damage.journalPassphrase),
    ),
  );
  if (damage.restorePassphrase)
    entries.push(
      p.journalFiles.append(
        restoredPassphraseBody(damage.restorePassphrase, req),
        anchorFor(damage.journalPassphrase),
      ),
    );
  const health = p.journalFiles.check(p.hasData, { full: true });
  if (!health.ok)
    throw new MnemeError('internal', `the repair did not verify: ${health.firstBad.problem}`);
  const pp = health.anchor.pp;
  if (damage.restorePassphrase && !samePassphrase(pp, damage.restorePassphrase))
    throw new MnemeError('internal', 'the repair did not re-record the review passphrase');
  rebuildIndex(p);
  return { damage, entries };
}
