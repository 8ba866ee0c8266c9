// The outbound filter: what a route serves is decided here, by who reads (the principal: the
// projects it may read) and the scopes the bytes belong to, and what is served is held again
// against the forget tombstones and purge keys of those scopes at the moment it is served — so a
// value forgotten or purged after it was cached (a knowledge chunk, a maintenance report) is not
// served, whenever the cache was filled. OUTBOUND_ROUTES at the end lists every route and the
// filter it goes through.
import { MnemeError } from '../core/errors.js';
import type { Tombstone } from '../core/normalize.js';
import { GLOBAL_SCOPE } from '../core/scope.js';
import { readableScopes, type EngineContext } from './context.js';
import { pathVerdict } from './knowledge-paths.js';
import { rejectedHere, scopeMatchers } from './rejected-here.js';

/** Who reads: the projects the principal may read ('*': every project, e.g. the local user). */
export interface Reader {
  projects: readonly string[] | '*';
}

/** The local user, or a token that lists no project: may read every project of the store. */
export const EVERY_PROJECT: Reader = { projects: '*' };

/** A scope this reader may be served: global, or one of its projects. */
export function mayReadScope(reader: Reader, scope: string): boolean {
  return scope === GLOBAL_SCOPE || reader.projects === '*' || reader.projects.includes(scope);
}

/**
 * Whether store-wide facts (the journal's length, the sequence number of a write among every
 * project's writes) may be shown: only to a reader of every project. A reader bound to projects
 * would learn how much the projects it may not read are writing.
 */
export const readsStoreWide = (reader: Reader): boolean => reader.projects === '*';

/** A write's result as a reader is shown it: without its store-wide sequence number unless it reads every project. */
export function writeResultFor<T extends { seq?: number | null }>(reader: Reader, r: T): T {
  if (readsStoreWide(reader) || r.seq === undefined) return r;
  const { seq: _seq, ...rest } = r;
  return rest as T;
}

/** The forget or purge tombstone a served text restates (as a value or a passage), or null. */
export type Withheld = (text: string) => Tombstone | null;

/**
 * The check a text served in `scopes` passes at serve time: the armed tombstones of every one of
 * those scopes (their own included: a cache is not memory, and what it holds was never gated),
 * matched the way the write gate matches (core/normalize.ts), the value form and the passage
 * form. A purged value is matched by its keyed hashes; with purges armed and no secret to match
 * them, nothing is served (the matcher refuses, as the write gate does).
 */
export async function withheldIn(ctx: EngineContext, scopes: readonly string[]): Promise<Withheld> {
  const matchers = await scopeMatchers(ctx, [...new Set(scopes)]);
  if (matchers.length === 0) return () => null;
  return (text) => {
    for (const [, m] of matchers) {
      const hit = m.value(text) ?? m.passage(text);
      if (hit) return hit;
    }
    return null;
  };
}

/** The scopes this engine's reader is served from, and those it acts for (its guards). */
export const servedScopes = (ctx: EngineContext): string[] => [
  ...readableScopes(ctx.binding),
  ...(ctx.binding.guards ?? []),
];

// ---------------------------------------------------------------------------------------------
// Maintenance reports. A report (`reports/sleep-*.md`, `reports/fsck-*.md`) opens with the scopes
// the run read; it is listed and served only to a reader of all of them, and each line is held
// against those scopes' tombstones when it is served. A report without the line (written before
// it existed, or by hand) counts as store-wide: the local user and every-project tokens only.
// ---------------------------------------------------------------------------------------------

const REPORT_HEAD = /^<!-- mneme-report scopes: ([A-Za-z0-9*._ -]{1,2000}) -->\r?\n/;

/** The first line of a report written by a run over these scopes. */
export function reportHead(scopes: readonly string[]): string {
  return `<!-- mneme-report scopes: ${[...scopes].sort().join(' ')} -->\n`;
}

/** The scopes a report's first line names, or '*' (store-wide) when it names none. */
export function reportScopes(text: string): string[] | '*' {
  const m = REPORT_HEAD.exec(text);
  if (!m) return '*';
  const scopes = m[1]!.split(' ').filter(Boolean);
  return scopes.length === 0 || scopes.includes('*') ? '*' : scopes;
}

