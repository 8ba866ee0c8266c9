// A fast writer for revision front matter: the very text the YAML library gives for it
// (stringify with lineWidth 0), built by hand, since a write serialises every revision it hashes
// and stores and the library's document model is most of a write's CPU. It emits only what it is
// sure of — block maps and lists two spaces deep, integers, booleans, null, `[]`/`{}`, and strings
// the library writes plain; any other string is rendered by the library (`quote`) in the same
// place, and a shape it does not know (a multi-line value, a nested list) returns undefined so the
// caller serialises the whole front matter with the library. test/front-matter-write.test.ts
// checks it against the library, byte for byte.

/** Where a string sits: a top-level value, a nested map's value, a list item, a list map's value. */
export type Place = 'top' | 'map' | 'item' | 'item-map';

/** The library's rendering of one string at a place (one line), or undefined when it is not. */
export type Quote = (s: string, place: Place) => string | undefined;

// The core schema's tests for scalars that would read as something other than a string (the
// library quotes those): null, booleans, octal, decimal and hex integers, NaN/infinity, floats.
const NOT_STRING = [
  /^(?:~|[Nn]ull|NULL)?$/,
  /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/,
  /^0o[0-7]+$/,
  /^[-+]?[0-9]+$/,
  /^0x[0-9a-fA-F]+$/,
  /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
];
// What a plain scalar may not start with, contain or end with (the library's own rule), a
// document marker, and — to stay well inside what is sure — anything but printable characters
// of the Basic Multilingual Plane without the byte-order mark and line separators.
const INDICATOR =
  /^[\n\t ,[\]{}#&*!|>'"%@`]|^[?-]$|^[?-][ \t]|[\n:][ \t]|[ \t]\n|[\n\t ]#|[\n\t :]$/;
const MARKER = /^(?:%|---|\.\.\.)/;
const PRINTABLE = /^[\x20-\x7e\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffc]*$/;

/** Whether the library writes `s` as a plain scalar, unchanged (decided conservatively). */
export function isPlain(s: string): boolean {
  return (
    PRINTABLE.test(s) &&
    !INDICATOR.test(s) &&
    !MARKER.test(s) &&
    !NOT_STRING.some((re) => re.test(s))
  );
}

const BAIL = Symbol('bail');
type Out = string | typeof BAIL;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

function scalar(v: unknown, place: Place, quote: Quote): Out {
  if (typeof v === 'string') return isPlain(v) ? v : (quote(v, place) ?? BAIL);
  if (v === null) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number' && Number.isSafeInteger(v) && !Object.is(v, -0)) return String(v);
  return BAIL;
}

/** `key: value` lines of a map of scalars, each line prefixed; BAIL on any other shape. */
function mapLines(
  m: Record<string, unknown>,
  first: string,
  rest: string,
  place: Place,
  quote: Quote,
): Out {
  let out = '';
  let i = 0;
  for (const [k, v] of Object.entries(m)) {
    if (v === undefined || !isPlain(k) || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) return BAIL;
    const s = scalar(v, place, quote);
    if (s === BAIL) return BAIL;
    out += `${i++ === 0 ? first : rest}${k}: ${s}\n`;
  }
  return out;
}

function value(v: unknown, quote: Quote): Out {
  if (Array.isArray(v)) {
    if (v.length === 0) return ' []\n';
    let out = '\n';
    for (const item of v) {
      if (isRecord(item)) {
        if (Object.keys(item).length === 0) return BAIL;
        const lines = mapLines(item, '  - ', '    ', 'item-map', quote);
        if (lines === BAIL) return BAIL;
        out += lines;
      } else {
        if (Array.isArray(item)) return BAIL;
        const s = scalar(item, 'item', quote);
        if (s === BAIL) return BAIL;
        out += `  - ${s}\n`;
      }
    }
    return out;
  }
  if (isRecord(v)) {
    if (Object.keys(v).length === 0) return ' {}\n';
    const lines = mapLines(v, '  ', '  ', 'map', quote);
    return lines === BAIL ? BAIL : `\n${lines}`;
  }
  const s = scalar(v, 'top', quote);
  return s === BAIL ? BAIL : ` ${s}\n`;
}

/** The front matter's YAML as the library writes it, or undefined when not sure. */
export function writeCanonicalFrontMatter(
  front: Record<string, unknown>,
  quote: Quote,
): string | undefined {
  let out = '';
  for (const [k, v] of Object.entries(front)) {
    if (v === undefined) return undefined;
    const s = value(v, quote);
    if (s === BAIL) return undefined;
    out += `${k}:${s}`;
  }
  return out;
}
