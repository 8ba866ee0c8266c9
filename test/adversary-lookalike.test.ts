// Look-alike values that still got through (issue 14, item 5), driven through the real CLI: a
// value forgotten with `mneme forget` stays refused when it comes back with digits of another
// script, letters spaced out, words split or joined, digits for letters, or placed in the body
// or a field instead of the abstract — while a different value (another number, name, version,
// region, a negation) is stored and recallable. Every refusal is paired with accepted controls
// in the same fixture, and the check stays inside its scope.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FileStore } from '../src/store/files/file-store.js';
import { AGENT, HUMAN, PROJECT_A, cli, engineFor, gitRepo, testClock, tmpDir } from './helpers.js';

const VALUE = 'The staging database password rotates every 90 days';
const VERSION = 'Staging runs postgres v2.3';

const REFUSED_ABSTRACTS: [string, string][] = [
  ['Arabic-Indic digits', 'The staging database password rotates every ٩٠ days'],
  ['Devanagari digits', 'The staging database password rotates every ९० days'],
  ['Bengali digits', 'The staging database password rotates every ৯০ days'],
  ['Thai digits', 'The staging database password rotates every ๙๐ days'],
  ['fullwidth digits', 'The staging database password rotates every ９０ days'],
  ['letters spaced out', 'The staging database p a s s w o r d rotates every 90 days'],
  ['letters spaced out', 'The s t a g i n g database password rotates every 90 days'],
  ['dots and underscores', 'The s.t.a.g.i.n.g d_a_t_a_b_a_s_e password rotates every 90 days'],
  ['symbols as separators', 'The staging database p|a|s|s|w|o|r|d rotates every 90 days'],
  ['digits spaced out', 'The staging database password rotates every 9 0 days'],
  ['words split by hyphens', 'The stag-ing data-base password rotates every 90 days'],
  ['words split by a space', 'The staging data base password rotates every 90 days'],
  ['words joined', 'The stagingdatabase password rotates every 90 days'],
  ['joined and split', 'The Staging_Database pass.word rotates every 90days'],
  ['leetspeak', 'The stag1ng databa5e passw0rd rotates every 90 days'],
  ['leetspeak with symbols', 'The 5tag1ng d@tab@se p@$$w0rd r0tates every 90 days'],
  ['all at once', 'every ٩٠ days the 5tag-1ng data base p a s s w 0 r d basically rotates'],
  ['version, leetspeak', 'St4ging runs p0stgres v2.3'],
];

const REFUSED_BODIES: [string, string][] = [
  ['the value itself', VALUE],
  [
    'inside a sentence',
    'Rotation, per the ops handbook: the staging database password rotates every 90 days.',
  ],
  [
    'in a list, respelled',
    '- step one\n- the stag1ng data base passw0rd rotates every ٩٠ days\n- step three',
  ],
  ['wrapped over two lines', 'Per ops the staging database\npassword rotates every 90 days.'],
  [
    'spaced out among other text',
    'Heads-up. T h e s t a g i n g d a t a b a s e password rotates every 90 days!',
  ],
];

const ACCEPTED_ABSTRACTS: [string, string][] = [
  ['another number', 'The staging database password rotates every 30 days'],
  ['another number, Arabic-Indic', 'The staging database password rotates every ٤٥ days'],
  ['a shorter number', 'The staging database password rotates every 9 days'],
  ['another name', 'The production database password rotates every 90 days'],
  ['a region added', 'The staging database password rotates every 90 days in eu-west-1'],
  ['a negation', 'The staging database password never rotates'],
  ['spaced out, another number', 'The s t a g i n g database password rotates every 60 days'],
  ['leetspeak, another number', 'The stag1ng databa5e passw0rd rotates every 120 days'],
  ['another version', 'Staging runs postgres v2.4'],
];

const ACCEPTED_BODIES: [string, string][] = [
  ['another number', 'Per the ops handbook the staging database password rotates every 30 days.'],
  [
    'the words without the value',
    'The staging database password is rotated by the vault job; the job runs every 90 days.',
  ],
];

function fixture() {
  const home = tmpDir('mneme-lookalike-');
  const repo = gitRepo('git@github.com:acme/lookalike.git');
  const run = (args: string[], env: Record<string, string> = {}) =>
    cli(['--json', ...args], { home, cwd: repo, env });
  for (const [value, reason] of [
    [VALUE, 'the interval is wrong'],
    [VERSION, 'staging moved off that version'],
  ] as const) {
    const m = run(['remember', '--type', 'fact', '--abstract', value]);
    assert.equal(m.code, 0, m.stdout + m.stderr);
    const f = run(['forget', m.json().id, '--reason', reason]);
    assert.equal(f.code, 0, f.stdout + f.stderr);
  }
  return { home, repo, run };
}

const recalled = (run: ReturnType<typeof fixture>['run'], words: string[]) =>
  (run(['recall', ...words, '--limit', '50']).json().results as { abstract: string }[]).map(
    (r) => r.abstract,
  );

