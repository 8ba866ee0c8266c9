// The optional review passphrase: when set, every review decision requires it, so approving is
// something an agent sharing the user's account does not know. Its scrypt hash lives in the
// journal (set with the human-only `set_passphrase` op) and, as of the last commit, in the
// store's journal anchor: cutting the entry breaks the chain (writes refuse) and leaves the
// anchor disagreeing with the journal (decisions refuse), so it fails closed.
import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';
import { MnemeError } from '../core/errors.js';
import { passphraseSetBy, samePassphrase, type PassphraseRecord } from '../core/journal.js';
import type { Store } from '../store/port.js';

const KEYLEN = 32;

export function hashPassphrase(passphrase: string): { salt: string; hash: string } {
  const salt = randomBytes(16).toString('hex');
  return { salt, hash: scryptSync(passphrase, salt, KEYLEN).toString('hex') };
}

/**
 * The passphrase every decision needs, or null. The journal's newest `set_passphrase` entry is
 * cross-checked with the copy the store anchors apart from the journal (journal/HEAD, the
 * journal_head row): cutting that entry, or dropping the anchor, refuses decisions instead of
 * letting them run without a passphrase.
 */
export async function currentPassphrase(
  store: Store,
): Promise<{ salt: string; hash: string } | null> {
  const [last] = await store.journal({ op: 'set_passphrase', reverse: true, limit: 1 });
  const journaled = last ? passphraseSetBy(last) : null;
  const anchor = await store.anchor();
  if (!anchor.present)
    throw new MnemeError(
      'refused',
      'decisions are refused: the journal has lost its anchor, so whether a review passphrase was set cannot be known',
      { hint: 'a person runs `mneme journal repair` in a terminal first' },
    );
  // An anchor from before the passphrase was anchored: the journal alone decides.
  if (anchor.passphrase === undefined) return journaled;
  if (samePassphrase(journaled, anchor.passphrase)) return journaled;
  throw new MnemeError(
    'refused',
    anchor.passphrase
      ? 'decisions are refused: the journal no longer holds the review passphrase its anchor records (the entry setting it was cut or edited)'
      : 'decisions are refused: the journal sets a review passphrase its anchor does not record (the anchor was rewritten)',
    { hint: 'a person runs `mneme journal repair` in a terminal first' },
  );
}

/** The passphrase a person must give to repair the journal: the anchored one, else the journal's. */
export async function repairPassphrase(store: Store): Promise<PassphraseRecord | null> {
  const anchor = await store.anchor();
  if (anchor.present && anchor.passphrase) return anchor.passphrase;
  const [last] = await store.journal({ op: 'set_passphrase', reverse: true, limit: 1 });
  return last ? passphraseSetBy(last) : null;
}

export function passphraseMatches(given: string | undefined, cur: PassphraseRecord): boolean {
  const want = Buffer.from(cur.hash, 'hex');
  return (
    given !== undefined &&
    want.length === KEYLEN &&
    timingSafeEqual(scryptSync(given, cur.salt, KEYLEN), want)
  );
}

/** Whether decisions ask for a passphrase (an inconsistent record asks, and then refuses). */
export async function passphraseRequired(store: Store): Promise<boolean> {
  try {
    return (await currentPassphrase(store)) !== null;
  } catch {
    return true;
  }
}

export async function checkPassphrase(store: Store, given: string | undefined): Promise<void> {
  const cur = await currentPassphrase(store);
  if (!cur) return;
  if (!passphraseMatches(given, cur)) {
    throw new MnemeError('refused', 'the review passphrase is wrong', {
      hint: 'decisions need the passphrase set with `mneme review --set-passphrase`',
    });
  }
}
