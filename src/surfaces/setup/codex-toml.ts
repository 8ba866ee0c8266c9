// Codex's config.toml, edited as data: mneme owns the `[mcp_servers.mneme]` table by name (with
// any sub-table such as `[mcp_servers.mneme.env]`), whatever layout the file has. Codex rewrites
// this file itself (`codex mcp add` moves `env` into a sub-table, drops comments and puts other
// servers' tables where it likes), so nothing here depends on markers or line positions. The
// edit goes through toml-patch, which keeps the rest of the file (comments, order, spacing), and
// is checked by parsing the result back: every other value must be exactly as it was.
import { isDeepStrictEqual } from 'node:util';
import { parse, patch, stringify } from '@decimalturn/toml-patch';
import { MnemeError } from '../../core/errors.js';
import { SERVER_NAME } from './edits.js';

export interface CodexMcpEntry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

type Table = Record<string, unknown>;

/** The comment lines older versions of `mneme setup codex` put around their block. */
const LEGACY_MARKERS = new Set([
  '# >>> mneme (managed by `mneme setup codex`; edits here are replaced) >>>',
  '# <<< mneme <<<',
]);

const isTable = (v: unknown): v is Table =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** toml-patch's tables have no prototype; ours do. The values, compared, are plain data. */
const plainData = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(plainData)
    : isTable(v)
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plainData(x)]))
      : v;

function parseToml(file: string, text: string): Table {
  try {
    return plainData(parse(text)) as Table;
  } catch (e) {
    throw new MnemeError('invalid', `${file} is not valid TOML (${firstLine(e)})`, {
      hint: 'fix the file by hand (nothing was changed), then run the command again',
    });
  }
}

const firstLine = (e: unknown) => String((e as Error).message ?? e).split('\n')[0];

/** The `[mcp_servers.mneme]` entry as Codex will read it, or null when there is none. */
export function readCodexMcpEntry(file: string, text: string): CodexMcpEntry | null {
  const servers = parseToml(file, text).mcp_servers;
  const ours = isTable(servers) ? servers[SERVER_NAME] : undefined;
  if (!isTable(ours)) return null;
  const args = Array.isArray(ours.args) ? ours.args.filter((a) => typeof a === 'string') : [];
  return {
    command: typeof ours.command === 'string' ? ours.command : '',
    args,
    ...(isTable(ours.env) ? { env: ours.env as Record<string, string> } : {}),
  };
}

const withoutMarkers = (text: string) =>
  text
    .split('\n')
    .filter((line) => !LEGACY_MARKERS.has(line.trim()))
    .join('\n');

/** The file with mneme's entry set to `entry` (the same text when it already is). */
export function setCodexMcpEntry(file: string, text: string, entry: CodexMcpEntry): string {
  const base = withoutMarkers(text);
  const doc = parseToml(file, base);
  const servers = isTable(doc.mcp_servers) ? doc.mcp_servers : undefined;
  const want = plain(entry);
  if (servers && isDeepStrictEqual(servers[SERVER_NAME], want)) return base;
  const updated: Table = { ...doc, mcp_servers: { ...servers, [SERVER_NAME]: want } };
  // A new entry goes at the end as its own table (what a person would write); an existing one is
  // patched where it stands. Either way the result is parsed back and compared.
  const candidates = servers?.[SERVER_NAME] === undefined ? [appended(base, want)] : [];
  candidates.push(patch(base, updated));
  for (const out of candidates) if (holds(out, updated)) return out;
  throw unsafe(file);
}

/** The file without mneme's entry (and without `mcp_servers` if that leaves it empty). */
export function removeCodexMcpEntry(file: string, text: string): string {
  const base = withoutMarkers(text);
  const doc = parseToml(file, base);
  const servers = doc.mcp_servers;
  if (!isTable(servers) || !(SERVER_NAME in servers)) return base;
  const { [SERVER_NAME]: _ours, ...rest } = servers;
  const updated: Table = { ...doc, mcp_servers: rest };
  if (Object.keys(rest).length === 0) delete updated.mcp_servers;
  const out = patch(base, updated);
  if (!holds(out, updated)) throw unsafe(file);
  return out;
}

function plain(entry: CodexMcpEntry): Table {
  const t: Table = { command: entry.command, args: [...entry.args] };
  if (entry.env && Object.keys(entry.env).length > 0) t.env = { ...entry.env };
  return t;
}

/** The layout Codex itself writes: `args = ["a", "b"]`. */
const STYLE = { bracketSpacing: false };

function appended(text: string, entry: Table): string {
  const { env, ...main } = entry;
  let block = `[mcp_servers.${SERVER_NAME}]\n${stringify(main, STYLE).trimEnd()}\n`;
  if (isTable(env))
    block += `\n[mcp_servers.${SERVER_NAME}.env]\n${stringify(env, STYLE).trimEnd()}\n`;
  const head = text.trimEnd();
  return head === '' ? block : `${head}\n\n${block}`;
}

function holds(text: string, want: Table): boolean {
  try {
    return isDeepStrictEqual(plainData(parse(text)), want);
  } catch {
    return false;
  }
}

const unsafe = (file: string) =>
  new MnemeError('invalid', `cannot edit ${file} safely: the result would change other settings`, {
    hint: 'set [mcp_servers.mneme] by hand (`mneme setup codex --dry-run --json` shows the entry); nothing was changed',
  });
