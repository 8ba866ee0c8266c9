// End to end: `mneme bench longmemeval` on a two-question fixture (not the real data), through
// the real binary, with --out into a temp directory: the metric keys, the per-question
// outcomes, and nothing written into the repository.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pgSkipReason, throwawayDb } from './pg-fixtures.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(root, 'bin', 'mneme.js');

// Asked before any test runs, so a busy event loop cannot time the probe out.
const pgSkip = await pgSkipReason();

const session = (user: string, assistant: string) => [
  { role: 'user', content: user },
  { role: 'assistant', content: assistant },
];

const fixture = [
  {
    question_id: 'q1',
    question_type: 'single-session-user',
    question: 'What colour is my new bicycle?',
    question_date: '2023/05/30 (Tue) 23:40',
    answer: 'red',
    answer_session_ids: ['s-bike'],
    haystack_dates: ['2023/05/20 (Sat) 02:21', '2023/05/21 (Sun) 10:00', '2023/05/22 (Mon) 09:00'],
    haystack_session_ids: ['s-cake', 's-bike', 's-tax'],
    haystack_sessions: [
      session('How long should I bake a lemon cake?', 'About 40 minutes at 180C.'),
      session('I bought a new bicycle, a red one, for commuting.', 'Nice, enjoy the rides.'),
      session('When are tax returns due?', 'Usually in April.'),
    ],
  },
  {
    question_id: 'q2_abs',
    question_type: 'multi-session',
    question: 'How many violins do I own?',
    question_date: '2023/06/01 (Thu) 10:00',
    answer: 'not mentioned',
    answer_session_ids: ['s-tax'],
    haystack_dates: ['2023/05/20 (Sat) 02:21', '2023/05/22 (Mon) 09:00'],
    haystack_session_ids: ['s-cake', 's-tax'],
    haystack_sessions: [
      session('Lemon cake recipe please', 'Here it is.'),
      session('Tax returns question', 'Sure.'),
    ],
  },
];

