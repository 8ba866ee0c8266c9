// A fast reader for the front matter mneme itself writes. serializeRevision emits a small,
// regular subset of YAML (block maps and lists two spaces deep, one-line scalars, `[]`/`{}`);
// reading that subset by hand is many times faster than a general YAML parser, which is what
// makes rebuilding a large store quick. Anything outside the subset (a hand edit, a block scalar,
// a flow collection, an unusual number or escape) returns undefined, and the caller falls back
// to the YAML library: this reader decides only texts it is sure of, never differently.

type Value = unknown;

/** The parsed front matter, or undefined when the text is not in the canonical subset. */
export function parseCanonicalFrontMatter(yaml: string): Record<string, Value> | undefined {
  const lines = yaml.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const out: Record<string, Value> = {};
  let i = 0;
  while (i < lines.length) {
    const pair = keyValue(lines[i]!, 0);
    if (!pair || pair.key in out) return undefined;
    i++;
    if (pair.rest !== '') {
      const v = scalar(pair.rest);
      if (v === BAIL) return undefined;
      out[pair.key] = v;
      continue;
    }
    // A nested block: a list ("  - …") or a map ("  k: …"), or nothing (null).
    const block: string[] = [];
    while (i < lines.length && lines[i]!.startsWith('  ')) block.push(lines[i++]!);
    const v = block.length === 0 ? null : nested(block);
    if (v === BAIL) return undefined;
    out[pair.key] = v;
  }
  return out;
}

const BAIL = Symbol('bail');

/** `key: rest` at the given indent; keys are plain words. */
function keyValue(line: string, indent: number): { key: string; rest: string } | null {
  const m = /^([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?$/.exec(line.slice(indent));
  if (!m || (indent > 0 && line.slice(0, indent) !== ' '.repeat(indent))) return null;
  if (m[1] === '__proto__') return null;
  return { key: m[1]!, rest: m[2] ?? '' };
}

function nested(block: string[]): Value | typeof BAIL {
  if (block[0]!.startsWith('  - ') || block[0] === '  -') return list(block);
  const map: Record<string, Value> = {};
  for (const line of block) {
    const pair = keyValue(line, 2);
    if (!pair || pair.rest === '' || pair.key in map) return BAIL;
    const v = scalar(pair.rest);
    if (v === BAIL) return BAIL;
    map[pair.key] = v;
  }
  return map;
}

/** A list of scalars, or of one-level maps ("  - k: v" then "    k2: v2"). */
function list(block: string[]): Value[] | typeof BAIL {
  const items: Value[] = [];
  let current: Record<string, Value> | null = null;
  for (const line of block) {
    if (line.startsWith('  - ')) {
      const rest = line.slice(4);
      const pair = keyValue(rest, 0);
      if (pair && !isQuoted(rest)) {
        if (pair.rest === '') return BAIL;
        const v = scalar(pair.rest);
        if (v === BAIL) return BAIL;
        current = { [pair.key]: v };
        items.push(current);
      } else {
        const v = scalar(rest);
        if (v === BAIL) return BAIL;
        current = null;
        items.push(v);
      }
    } else {
      const pair = keyValue(line, 4);
      if (!current || !pair || pair.rest === '' || pair.key in current) return BAIL;
      const v = scalar(pair.rest);
      if (v === BAIL) return BAIL;
      current[pair.key] = v;
    }
  }
  return items;
}

const CORE_NON_STRING = [
  /^[-+]?[0-9]+$/,
  /^0x[0-9a-fA-F]+$/,
  /^0o[0-7]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/,
  /^[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)$/,
  /^(?:Null|NULL|True|TRUE|False|FALSE)$/,
];

const isQuoted = (s: string) => s.startsWith('"') || s.startsWith("'");

/** One-line scalar: quoted strings, null, booleans, plain integers, `[]`, `{}`, plain strings. */
function scalar(s: string): Value | typeof BAIL {
  if (s === '[]') return [];
  if (s === '{}') return {};
  const c = s[0];
  if (c === '"') return doubleQuoted(s);
  if (c === "'") {
    if (s.length < 2 || !s.endsWith("'")) return BAIL;
    const inner = s.slice(1, -1);
    if (/'(?!')/.test(inner.replace(/''/g, ''))) return BAIL;
    return inner.replace(/''/g, "'");
  }
  if (s === 'null' || s === '~') return null;
  if (s === 'true') return true;
  if (s === 'false') return false;
  if (/^-?(0|[1-9][0-9]{0,14})$/.test(s)) return Number(s);
  // What the core schema would read as something other than a string (other numbers, other
  // spellings of null and booleans), and what a plain scalar cannot start with or contain:
  // the library decides those.
  if (CORE_NON_STRING.some((re) => re.test(s))) return BAIL;
  if (/^[-?:,[\]{}#&*!|>'"%@`\s]/.test(s) || /\s$/.test(s)) return BAIL;
  if (s.includes(': ') || s.includes(' #') || s.endsWith(':') || s.includes('\t')) return BAIL;
  return s;
}

const ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  n: '\n',
  t: '\t',
  r: '\r',
  '0': '\0',
  b: '\b',
  f: '\f',
};

function doubleQuoted(s: string): string | typeof BAIL {
  if (s.length < 2 || !s.endsWith('"')) return BAIL;
  let out = '';
  for (let i = 1; i < s.length - 1; i++) {
    const ch = s[i]!;
    if (ch === '"') return BAIL;
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const e = s[++i];
    if (e === undefined || i >= s.length - 1) return BAIL;
    if (e in ESCAPES) out += ESCAPES[e];
    else if (e === 'x' || e === 'u' || e === 'U') {
      const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = s.slice(i + 1, i + 1 + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex) || i + len >= s.length - 1) return BAIL;
      const code = parseInt(hex, 16);
      if (code > 0x10ffff) return BAIL;
      out += String.fromCodePoint(code);
      i += len;
    } else return BAIL;
  }
  return out;
}
