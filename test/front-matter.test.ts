// The fast front-matter reader must agree with the YAML library on every text it decides, and
// must decide the files mneme writes (otherwise it is dead code and rebuild is slow again).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parse } from 'yaml';
import { parseCanonicalFrontMatter } from '../src/core/front-matter.js';
import { parseRevision, serializeRevision } from '../src/core/markdown.js';
import type { Revision } from '../src/core/types.js';

const frontOf = (file: string) => file.slice(4, file.indexOf('\n---\n', 3) + 1);
const library = (yaml: string) => parse(yaml, { schema: 'core', uniqueKeys: true }) as unknown;

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

// Words and shapes that YAML reads as something other than a plain string, or cannot write plain.
const tricky = fc.constantFrom(
  'null',
  'Null',
  '~',
  'true',
  'False',
  '0',
  '007',
  '-12',
  '1e3',
  '.5',
  '0x1F',
  '0o17',
  '.inf',
  '-.NaN',
  '- item',
  ': x',
  'a: b',
  'a #b',
  'ends:',
  '#comment',
  "it's",
  '"quoted"',
  '[a, b]',
  '{a: 1}',
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
  'back\\slash',
  'bell\u0007',
  'emoji 😀',
  'café',
  '2026-11-30T00:44:03.035Z',
  '12345678901234567890',
);
const text = fc.oneof(
  tricky,
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
);

const revision = fc
  .record({
    abstract: text,
    tags: fc.array(text, { maxLength: 3 }),
    subject: text,
    quarantine: fc.option(text, { nil: null }),
    reason: fc.option(text, { nil: null }),
    session: text,
    target: text,
    path: text,
  })
  .map(
    (x): Revision =>
      ({
        ...base,
        abstract: x.abstract,
        tags: x.tags,
        fields: { subject: x.subject },
        quarantine: x.quarantine,
        reason: x.reason,
        actor: { kind: 'agent', session: x.session },
        links: [{ rel: 'relates_to', target: x.target }],
        source: { path: x.path, sha256: 'ab'.repeat(32) },
      }) as Revision,
  );

describe('canonical front matter', () => {
  it('reads the files mneme writes, exactly as the YAML library does', () => {
    const yaml = frontOf(serializeRevision(base));
    const fast = parseCanonicalFrontMatter(yaml);
    assert.notEqual(fast, undefined, 'a plain revision must take the fast path');
    assert.deepEqual(fast, library(yaml));
  });

  it('never disagrees with the library, and decides most generated files', () => {
    let decided = 0;
    let runs = 0;
    fc.assert(
      fc.property(revision, (r) => {
        runs++;
        const yaml = frontOf(serializeRevision(r));
        const fast = parseCanonicalFrontMatter(yaml);
        if (fast === undefined) return;
        decided++;
        assert.deepEqual(fast, library(yaml));
      }),
      { numRuns: 500 },
    );
    assert.ok(decided > runs / 4, `fast path decided only ${decided} of ${runs} files`);
  });

  it('leaves hand-edited YAML to the library, which still reads it', () => {
    const file = serializeRevision(base)
      .replace('tags:\n  - project:peerbench\n  - topic:t37\n', 'tags: [project:peerbench, x]\n')
      .replace('rev: 3\n', 'rev: 3 # edited by hand\n');
    assert.equal(parseCanonicalFrontMatter(frontOf(file)), undefined);
    const r = parseRevision(file);
    assert.deepEqual(r.tags, ['project:peerbench', 'x']);
    assert.equal(r.rev, 3);
  });

  it('refuses a duplicated key in either reader', () => {
    const file = serializeRevision(base).replace('rev: 3\n', 'rev: 3\nrev: 4\n');
    assert.equal(parseCanonicalFrontMatter(frontOf(file)), undefined);
    assert.throws(() => parseRevision(file), /invalid YAML front matter/);
  });
});