test('bench longmemeval --json --out writes the result with the documented metric keys', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-bench-test-'));
  try {
    const data = path.join(dir, 'two.json.gz');
    fs.writeFileSync(data, zlib.gzipSync(JSON.stringify(fixture)));
    const out = path.join(dir, 'out', 'result.json');
    const before = fs.existsSync(path.join(root, 'bench', 'results'))
      ? fs.readdirSync(path.join(root, 'bench', 'results')).sort()
      : [];
    const r = spawnSync(
      process.execPath,
      [bin, 'bench', 'longmemeval', '--data', data, '--out', out, '--json'],
      { encoding: 'utf8', env: { ...process.env, MNEME_HOME: path.join(dir, 'home') } },
    );
    assert.equal(r.status, 0, r.stderr);
    const printed = JSON.parse(r.stdout) as Record<string, unknown>;
    const written = JSON.parse(fs.readFileSync(out, 'utf8')) as typeof printed;
    assert.deepEqual(written.metrics, printed.metrics);
    const metrics = written.metrics as Record<string, number>;
    assert.deepEqual(Object.keys(metrics).sort(), [
      'mrr',
      'ndcg@10',
      'recall_all@10',
      'recall_all@5',
      'recall_any@10',
      'recall_any@5',
    ]);
    // One scored question (q1); the abstention question is reported apart.
    assert.equal(written.n, 1);
    assert.equal(metrics['recall_any@5'], 1);
    assert.equal(metrics.mrr, 1);
    assert.deepEqual(Object.keys(written.by_type as object), ['single-session-user']);
    assert.equal((written.abstention as { n: number }).n, 1);
    const qs = written.questions as { question_id: string; top10: string[] }[];
    assert.equal(qs[0]!.question_id, 'q1');
    assert.equal(qs[0]!.top10[0], 's-bike');
    assert.ok(!qs[0]!.top10.includes('s-cake'), 'a session sharing no word is not retrieved');
    assert.equal(typeof written.git_commit === 'string' || written.git_commit === null, true);
    assert.equal(typeof (written.machine as { cores: number }).cores, 'number');
    // --out writes there and nowhere else.
    const after = fs.existsSync(path.join(root, 'bench', 'results'))
      ? fs.readdirSync(path.join(root, 'bench', 'results')).sort()
      : [];
    assert.deepEqual(after, before);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('bench locomo refuses a file of the wrong shape with a hint', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-bench-test-'));
  try {
    const data = path.join(dir, 'bad.json');
    fs.writeFileSync(data, JSON.stringify({ not: 'a list' }));
    const r = spawnSync(
      process.execPath,
      [bin, 'bench', 'locomo', '--data', data, '--out', path.join(dir, 'o.json')],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 1);
    assert.match(r.stderr, /not a LoCoMo file/);
    assert.ok(!fs.existsSync(path.join(dir, 'o.json')));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the shipped bundle holds no benchmark or fault-injection code; the bench tree does', () => {
  const bundle = fs.readFileSync(path.join(root, 'dist', 'mneme.cjs'), 'utf8');
  const tooling = [
    ['dist/bench/src/longmemeval.js', 'runLongMemEval'],
    ['dist/bench/src/scale.js', 'runScale'],
    ['dist/test/reliability/kill.js', 'runKillPoints'],
    ['dist/test/reliability/crash-child.js', 'MNEME_CRASH_POINT'],
  ];
  for (const [file, name] of tooling) {
    assert.ok(
      fs.readFileSync(path.join(root, file!), 'utf8').includes(name!),
      `${file} has ${name}`,
    );
    assert.ok(!bundle.includes(name!), `dist/mneme.cjs has no ${name}`);
  }
});

test('mneme bench without the bench tree (an installed package) refuses with what to do', () => {
  // An installed package's shape: package.json, bin/ and the bundle, no dist/bench.
  const pkg = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-installed-'));
  try {
    fs.mkdirSync(path.join(pkg, 'bin'));
    fs.mkdirSync(path.join(pkg, 'dist'));
    fs.copyFileSync(path.join(root, 'package.json'), path.join(pkg, 'package.json'));
    fs.copyFileSync(bin, path.join(pkg, 'bin', 'mneme.js'));
    fs.copyFileSync(path.join(root, 'dist', 'mneme.cjs'), path.join(pkg, 'dist', 'mneme.cjs'));
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(pkg, 'node_modules'));
    const env = { ...process.env, MNEME_HOME: path.join(pkg, 'home') };
    const run = (args: string[]) =>
      spawnSync(process.execPath, [path.join(pkg, 'bin', 'mneme.js'), ...args], {
        encoding: 'utf8',
        env,
      });
    const missing = run(['bench', 'scale', '--n', '10']);
    assert.equal(missing.status, 1, missing.stderr);
    assert.match(
      missing.stderr,
      /benchmark tooling is not here \(no .*dist\/bench\/src\/main\.js\)/,
    );
    assert.match(missing.stderr, /source checkout/);
    // The same installed copy runs its product commands.
    const remembered = run(['--json', 'remember', '--type', 'fact', '--abstract', 'Installed']);
    assert.equal(remembered.status, 0, remembered.stderr);
  } finally {
    fs.rmSync(pkg, { recursive: true, force: true });
  }
});

test('mneme bench passes what follows it to the benchmark verbatim, product options included', () => {
  const run = (args: string[]) =>
    spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: process.env });
  const help = run(['bench', '--help']);
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /Usage: mneme bench/);
  assert.match(help.stdout, /longmemeval/);
  // --db is also a product option; after `bench scale` it is the benchmark's to accept or refuse.
  const db = run(['bench', 'scale', '--db', 'postgres://nowhere/x', '--n', '5']);
  assert.equal(db.status, 1);
  assert.match(db.stderr, /unknown option '--db'/);
});

