// The optional review passphrase: when set, every review decision requires it, so approving is
// something an agent sharing the user's account does not know. Its scrypt hash lives in the
// journal (set with the human-only `set_passphrase` op), so deleting a file cannot disable it
// without breaking the journal chain.
import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';
import { MnemeError } from '../core/errors.js';
import type { Store } from '../store/port.js';

const KEYLEN = 32;

export function hashPassphrase(passphrase: string): { salt: string; hash: string } {
  const salt = randomBytes(16).toString('hex');
  return { salt, hash: scryptSync(passphrase, salt, KEYLEN).toString('hex') };
}

export async function currentPassphrase(
  store: Store,
): Promise<{ salt: string; hash: string } | null> {
  const [last] = await store.journal({ op: 'set_passphrase', reverse: true, limit: 1 });
  const d = last?.data as { salt?: string; hash?: string } | undefined;
  return d?.salt && d.hash ? { salt: d.salt, hash: d.hash } : null;
}

export async function passphraseRequired(store: Store): Promise<boolean> {
  return (await currentPassphrase(store)) !== null;
}

export async function checkPassphrase(store: Store, given: string | undefined): Promise<void> {
  const cur = await currentPassphrase(store);
  if (!cur) return;
  const ok =
    given !== undefined &&
    timingSafeEqual(scryptSync(given, cur.salt, KEYLEN), Buffer.from(cur.hash, 'hex'));
  if (!ok) {
    throw new MnemeError('refused', 'the review passphrase is wrong', {
      hint: 'decisions need the passphrase set with `mneme review --set-passphrase`',
    });
  }
}