/** Whether this reader may see a report (listed or opened) that opens with `head`. */
export function mayReadReport(reader: Reader, head: string): boolean {
  const scopes = reportScopes(head);
  if (scopes === '*') return readsStoreWide(reader);
  return scopes.every((s) => mayReadScope(reader, s));
}

/** What stands in a served report for a line that restates a forgotten or purged value. */
export const WITHHELD_LINE =
  '[withheld: this line restates a value forgotten or purged since the report was written]';

/**
 * A report as this reader is served it: refused as not found when the reader may not read every
 * scope it covers (the same answer as a name that does not exist: no oracle), and with every
 * line that restates a value forgotten or purged since the report was written replaced by
 * WITHHELD_LINE.
 */
export async function serveReport(
  ctx: EngineContext,
  reader: Reader,
  name: string,
  text: string,
): Promise<string> {
  if (!mayReadReport(reader, text))
    throw new MnemeError('not_found', `no report named ${name.slice(0, 120)}`, {
      hint: 'list the reports this caller may read with GET /api/reports',
    });
  const covered = reportScopes(text);
  const scopes =
    covered === '*'
      ? [GLOBAL_SCOPE, ...Object.keys((await ctx.store.status()).byScope)]
      : [...covered, GLOBAL_SCOPE];
  const withheld = await withheldIn(ctx, scopes);
  return text
    .split('\n')
    .map((line) => (line.trim() !== '' && withheld(line) ? WITHHELD_LINE : line))
    .join('\n');
}

// ---------------------------------------------------------------------------------------------
// Knowledge chunks: repository text cached by the last refresh. Served only when the document
// is still in the work tree (a file removed with `git rm` is gone before the next refresh) and
// still passes the refresh's path rules (a symlink retargeted since is judged again), its
// path screened (a control character or line break never reaches a reader as a line of its own),
// and neither its heading trail nor its text restates a value forgotten or purged in a scope
// the reader reads — whether the tombstone came before or after the refresh.
// ---------------------------------------------------------------------------------------------

/** A path as served: every control character (a line break included) shown escaped, as data. */
export function servedPath(p: string): string {
  // eslint-disable-next-line no-control-regex
  return p.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) =>
    c === '\n'
      ? '\\n'
      : c === '\r'
        ? '\\r'
        : c === '\t'
          ? '\\t'
          : `\\u{${c.codePointAt(0)!.toString(16)}}`,
  );
}

/** What a knowledge hit carries that the filter reads and rewrites. */
export interface ServedChunk {
  path: string;
  citation: string;
  heading: string;
  text: string;
}

/**
 * The knowledge hits a reader is served: those whose document is still there and still readable
 * by the refresh's rules (knowledge-paths.ts; when the project's files are at hand), whose path,
 * heading and text restate no withheld value, with their path and citation screened.
 */
export async function servedKnowledge<T extends ServedChunk>(
  ctx: EngineContext,
  hits: readonly T[],
): Promise<T[]> {
  if (hits.length === 0) return [];
  const withheld = await withheldIn(ctx, servedScopes(ctx));
  const files = ctx.files;
  const out: T[] = [];
  for (const h of hits) {
    if (files && pathVerdict(files, h.path) !== null) continue;
    if (withheld(h.path) || withheld(h.heading) || withheld(h.text)) continue;
    out.push({ ...h, path: servedPath(h.path), citation: servedPath(h.citation) });
  }
  return out;
}

/**
 * Every route that serves bytes, and the filter that decides what it serves. Memories (recall,
 * read, browse, injection) are served through the store's scope predicate over readableScopes
 * and rejectedHere, a memory's history, trace and journal entries by its scope; artifact pages,
 * knowledge chunks and reports are held again against tombstones and purge keys when served
 * (withheldIn); counters by whether the reader reads every project. A new route is added here
 * with the filter it goes through.
 */
export const OUTBOUND_ROUTES = {
  recall: rejectedHere,
  read: rejectedHere,
  artifact: withheldIn,
  history: readableScopes,
  trace: readableScopes,
  journal: readableScopes,
  knowledge: servedKnowledge,
  'prompt-knowledge': servedKnowledge,
  reports: mayReadReport,
  report: serveReport,
  metrics: readsStoreWide,
  'write-result': writeResultFor,
  'dashboard-reports': serveReport,
} as const;
