// Timestamps are stored as full ISO-8601 UTC strings (YYYY-MM-DDTHH:MM:SS.sssZ) so that string
// comparison is time comparison in every index and file. Parsing accepts dates and offsets.
import { invalid } from './errors.js';

export type Clock = () => Date;

export const FAR_FUTURE = '9999-12-31T23:59:59.999Z';

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):?(\d{2}))?)?$/;

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

const daysIn = (year: number, month: number): number =>
  month === 2
    ? (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
      ? 29
      : 28
    : [4, 6, 9, 11].includes(month)
      ? 30
      : 31;

/**
 * The one date parser of every surface (CLI flags, MCP and HTTP fields, the engine's ops):
 * strict. A date that does not exist (2026-02-30, 2026-04-31, 2026-13-01, 24:00, 12:60) is
 * refused naming `what` and the input, never rolled over into another day (Date does that).
 */
export function toIso(input: string, what = 'time'): string {
  const s = input.trim();
  const m = ISO.exec(s);
  if (!m) {
    throw invalid(
      `${what} "${input}" is not an ISO-8601 date or time`,
      'use a form like 2026-05-01 or 2026-05-01T12:00:00Z',
    );
  }
  const [, y, mo, d, h, mi, sec, , oh, om] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const impossible =
    month < 1 || month > 12
      ? `there is no month ${mo}`
      : day < 1 || day > daysIn(year, month)
        ? `${MONTHS[month - 1]} ${y} has ${daysIn(year, month)} days`
        : h !== undefined && Number(h) > 23
          ? `there is no hour ${h}`
          : mi !== undefined && Number(mi) > 59
            ? `there is no minute ${mi}`
            : sec !== undefined && Number(sec) > 59
              ? `there is no second ${sec}`
              : oh !== undefined && (Number(oh) > 23 || Number(om) > 59)
                ? `there is no offset ${m[7]}`
                : null;
  if (impossible)
    throw invalid(`${what} "${input}" is not a real date: ${impossible}`, 'check the date');
  const date = new Date(m[4] === undefined ? `${s}T00:00:00Z` : s);
  if (Number.isNaN(date.getTime())) throw invalid(`${what} "${input}" is not a real date`);
  return date.toISOString();
}

export const isoNow = (clock: Clock): string => clock().toISOString();

/**
 * Orders two stored timestamps (canonical ISO-8601 UTC, one fixed width, or '' for none): by
 * code unit, which for that format is time order. Not localeCompare: its first call loads the
 * ICU collator, a cost a hook's short process pays for no difference here.
 */
export const compareIso = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
