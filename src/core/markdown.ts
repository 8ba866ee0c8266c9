// A revision's file: YAML front matter between `---` lines, then the body verbatim. Values are
// serialised by the yaml library (never by string concatenation), so no field value can inject
// front-matter keys or close the block; parsing validates every field. Files in the exact form
// this module writes are read by a fast hand reader (front-matter.ts), anything else by the library.
//
// The yaml library and zod are loaded on first use, not at import: a process that only reads the
// index (a hook, `mneme recall`) never parses or writes a revision file and should not pay for
// them at start. Both are loaded synchronously (these functions are synchronous) through
// require; yaml is a CommonJS package, so this is the very instance `import` would give.
import { createRequire } from 'node:module';
import type { z as Zod } from 'zod';
import { MnemeError } from './errors.js';
import { parseCanonicalFrontMatter } from './front-matter.js';
import { writeCanonicalFrontMatter, type Place } from './front-matter-write.js';
import { FRONT_KEYS } from './revision.js';
import { ACTOR_KINDS, TRUST_LEVELS, type Revision } from './types.js';

export { FRONT_KEYS };

const require = createRequire(import.meta.url);
let yamlLib: typeof import('yaml') | undefined;
const yaml = () => (yamlLib ??= require('yaml') as typeof import('yaml'));

/**
 * The front matter's schema, built with the given zod (ops.ts builds the import operation's
 * copy with its own zod, so one schema never mixes two zod instances).
 */
export function buildRevisionSchema(z: typeof Zod) {
  const iso = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  return z
    .object({
      id: z.string().regex(/^mem_[0-9A-HJKMNP-TV-Z]{26}$/),
      rev: z.number().int().positive(),
      op: z.enum([
        'remember',
        'supersede',
        'correct',
        'retract',
        'confirm',
        'revalidate',
        'external_edit',
        'import',
        'link',
        'merge',
        'quarantine',
      ]),
      type: z.string().regex(/^[a-z][a-z0-9_-]{0,39}$/),
      scope: z.string().regex(/^(global|[a-z0-9][a-z0-9-]{0,60}-[0-9a-f]{8})$/),
      slug: z.string().regex(/^[a-z0-9](?:[a-z0-9._-]{0,118}[a-z0-9])?$/),
      abstract: z.string(),
      status: z.enum(['active', 'retracted', 'merged', 'purged']),
      rejected: z.boolean(),
      trust: z.enum(TRUST_LEVELS),
      review: z.enum(['none', 'pending']),
      quarantine: z.string().nullable(),
      valid_from: iso,
      valid_to: iso.nullable(),
      recorded_at: iso,
      actor: z
        .object({
          kind: z.enum(ACTOR_KINDS),
          host: z.string().optional(),
          session: z.string().optional(),
          surface: z.string().optional(),
        })
        .strict(),
      fields: z.record(z.string()),
      tags: z.array(z.string()),
      links: z.array(
        z
          .object({
            rel: z.enum(['supersedes', 'derived_from', 'contradicts', 'relates_to']),
            target: z.string(),
          })
          .strict(),
      ),
      provenance: z.array(z.string()),
      source: z
        .object({
          path: z.string(),
          sha256: z.string(),
          symbol: z.string().optional(),
          commit: z.string().optional(),
        })
        .strict()
        .nullable(),
      applies_to: z.array(z.string()),
      reason: z.string().nullable(),
      artifact: z
        .object({
          sha256: z.string().regex(/^[0-9a-f]{64}$/),
          size: z.number().int().nonnegative(),
          name: z.string(),
          media_type: z.string(),
        })
        .strict()
        .optional(),
    })
    .strict();
}

let parserSchema: ReturnType<typeof buildRevisionSchema> | undefined;
const revisionSchema = () =>
  (parserSchema ??= buildRevisionSchema((require('zod') as typeof import('zod')).z));

const YAML_OUT = { lineWidth: 0, minContentWidth: 0 } as const;

// One string the fast writer is not sure of, rendered by the library in the place it sits (the
// same shapes as the front matter's own), one line or undefined.
const QUOTE_SHAPE: Record<Place, [(s: string) => unknown, string]> = {
  top: [(s) => ({ k: s }), 'k: '],
  map: [(s) => ({ k: { k: s } }), 'k:\n  k: '],
  item: [(s) => ({ k: [s] }), 'k:\n  - '],
  'item-map': [(s) => ({ k: [{ k: s }] }), 'k:\n  - k: '],
};

function quoteScalar(s: string, place: Place): string | undefined {
  const [shape, prefix] = QUOTE_SHAPE[place];
  const text = yaml().stringify(shape(s), YAML_OUT);
  if (!text.startsWith(prefix) || !text.endsWith('\n')) return undefined;
  const out = text.slice(prefix.length, -1);
  return out.includes('\n') ? undefined : out;
}

// A write serializes the same revision several times (its hash, its history file, its current
// file); YAML output is costly next to a JSON key, so the last few results are kept.
const recentText = new Map<string, string>();
const RECENT_MAX = 32;

export function serializeRevision(r: Revision): string {
  const front: Record<string, unknown> = {};
  // An absent key (artifact, when none) is left out, as the library leaves out undefined.
  for (const k of FRONT_KEYS) if (r[k] !== undefined) front[k] = r[k];
  const key = `${JSON.stringify(front)}\n${r.body}`;
  const known = recentText.get(key);
  if (known !== undefined) return known;
  const fm = writeCanonicalFrontMatter(front, quoteScalar) ?? yaml().stringify(front, YAML_OUT);
  const text = `---\n${fm}---\n${r.body}`;
  if (recentText.size >= RECENT_MAX) recentText.clear();
  recentText.set(key, text);
  return text;
}

export function parseRevision(text: string, where = 'memory file'): Revision {
  if (!text.startsWith('---\n')) {
    throw new MnemeError('corrupt', `${where}: does not start with a "---" front-matter line`, {
      hint: 'restore the file from history/ or run `mneme fsck`',
    });
  }
  const end = text.indexOf('\n---\n', 3);
  if (end < 0) {
    throw new MnemeError('corrupt', `${where}: the front matter is not closed by a "---" line`, {
      hint: 'restore the file from history/ or run `mneme fsck`',
    });
  }
  const yaml = text.slice(4, end + 1);
  let data: unknown = parseCanonicalFrontMatter(yaml);
  if (data === undefined) data = parseYaml(yaml, where);
  const result = revisionSchema().safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new MnemeError(
      'corrupt',
      `${where}: front matter field "${issue?.path.join('.') ?? '?'}" is invalid (${issue?.message ?? 'unknown'})`,
      { hint: 'fix the field by hand or restore the file from history/' },
    );
  }
  return { ...(result.data as Omit<Revision, 'body'>), body: text.slice(end + 5) } as Revision;
}

/** Front matter outside the canonical subset (a hand edit, say): the YAML library reads it. */
function parseYaml(text: string, where: string): unknown {
  try {
    return yaml().parse(text, {
      schema: 'core',
      uniqueKeys: true,
      maxAliasCount: 0,
      logLevel: 'error', // a hand-edited file's oddities are reported as errors, not printed
    });
  } catch (e) {
    throw new MnemeError(
      'corrupt',
      `${where}: invalid YAML front matter (${(e as Error).message.split('\n')[0]})`,
      {
        hint: 'fix the YAML by hand or restore the file from history/',
      },
    );
  }
}