describe('look-alikes of a forgotten value are refused through the CLI; other values are stored', () => {
  it('in the abstract: other scripts, spaced out, split or joined, leetspeak; controls stored and recallable', () => {
    const { run } = fixture();
    for (const [what, abstract] of REFUSED_ABSTRACTS) {
      const r = run(['remember', '--type', 'fact', '--abstract', abstract], { MNEME_AGENT: '1' });
      assert.equal(r.code, 2, `${what} must be refused: ${abstract}\n${r.stdout}${r.stderr}`);
      const error = r.json().error;
      assert.equal(error.code, 'refused', what);
      assert.match(error.message, /rejected before and may not be written again/);
      assert.match(error.hint, /write a different value/);
    }
    for (const [what, abstract] of ACCEPTED_ABSTRACTS) {
      const r = run(['remember', '--type', 'fact', '--abstract', abstract], { MNEME_AGENT: '1' });
      assert.equal(r.code, 0, `${what} must be accepted: ${abstract}\n${r.stdout}${r.stderr}`);
    }
    const found = [
      ...recalled(run, ['staging', 'database', 'password', 'rotates']),
      ...recalled(run, ['staging', 'postgres', 'version']),
    ];
    for (const [what, abstract] of ACCEPTED_ABSTRACTS)
      assert.ok(found.includes(abstract), `${what} is recallable: ${abstract}`);
    for (const [, abstract] of REFUSED_ABSTRACTS) assert.ok(!found.includes(abstract), abstract);
    assert.ok(!found.includes(VALUE) && !found.includes(VERSION), 'the forgotten values stay out');
  });

  it('in the body (with a harmless abstract) or a field: refused; a body with another value is stored', () => {
    const { run } = fixture();
    REFUSED_BODIES.forEach(([what, body], i) => {
      const abstract = `Staging credentials runbook, part ${i + 1}`;
      const r = run(['remember', '--type', 'fact', '--abstract', abstract, '--body', body], {
        MNEME_AGENT: '1',
      });
      assert.equal(r.code, 2, `${what} must be refused: ${body}\n${r.stdout}${r.stderr}`);
      const error = r.json().error;
      assert.equal(error.code, 'refused', what);
      assert.equal(error.where, 'the body');
      assert.match(error.message, /^the body repeats a value that was rejected before/);
      assert.match(error.hint, /take the rejected value out of the body/);
    });
    const field = run([
      'remember',
      '--type',
      'fact',
      '--abstract',
      'Staging credentials rotation',
      '--field',
      'subject=the stag1ng database p a s s w o r d rotates every 90 days',
    ]);
    assert.equal(field.code, 2, field.stdout + field.stderr);
    assert.equal(field.json().error.where, 'field "subject"');
    ACCEPTED_BODIES.forEach(([what, body], i) => {
      const abstract = `Staging credentials handbook, chapter ${i + 1}`;
      const r = run(['remember', '--type', 'fact', '--abstract', abstract, '--body', body]);
      assert.equal(r.code, 0, `${what} must be accepted: ${body}\n${r.stdout}${r.stderr}`);
    });
    const found = recalled(run, ['staging', 'credentials']);
    for (let i = 0; i < ACCEPTED_BODIES.length; i++)
      assert.ok(
        found.includes(`Staging credentials handbook, chapter ${i + 1}`),
        `chapter ${i + 1}`,
      );
    for (let i = 0; i < REFUSED_BODIES.length; i++)
      assert.ok(!found.includes(`Staging credentials runbook, part ${i + 1}`), `part ${i + 1}`);
  });

  it('the refusal stays in its scope: another project stores the same value', () => {
    const { home, run } = fixture();
    const other = gitRepo('git@github.com:acme/elsewhere.git');
    const r = cli(
      ['--json', 'remember', '--type', 'fact', '--abstract', REFUSED_ABSTRACTS[14]![1]],
      {
        home,
        cwd: other,
      },
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(
      run(['remember', '--type', 'fact', '--abstract', REFUSED_ABSTRACTS[14]![1]]).code,
      2,
    );
  });
});

describe('engine: the body check reads what a write changes', () => {
  it('a body carried over unchanged passes; a changed body or field that repeats the value is refused', async () => {
    const refused = (e: unknown) => (e as { code?: string }).code === 'refused';
    const store = await FileStore.open(tmpDir(), { durable: false });
    const clock = testClock('2026-05-01T00:00:00.000Z');
    const e = engineFor(store, PROJECT_A, clock);
    const [runbook] = await e.apply(
      [{ op: 'remember', type: 'fact', abstract: 'Staging runbook', body: `Old note: ${VALUE}.` }],
      HUMAN,
    );
    const [m] = await e.apply([{ op: 'remember', type: 'fact', abstract: VALUE }], HUMAN);
    clock.advance(1000);
    await e.apply([{ op: 'retract', id: m!.id, reject: true, reason: 'wrong' }], HUMAN);
    clock.advance(1000);
    // The runbook's body predates the rejection and is not rewritten here: the update passes.
    const [kept] = await e.apply(
      [{ op: 'supersede', id: runbook!.id, abstract: 'Staging runbook, revised' }],
      AGENT,
    );
    assert.equal(kept!.rev, 2);
    clock.advance(1000);
    await assert.rejects(
      e.apply(
        [
          {
            op: 'supersede',
            id: runbook!.id,
            body: 'Old note: the stag1ng data base passw0rd rotates every ٩٠ days.',
          },
        ],
        AGENT,
      ),
      refused,
    );
    await assert.rejects(
      e.apply(
        [
          {
            op: 'remember',
            type: 'fact',
            abstract: 'Staging rotation',
            fields: { subject: 'the 5tag1ng database p a s s w o r d rotates every 90 days' },
          },
        ],
        AGENT,
      ),
      refused,
    );
    const [fixed] = await e.apply(
      [
        {
          op: 'supersede',
          id: runbook!.id,
          body: 'Note: the staging database password rotates every 30 days.',
        },
      ],
      AGENT,
    );
    assert.equal(fixed!.rev, 3);
  });
});
