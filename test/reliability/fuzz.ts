// Property-based fuzzing (fast-check) of the parsers that meet untrusted text: the front-matter
// parser and serialiser, the tombstone normaliser, the query → FTS5 expression path (run against
// the real SQLite FTS5 table), and the bundle importer. Each property returns its run count.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { MnemeError } from '../../src/core/errors.js';
import { parseRevision, serializeRevision } from '../../src/core/markdown.js';
import { normalizeValue, tombstoneKey } from '../../src/core/normalize.js';
import { SchemaRegistry } from '../../src/core/schema.js';
import { ftsMatchExpression, queryTerms } from '../../src/core/text.js';
import type { Revision } from '../../src/core/types.js';
import { toRevision } from '../../src/core/revision.js';
import { Engine } from '../../src/engine/engine.js';
import { FileStore } from '../../src/store/files/file-store.js';

export interface FuzzReport {
  properties: Record<string, number>;
  iterations: number;
  problems: string[];
}

const BINDING = { project: 'fuzz-0000000f', identity: 'fuzz' };
const HUMAN = { kind: 'human' as const, surface: 'fuzz' };

/** Text that looks like YAML front matter more often than random strings do. */
const yamlish = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc
    .array(
      fc.oneof(
        fc.constantFrom(
          '---\n',
          '\n---\n',
          'id: ',
          'rev: ',
          'trust: confirmed\n',
          ': ',
          '- ',
          '[',
          ']',
          '{',
          '}',
          '&a ',
          '*a ',
          '!!binary ',
          '"',
          "'",
          '\n',
          '  ',
          '#',
          '|',
          '>',
          'null',
          '~',
          '\u0000',
          '\ufeff',
        ),
        fc.string({ maxLength: 12 }),
      ),
      { maxLength: 40 },
    )
    .map((parts) => parts.join('')),
);

const prop = async (
  report: FuzzReport,
  name: string,
  runs: number,
  property: fc.IAsyncProperty<never> | fc.IProperty<never>,
) => {
  try {
    await fc.assert(property as fc.IAsyncProperty<never>, { numRuns: runs, seed: 42 });
  } catch (e) {
    report.problems.push(`${name}: ${(e as Error).message.split('\n').slice(0, 6).join(' | ')}`);
  }
  report.properties[name] = runs;
  report.iterations += runs;
};

