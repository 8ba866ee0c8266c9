// Tombstone keys: a rejected value is matched after normalisation (NFKC, case folding, invisible
// characters removed, look-alike letters mapped, punctuation and whitespace folded) and by a
// near-duplicate check. (Interim version; the full confusable table lands separately.)
import { sha256 } from './hash.js';
import type { Actor } from './types.js';

export interface Tombstone {
  key: string;
  scope: string;
  kind: 'value';
  value_norm: string;
  reason: string | null;
  actor: Actor;
  at: string;
  from_op: string;
  memory: string | null;
}

const INVISIBLE =
  /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]|\udb40[\udc00-\udc7f]/g;
const LOOKALIKE: Record<string, string> = {
  а: 'a',
  е: 'e',
  о: 'o',
  р: 'p',
  с: 'c',
  х: 'x',
  у: 'y',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  ο: 'o',
  α: 'a',
  ν: 'v',
  ρ: 'p',
};

export function normalizeValue(text: string): string {
  return text
    .normalize('NFKC')
    .replace(INVISIBLE, '')
    .toLowerCase()
    .replace(/[а-яёіјѕα-ω]/g, (c) => LOOKALIKE[c] ?? c)
    .replace(/[\p{P}\p{S}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export const tombstoneKey = (scope: string, text: string) =>
  sha256(`${scope}\u0000${normalizeValue(text)}`);

export function matchTombstone(
  tombstones: Tombstone[],
  scope: string,
  text: string,
): Tombstone | null {
  const key = tombstoneKey(scope, text);
  return tombstones.find((t) => t.scope === scope && t.key === key) ?? null;
}
