// The pure half of sleep's inferred steps: which memories look like near-duplicates, which say
// different things about one subject, which hold several facts, and the drafted text a person
// is shown. Nothing here decides; sleep turns each finding into a proposal for review.
import { normalizeValue } from './normalize.js';
import { valueText } from './revision.js';
import type { RevisionView } from './types.js';

/** The subject a memory is about: its `subject` field, else the abstract's lead before a verb. */
export function subjectOf(v: Pick<RevisionView, 'abstract' | 'fields'>): string | null {
  const field = v.fields.subject;
  if (field && field.trim() !== '') return normalizeValue(field);
  const m = /^(.{3,80}?)\s+(?:is|are|uses|use|runs|goes to|go to|lives in|=)\s+\S/i.exec(
    v.abstract,
  );
  return m ? normalizeValue(m[1]!) : null;
}

export const normalizedValue = (v: Pick<RevisionView, 'abstract' | 'body'>) =>
  normalizeValue(valueText(v));

/** A merged text for two near-duplicates: the fuller abstract, and every distinct body line. */
export function draftMerge(
  keep: Pick<RevisionView, 'abstract' | 'body'>,
  fold: Pick<RevisionView, 'abstract' | 'body'>,
): { abstract: string; body: string } {
  const abstract = fold.abstract.length > keep.abstract.length ? fold.abstract : keep.abstract;
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const line of `${keep.body}\n${fold.body}`.split('\n')) {
    const k = normalizeValue(line);
    if (k === '' || seen.has(k)) continue;
    seen.add(k);
    lines.push(line);
  }
  return { abstract, body: lines.join('\n') };
}

/**
 * The separate facts a memory body holds, when it looks like several: at least `minParts`
 * bullets or sentences whose leading subjects differ. Returns [] when it reads as one fact.
 */
export function splitParts(body: string, minParts = 3): string[] {
  const bullets = body
    .split('\n')
    .map((l) => /^\s*(?:[-*+]|\d+[.)])\s+(.+)$/.exec(l)?.[1]?.trim())
    .filter((l): l is string => l !== undefined && l.length >= 8);
  const parts =
    bullets.length >= minParts
      ? bullets
      : body
          .replace(/\s+/g, ' ')
          .split(/(?<=[.!?])\s+(?=[A-Z0-9])/)
          .map((s) => s.trim())
          .filter((s) => s.length >= 12);
  if (parts.length < minParts) return [];
  const leads = new Set(parts.map((p) => normalizeValue(p).split(' ').slice(0, 2).join(' ')));
  return leads.size >= minParts ? parts.slice(0, 12) : [];
}
