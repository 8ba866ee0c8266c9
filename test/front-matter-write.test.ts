// The fast front-matter writer must give the YAML library's text byte for byte (revision hashes
// in the journal are hashes of that text), and must write the revisions mneme makes by itself
// (otherwise it is dead code and every write pays the library again).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { isPlain, writeCanonicalFrontMatter, type Quote } from '../src/core/front-matter-write.js';
import { FRONT_KEYS, serializeRevision } from '../src/core/markdown.js';
import type { Revision } from '../src/core/types.js';

const base: Revision = {
  id: 'mem_01J00000000000000000000000',
  rev: 3,
  op: 'supersede',
  type: 'decision',
  scope: 'global',
  slug: 'db-choice',
  abstract: 'We use Postgres 15 for the team store',
  body: 'Because: ops already run it.\n---\nnot front matter',
  status: 'active',
  rejected: false,
  trust: 'claimed',
  review: 'none',
  quarantine: null,
  valid_from: '2026-11-30T00:44:03.035Z',
  valid_to: null,
  recorded_at: '2026-11-30T00:44:03.035Z',
  actor: { kind: 'agent', session: 's-1' },
  fields: { subject: 'database' },
  tags: ['project:peerbench', 'topic:t37'],
  links: [{ rel: 'relates_to', target: 'mem_01J00000000000000000000001' }],
  provenance: ['archive/sessions/claude/s-1.jsonl#3-9'],
  source: { path: 'src/db.ts', sha256: 'ab'.repeat(32) },
  applies_to: ['src/db/**'],
  reason: null,
} as Revision;

const frontOf = (r: Revision) => {
  const front: Record<string, unknown> = {};
  for (const k of FRONT_KEYS) if (r[k] !== undefined) front[k] = r[k];
  return front;
};
/** What the library alone writes for a revision. */
const libraryText = (r: Revision) =>
  `---\n${stringify(frontOf(r), { lineWidth: 0, minContentWidth: 0 })}---\n${r.body}`;
const noQuote = () => undefined;
/** The library's rendering of one string at a place, as markdown.ts asks for it. */
const libraryQuote: Quote = (s, place) => {
  const shape = {
    top: { k: s },
    map: { k: { k: s } },
    item: { k: [s] },
    'item-map': { k: [{ k: s }] },
  };
  const prefix = { top: 'k: ', map: 'k:\n  k: ', item: 'k:\n  - ', 'item-map': 'k:\n  - k: ' };
  const out = stringify(shape[place], { lineWidth: 0, minContentWidth: 0 }).slice(
    prefix[place].length,
    -1,
  );
  return out.includes('\n') ? undefined : out;
};

// Strings YAML reads as something other than a plain string, or cannot write plain.
const tricky = fc.constantFrom(
  '',
  ' ',
  'null',
  'NULL',
  '~',
  'true',
  'False',
  'yes',
  '0',
  '007',
  '-12',
  '+1',
  '1e3',
  '1.',
  '.5',
  '0x1F',
  '0o17',
  '.inf',
  '-.Inf',
  '.NaN',
  '-',
  '?',
  '- item',
  '? x',
  '-x',
  ':x',
  ': x',
  'a: b',
  'a:b',
  'a #b',
  'a#b',
  'ends:',
  '#comment',
  '---',
  '--- x',
  '...',
  'a\n---',
  "it's",
  '"quoted"',
  '[a, b]',
  '{a: 1}',
  ',x',
  '&anchor',
  '*alias',
  '!tag',
  '|',
  '>',
  '%x',
  '@x',
  '`x',
  ' lead',
  'trail ',
  'tab\there',
  'line\nbreak',
  'trail\n',
  'back\\slash',
  'bell\u0007',
  'del\u007f',
  'nel\u0085',
  'nbsp\u00a0x',
  'ls\u2028x',
  'bom\ufeff',
  'emoji 😀',
  'lone \ud800',
  'café',
  '中文 mixed',
  '2026-11-30T00:44:03.035Z',
  '12345678901234567890',
  'archive/sessions/claude/s-1.jsonl#3-9',
  'src/db/**',
);
const text = fc.oneof(
  tricky,
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({
    unit: fc.constantFrom('a', ' ', ':', '#', '-', '.', '1', "'", '"', '\n'),
    maxLength: 8,
  }),
);
const key = fc.oneof(
  fc.constantFrom('subject', 'null', 'true', 'y', 'n', 'on', '_x', 'a1', '0', 'a b', 'a:'),
  fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/),
);

