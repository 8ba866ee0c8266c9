// Content hashes and canonical JSON: the journal chain and the idempotency check depend on a
// byte-stable serialisation, so keys are sorted and undefined values dropped.
import { createHash } from 'node:crypto';

export const sha256 = (data: string | Uint8Array): string =>
  createHash('sha256').update(data).digest('hex');

/** JSON with every object's keys sorted; undefined members dropped (the text that is hashed). */
export function canonicalJson(value: unknown): string {
  const direct = writeSorted(value);
  // Only a top-level value JSON cannot write (undefined, a function) has no direct text.
  return direct ?? JSON.stringify(sortKeys(value));
}

const INDEX_KEY = /^(?:0|[1-9][0-9]*)$/;
const isIndexKey = (k: string) => INDEX_KEY.test(k) && Number(k) < 2 ** 32 - 1;

/**
 * JSON.stringify(sortKeys(value)), written in one pass without the sorted copy (a write hashes
 * its request and its journal entry). Kept to the same text: members in sorted order except
 * that integer-like keys come first in numeric order (as JSON.stringify orders the copy's own
 * keys), undefined members dropped, what JSON cannot write as null in arrays. A member named
 * toJSON would change what JSON.stringify writes, so such an object takes the copy.
 */
function writeSorted(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += writeSorted(value[i]) ?? 'null';
    }
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  let keys = Object.keys(obj).sort();
  if (keys.includes('toJSON')) return JSON.stringify(sortKeys(value));
  if (keys.some(isIndexKey))
    keys = [
      ...keys.filter(isIndexKey).sort((a, b) => Number(a) - Number(b)),
      ...keys.filter((k) => !isIndexKey(k)),
    ];
  let out = '{';
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    const text = writeSorted(v);
    if (text === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(k)}:${text}`;
    first = false;
  }
  return `${out}}`;
}

/** The sorted copy (what canonicalJson's text is defined by). */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v === undefined) continue;
      // An own `__proto__` member (JSON.parse makes one) would set the copy's prototype instead.
      if (k === '__proto__')
        Object.defineProperty(out, k, {
          value: sortKeys(v),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else out[k] = sortKeys(v);
    }
    return out;
  }
  return value;
}
