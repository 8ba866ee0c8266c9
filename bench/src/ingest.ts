// Turning benchmark text into remember ops for the one write path. Session ids are kept out of
// the indexed text (an id like `answer_280352e9` would otherwise match the word "answer"): each
// unit gets an opaque key in its `subject` field, and the harness maps keys back to ids.
import crypto from 'node:crypto';
import { LIMITS } from '../../src/core/limits.js';
import type { Actor } from '../../src/core/types.js';
import type { Engine } from '../../src/engine/engine.js';
import { oneLine, splitBytes } from './harness.js';

export interface Unit {
  /** The benchmark's own id for what is scored (a session id, a dia_id, a memory name). */
  key: string;
  type: 'event' | 'fact';
  /** One line, at most 240 characters. */
  abstract: string;
  body: string;
  validFrom?: string;
}

export const opaqueKey = (key: string) =>
  `bk${crypto.createHash('sha256').update(key).digest('hex').slice(0, 12)}`;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffd]/g;

/** Strips characters the write path refuses (control characters, U+FFFD); counts the changes. */
export function sanitize(text: string, counter: { sanitized: number }): string {
  const clean = text.replace(CONTROL, ' ');
  if (clean !== text) counter.sanitized++;
  return clean;
}

export interface IngestStats {
  memories: number;
  passages_split: number;
  sanitized: number;
  quarantined: number;
  redacted: number;
}

export const newStats = (): IngestStats => ({
  memories: 0,
  passages_split: 0,
  sanitized: 0,
  quarantined: 0,
  redacted: 0,
});

/** Body budget per memory, leaving room under the 64 KiB limit. */
export const MAX_PASSAGE_BYTES = LIMITS.bodyBytes - 1024;

/**
 * Writes one unit as one memory, or as several passage memories with the same key when the body
 * is over passageBytes. Returns memory id → unit key for every memory written.
 */
export async function ingestUnit(
  engine: Engine,
  actor: Actor,
  unit: Unit,
  stats: IngestStats,
  passageBytes = MAX_PASSAGE_BYTES,
): Promise<Map<string, string>> {
  const body = sanitize(unit.body, stats);
  const passages = splitBytes(body, Math.min(passageBytes, MAX_PASSAGE_BYTES));
  if (passages.length > 1) stats.passages_split++;
  const abstractBase = sanitize(unit.abstract, stats);
  // A unit whose whole text fits in the abstract gets no body (its words would count twice).
  const whole = passages.length === 1 && oneLine(abstractBase) === oneLine(body);
  const ops = passages.map((p, i) => ({
    op: 'remember' as const,
    type: unit.type,
    abstract:
      oneLine(
        passages.length === 1 ? abstractBase || p : i === 0 ? abstractBase || p : p,
        LIMITS.abstractChars,
      ) || '(empty)',
    body: whole ? '' : p,
    fields: {
      subject: passages.length === 1 ? opaqueKey(unit.key) : `${opaqueKey(unit.key)} p${i}`,
    },
    ...(unit.validFrom ? { valid_from: unit.validFrom } : {}),
  }));
  const out = new Map<string, string>();
  const results = await engine.apply(ops, actor);
  for (const r of results) {
    out.set(r.id, unit.key);
    stats.memories++;
    if (r.quarantined) stats.quarantined++;
    if (r.redacted) stats.redacted++;
  }
  return out;
}