const revision = fc
  .record({
    rev: fc.oneof(fc.integer({ min: 1, max: 1e6 }), fc.constant(2 ** 53)),
    abstract: text,
    tags: fc.array(text, { maxLength: 3 }),
    fields: fc.dictionary(key, text, { maxKeys: 3 }),
    quarantine: fc.option(text, { nil: null }),
    reason: fc.option(text, { nil: null }),
    session: fc.option(text, { nil: undefined }),
    links: fc.array(fc.record({ rel: fc.constant('relates_to'), target: text }), { maxLength: 2 }),
    source: fc.option(fc.record({ path: text, sha256: text }), { nil: null }),
    applies: fc.array(text, { maxLength: 2 }),
    rejected: fc.boolean(),
  })
  .map(
    (x): Revision =>
      ({
        ...base,
        rev: x.rev,
        abstract: x.abstract,
        tags: x.tags,
        fields: x.fields,
        quarantine: x.quarantine,
        reason: x.reason,
        rejected: x.rejected,
        actor: x.session === undefined ? { kind: 'human' } : { kind: 'agent', session: x.session },
        links: x.links,
        source: x.source,
        applies_to: x.applies,
      }) as Revision,
  );

describe('fast front-matter writer', () => {
  it('writes a plain revision by itself, exactly as the YAML library does', () => {
    const fast = writeCanonicalFrontMatter(frontOf(base), noQuote);
    assert.notEqual(fast, undefined, 'a plain revision must take the fast path');
    assert.equal(`---\n${fast}---\n${base.body}`, libraryText(base));
    assert.equal(serializeRevision(base), libraryText(base));
    // An artifact reference (written last, only when present) takes the fast path too.
    const withArtifact = {
      ...base,
      artifact: { sha256: 'cd'.repeat(32), size: 4096, name: 'run.log', media_type: 'text/plain' },
    } as Revision;
    assert.notEqual(writeCanonicalFrontMatter(frontOf(withArtifact), noQuote), undefined);
    assert.equal(serializeRevision(withArtifact), libraryText(withArtifact));
    assert.match(serializeRevision(withArtifact), /\nartifact:\n {2}sha256: c/);
  });

  it('never differs from the library, and writes many generated revisions itself', () => {
    let fastPath = 0;
    let runs = 0;
    fc.assert(
      fc.property(revision, (r) => {
        runs++;
        assert.equal(serializeRevision(r), libraryText(r));
        const fast = writeCanonicalFrontMatter(frontOf(r), libraryQuote);
        if (fast === undefined) return;
        fastPath++;
        assert.equal(`---\n${fast}---\n${r.body}`, libraryText(r));
      }),
      { numRuns: 3000 },
    );
    // Most misses are multi-line strings (block scalars), left to the library on purpose.
    assert.ok(fastPath > runs / 10, `the writer wrote only ${fastPath} of ${runs} revisions`);
  });

  it('calls a string plain only when the library writes it plain', () => {
    fc.assert(
      fc.property(fc.oneof(tricky, fc.string({ unit: 'binary', maxLength: 12 })), (s) => {
        if (!isPlain(s)) return;
        assert.equal(stringify({ k: s }, { lineWidth: 0 }), `k: ${s}\n`);
        assert.equal(stringify({ k: [s] }, { lineWidth: 0 }), `k:\n  - ${s}\n`);
      }),
      { numRuns: 3000 },
    );
    assert.equal(isPlain('We use Postgres 15'), true);
    assert.equal(isPlain('a: b'), false);
  });

  it('leaves a multi-line value to the library, which writes a block scalar', () => {
    const r = { ...base, reason: 'first line\nsecond line' } as Revision;
    assert.equal(writeCanonicalFrontMatter(frontOf(r), noQuote), undefined);
    assert.match(serializeRevision(r), /reason: \|-\n {2}first line\n {2}second line\n/);
    assert.equal(serializeRevision(r), libraryText(r));
  });
});