export async function runFuzz(runs: number, workDir: string): Promise<FuzzReport> {
  const report: FuzzReport = { properties: {}, iterations: 0, problems: [] };
  const sandbox = path.join(workDir, 'fuzz-sandbox');
  const home = path.join(sandbox, 'store');
  fs.mkdirSync(home, { recursive: true });
  const store = await FileStore.open(home, { durable: false });
  const engine = new Engine({
    store,
    clock: () => new Date('2026-01-01T00:00:00Z'),
    registry: new SchemaRegistry(),
    binding: BINDING,
    surface: 'human',
  });
  try {
    const [seed] = await engine.apply(
      [{ op: 'remember', type: 'fact', abstract: 'fuzz seed memory about queries', body: 'seed' }],
      HUMAN,
    );
    const base: Revision = toRevision((await store.getLineage(seed!.id))!.at(-1)!);

    // 1. parseRevision on arbitrary text throws nothing but MnemeError.
    await prop(
      report,
      'parseRevision: arbitrary text → Revision or MnemeError',
      runs,
      fc.property(yamlish, (text) => {
        for (const t of [text, `---\n${text}\n---\nbody`]) {
          try {
            parseRevision(t);
          } catch (e) {
            if (!(e instanceof MnemeError)) throw e;
          }
        }
      }) as never,
    );

    // 2. serialise → parse is the identity for any one-line abstract, body, tags and fields.
    const line = fc
      .string({ unit: 'grapheme', maxLength: 80 })
      // eslint-disable-next-line no-control-regex
      .map((s) => s.replace(/[\u0000-\u001f\u007f]/g, ' '));
    await prop(
      report,
      'serializeRevision → parseRevision round-trips',
      runs,
      fc.property(
        line,
        fc.string({ unit: 'grapheme', maxLength: 400 }),
        fc.array(line, { maxLength: 4 }),
        line,
        (abstract, body, tags, subject) => {
          const r: Revision = { ...base, abstract, body, tags, fields: { subject } };
          const back = parseRevision(serializeRevision(r));
          const same =
            back.abstract === abstract &&
            back.body === body &&
            JSON.stringify(back.tags) === JSON.stringify(tags) &&
            back.fields.subject === subject &&
            serializeRevision(back) === serializeRevision(r);
          if (!same) throw new Error(`round trip changed ${JSON.stringify(r).slice(0, 200)}`);
        },
      ) as never,
    );

    // 3. The tombstone normaliser: total, idempotent, blind to invisible characters and case.
    await prop(
      report,
      'normalizeValue: idempotent and never throws',
      runs,
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
        const n = normalizeValue(s);
        if (normalizeValue(n) !== n) throw new Error(`not idempotent on ${JSON.stringify(s)}`);
      }) as never,
    );
    await prop(
      report,
      'tombstoneKey: same key under zero-width insertion and case',
      runs,
      fc.property(
        fc.string({
          unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789 .,'),
          minLength: 1,
          maxLength: 60,
        }),
        (s) => {
          const k = tombstoneKey('global', s);
          if (tombstoneKey('global', s.split('').join('\u200b')) !== k)
            throw new Error('zero-width changed the key');
          if (tombstoneKey('global', s.toUpperCase()) !== k)
            throw new Error('case changed the key');
        },
      ) as never,
    );

    // 4. Arbitrary query text never makes an FTS5 syntax error: the expression runs against the
    //    real index table (through recall, which also adds proximity groups).
    await prop(
      report,
      'queryTerms → ftsMatchExpression: valid FTS5 for any text',
      runs,
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 120 }),
          fc
            .array(
              fc.constantFrom(
                '"',
                '*',
                'NEAR(',
                ')',
                'AND',
                'OR',
                'NOT',
                '^',
                ':',
                '-',
                '+',
                'abstract:',
                '{',
                '}',
                '漢字',
                'é',
                ' ',
              ),
              { maxLength: 20 },
            )
            .map((a) => a.join(' ')),
        ),
        async (q) => {
          const expr = ftsMatchExpression(queryTerms(q));
          if (expr !== null && !expr.startsWith('"') && !expr.startsWith('NEAR('))
            throw new Error(`unquoted expression ${expr}`);
          await engine.recall(q, { logUsage: false });
        },
      ) as never,
    );

    // 5. The bundle importer: arbitrary JSON and mutated bundles end in a report or MnemeError,
    //    and nothing is written outside the store.
    const exported = await engine.exportBundle();
    const goodRev = exported.memories[0]!.revisions[0]!;
    const hostile = fc.oneof(
      fc.constantFrom(
        '../../x',
        '/etc/passwd',
        'mem_../',
        '..',
        '',
        'global',
        BINDING.project,
        'C:\\x',
        'a\u0000b',
      ),
      fc.string({ maxLength: 20 }),
      fc.integer(),
      fc.constant(null),
    );
    const mutated = fc
      .record({
        key: fc.constantFrom(
          'id',
          'scope',
          'slug',
          'type',
          'rev',
          'abstract',
          'body',
          'status',
          'trust',
          'tags',
          'fields',
          'op',
          'links',
        ),
        value: hostile,
        memId: fc.oneof(fc.constant(goodRev.id), hostile),
      })
      .map(({ key, value, memId }) => ({
        ...exported,
        memories: [{ id: memId, revisions: [{ ...goodRev, [key]: value }] }],
      }));
    await prop(
      report,
      'importBundle: arbitrary JSON → report or MnemeError, nothing outside',
      runs,
      fc.asyncProperty(fc.oneof(fc.jsonValue(), mutated), async (value) => {
        try {
          await engine.importBundle(JSON.stringify(value), 'fuzz.json', { kind: 'import' });
        } catch (e) {
          if (!(e instanceof MnemeError)) throw e;
        }
        const outside = fs.readdirSync(sandbox).filter((n) => n !== 'store');
        if (outside.length) throw new Error(`wrote outside the store: ${outside.join(',')}`);
      }) as never,
    );
    const v = await engine.verifyJournal();
    if (!v.ok) report.problems.push(`journal broken after fuzzing: ${JSON.stringify(v.firstBad)}`);
  } finally {
    await engine.close();
  }
  return report;
}
