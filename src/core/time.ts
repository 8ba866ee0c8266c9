// Timestamps are stored as full ISO-8601 UTC strings (YYYY-MM-DDTHH:MM:SS.sssZ) so that string
// comparison is time comparison in every index and file. Parsing accepts dates and offsets.
import { invalid } from './errors.js';

export type Clock = () => Date;

export const FAR_FUTURE = '9999-12-31T23:59:59.999Z';

export function toIso(input: string, what = 'time'): string {
  const s = input.trim();
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(s)) {
    throw invalid(
      `${what} "${input}" is not an ISO-8601 date or time`,
      'use a form like 2026-05-01 or 2026-05-01T12:00:00Z',
    );
  }
  const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(s) ? `${s}T00:00:00Z` : s);
  if (Number.isNaN(d.getTime())) throw invalid(`${what} "${input}" is not a real date`);
  return d.toISOString();
}

export const isoNow = (clock: Clock): string => clock().toISOString();

/**
 * Orders two stored timestamps (canonical ISO-8601 UTC, one fixed width, or '' for none): by
 * code unit, which for that format is time order. Not localeCompare: its first call loads the
 * ICU collator, a cost a hook's short process pays for no difference here.
 */
export const compareIso = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