test(
  'bench longmemeval --db runs on Postgres, and bench compare finds the same top-10 as on files',
  {
    skip: pgSkip ?? false,
  },
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-bench-test-'));
    const db = await throwawayDb();
    try {
      const data = path.join(dir, 'two.json.gz');
      fs.writeFileSync(data, zlib.gzipSync(JSON.stringify(fixture)));
      const env = { ...process.env, MNEME_HOME: path.join(dir, 'home') };
      const bench = (out: string, extra: string[]) => {
        const r = spawnSync(
          process.execPath,
          [bin, 'bench', 'longmemeval', '--data', data, '--out', out, ...extra],
          { encoding: 'utf8', env },
        );
        assert.equal(r.status, 0, r.stderr);
        return JSON.parse(fs.readFileSync(out, 'utf8')) as {
          config: { store: string };
          questions: { top10: string[] }[];
        };
      };
      const files = bench(path.join(dir, 'files.json'), []);
      const onPg = bench(path.join(dir, 'pg.json'), ['--db', db.url]);
      assert.equal(files.config.store, 'files');
      assert.equal(onPg.config.store, 'postgres');
      assert.equal(onPg.questions[0]!.top10[0], 's-bike');
      const compare = (b: string) => {
        const r = spawnSync(
          process.execPath,
          [bin, '--json', 'bench', 'compare', path.join(dir, 'files.json'), path.join(dir, b)],
          { encoding: 'utf8', env },
        );
        assert.equal(r.status, 0, r.stderr);
        return JSON.parse(r.stdout) as { questions: number; agreement: number };
      };
      const report = compare('pg.json');
      assert.equal(report.questions, 2);
      assert.equal(report.agreement, 1);
      // A run that differs is counted as differing (the comparison can fail).
      const other = JSON.parse(fs.readFileSync(path.join(dir, 'pg.json'), 'utf8')) as {
        questions: { top10: string[] }[];
      };
      other.questions[0]!.top10 = ['s-tax'];
      fs.writeFileSync(path.join(dir, 'other.json'), JSON.stringify(other));
      assert.equal(compare('other.json').agreement, 0.5);
    } finally {
      await db.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('bench inject: the real prompt hook per floor, with off-topic prompts from the other set', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-bench-test-'));
  try {
    const lme = path.join(dir, 'two.json.gz');
    fs.writeFileSync(lme, zlib.gzipSync(JSON.stringify(fixture)));
    const locomo = path.join(dir, 'locomo.json');
    fs.writeFileSync(
      locomo,
      JSON.stringify([
        {
          sample_id: 'c1',
          conversation: {
            speaker_a: 'Ana',
            speaker_b: 'Ben',
            session_1_date_time: '1:56 pm on 8 May, 2023',
            session_1: [
              { speaker: 'Ana', dia_id: 'D1:1', text: 'I adopted a grey kitten named Pixel.' },
              { speaker: 'Ben', dia_id: 'D1:2', text: 'The marathon training is going well.' },
            ],
          },
          qa: [{ question: 'What is the name of the kitten Ana adopted?', evidence: ['D1:1'] }],
        },
      ]),
    );
    const out = path.join(dir, 'inject.json');
    const w = spawnSync(
      process.execPath,
      [
        bin,
        'bench',
        'inject',
        '--longmemeval',
        lme,
        '--locomo',
        locomo,
        '--lme-every',
        '1',
        '--locomo-every',
        '1',
        '--floors',
        '0,0.5,0.95',
        '--out',
        out,
      ],
      { encoding: 'utf8', env: { ...process.env, MNEME_HOME: path.join(dir, 'home') } },
    );
    assert.equal(w.status, 0, w.stderr);
    const res = JSON.parse(fs.readFileSync(out, 'utf8')) as {
      n: number;
      hook_runs: number;
      by_floor: Record<string, Record<string, number | null>>;
      questions: { id: string; off_topic: boolean; by_floor: Record<string, string[]> }[];
    };
    // Two on-topic prompts (q1 and the kitten), each asked in its own store and off-topic in the other's.
    assert.equal(res.n, 2);
    assert.equal(res.hook_runs, 3 * res.questions.length);
    const q1 = res.questions.find((q) => q.id === 'q1')!;
    assert.deepEqual(q1.by_floor['0']!.slice(0, 1), ['s-bike'], 'the evidence is in the block');
    const kitten = res.questions.find((q) => q.id === 'c1#0')!;
    assert.ok(kitten.by_floor['0']!.includes('D1:1'));
    assert.equal(res.by_floor['0']!.inject_share, 1);
    assert.ok(res.by_floor['0']!.evidence_recall! > 0);
    // At 0.95 only a prompt whose every word is in the abstract injects: the kitten question
    // (name, kitten, Ana, adopted), not q1 ("colour" is in no memory).
    assert.deepEqual(q1.by_floor['0.95'], []);
    assert.deepEqual(kitten.by_floor['0.95'], ['D1:1']);
    assert.equal(res.by_floor['0.95']!.inject_share, 0.5);
    // The off-topic prompts were asked.

    assert.ok(res.questions.some((q) => q.off_topic));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('bench inject without a data file says what to pass', () => {
  const r = spawnSync(process.execPath, [bin, 'bench', 'inject'], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /needs a data file/);
  assert.match(r.stderr, /--longmemeval FILE/);
});
