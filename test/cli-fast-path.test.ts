// `mneme hook …` and plain `mneme recall …` take a fast dispatch (src/surfaces/cli/fast.ts)
// that skips commander and the other commands' modules. Real child processes hold it to the full
// CLI: the same invocation gives byte-identical stdout and stderr and the same exit code through
// bin/mneme.js and through commander alone (test/fixtures/full-cli.mjs), the fast path is really
// the one taken (commander and the write path's packages are never loaded), and whatever it does not
// understand reaches the full CLI unchanged.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LIMITS } from '../src/core/limits.js';
import { parseFast } from '../src/surfaces/cli/fast.js';
import { BIN, FIXTURES, contextOf, makeWorld, type World } from './hook-helpers.js';

const FULL = path.join(FIXTURES, 'full-cli.mjs');
const TRACE = path.join(FIXTURES, 'trace-imports.mjs');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('the fast dispatch answers exactly as the full CLI', () => {
  let w: World;
  let a: string;
  let b: string;
  let cents: string;
  let deploy: string;
  const env = () => ({ ...w.env, MNEME_SLEEP_AUTO: '0' });

  const spawn = (entry: string[], args: string[], cwd: string, input = ''): Run => {
    const r = spawnSync(process.execPath, [...entry, ...args], {
      cwd,
      input,
      env: env(),
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  /** The same invocation through bin/mneme.js and through commander alone. */
  const both = (args: string[], cwd: string, input = '') => ({
    fast: spawn([BIN], args, cwd, input),
    full: spawn([FULL], args, cwd, input),
  });

  before(() => {
    w = makeWorld();
    a = w.project('alpha', 'git@github.com:acme/alpha.git');
    b = w.project('beta', 'https://github.com/acme/beta.git');
    fs.mkdirSync(path.join(a, 'src', 'billing'), { recursive: true });
    const remember = (cwd: string, ...args: string[]) =>
      w.json<{ id: string }>(['remember', ...args], cwd).id;
    cents = remember(
      a,
      '--type',
      'constraint',
      '--abstract',
      'Billing amounts are integers in cents',
      '--field',
      'subject=billing amounts',
      '--applies-to',
      'src/billing/**',
    );
    deploy = remember(a, '--type', 'fact', '--abstract', 'Billing deploys go out on Tuesdays');
    remember(a, '--type', 'decision', '--abstract', 'Invoices are rendered as PDF', '--global');
    remember(b, '--type', 'fact', '--abstract', 'Beta billing runs in Lisbon');
  });
  after(() => w.cleanup());

  it('recall: the same output, errors and exit codes for the same flags', () => {
    const cases: string[][] = [
      ['recall', 'billing', '--json'],
      ['recall', 'billing'],
      ['--json', 'recall', 'billing', 'cents', '--limit', '1'],
      ['recall', 'billing', '--explain', '--min-trust=claimed', '--limit=2', '--json'],
      ['recall', '--explain', 'billing', 'invoices'],
      ['recall', 'billing', '--as-of', '2020-01-01T00:00:00.000Z', '--json'],
      ['recall', 'billing', '--known-at', '2099-01-01T00:00:00.000Z'],
      ['recall', 'nothing-here-at-all', '--json'],
      ['recall', 'billing', '--as-of', 'not-a-date', '--json'], // a refusal, as JSON and on stderr
      ['recall', 'billing', '--as-of', 'not-a-date'],
      ['--store', w.home, 'recall', 'billing', '--json'],
      ['recall', '-', 'billing', '--json'], // a lone "-" is a word to both
    ];
    for (const args of cases) {
      assert.ok(parseFast(args), `the fast path takes: ${args.join(' ')}`);
      const { fast, full } = both(args, a);
      assert.deepEqual(fast, full, `mneme ${args.join(' ')}`);
    }
    // Positive and negative in the same fixture: the answers are real, and bound to project A.
    const json = both(['recall', 'billing', '--json'], a).fast;
    assert.equal(json.code, 0);
    const ids = (JSON.parse(json.stdout) as { results: { id: string }[] }).results.map((r) => r.id);
    assert.ok(ids.includes(cents) && ids.includes(deploy));
    assert.ok(!json.stdout.includes('Lisbon'), "project B's memory stays out");
    const refused = both(['recall', 'billing', '--as-of', 'not-a-date', '--json'], a).fast;
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^mneme: /);
    assert.equal((JSON.parse(refused.stdout) as { error: { code: string } }).error.code, 'invalid');
  });

  it('hook: the same answer for each event and host dialect, always exit 0', () => {
    const start = (session: string, cwd: string) =>
      w.payload('session-start.json', { SESSION: session, TRANSCRIPT: '', CWD: cwd });
    const edit = w.payload('pre-tool-use.json', {
      SESSION: 'fast-2',
      TRANSCRIPT: '',
      CWD: a,
      FILE: path.join(a, 'src/billing/pay.ts'),
    });
    const cases: [string[], string, string][] = [
      [['hook', 'session-start'], start('fast-1', a), a],
      [['hook', 'session-start', '--host', 'codex'], start('fast-1', a), a],
      [['hook', '--host=generic', 'session-start'], start('fast-1', a), a],
      [['hook', 'session-start', '--host', 'no-such-host'], start('fast-1', a), a],
      [['hook', 'session-start'], start('fast-3', b), b],
      [['hook', 'pre-tool-use'], edit, a],
      [['hook', 'session-start'], 'not json at all', a], // a failure: logged, nothing printed
      [['hook', 'no-such-event'], start('fast-1', a), a],
      [['--store', w.home, 'hook', 'session-start'], start('fast-1', a), a],
    ];
    for (const [args, input, cwd] of cases) {
      assert.ok(parseFast(args), `the fast path takes: ${args.join(' ')}`);
      const { fast, full } = both(args, cwd, input);
      assert.deepEqual(fast, full, `mneme ${args.join(' ')}`);
      assert.equal(fast.code, 0);
    }
    const injected = contextOf(both(['hook', 'session-start'], a, start('fast-4', a)).fast.stdout);
    assert.ok(injected.includes(`[mem:${cents}]`), 'the block is not empty');
    assert.ok(!injected.includes('Lisbon'), "project B's memory stays out");
    const edited = contextOf(both(['hook', 'pre-tool-use'], a, edit).fast.stdout);
    assert.ok(edited.includes(`[mem:${cents}]`));
  });

  it('takes the fast path for hooks and recalls: no commander, no write path', () => {
    const trace = path.join(w.dir, 'imports.txt');
    const imported = (args: string[], input = '') => {
      fs.rmSync(trace, { force: true });
      const r = spawnSync(process.execPath, ['--import', TRACE, BIN, ...args], {
        cwd: a,
        input,
        env: { ...env(), MNEME_TRACE_IMPORTS: trace },
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stderr);
      return fs.readFileSync(trace, 'utf8');
    };
    const payload = w.payload('session-start.json', { SESSION: 'fast-5', TRANSCRIPT: '', CWD: a });
    for (const urls of [
      imported(['recall', 'billing', '--json']),
      imported(['hook', 'session-start'], payload),
    ]) {
      // The CLI is one bundle (dist/mneme.cjs); what it requires shows which code ran.
      assert.ok(urls.includes('/bin/mneme.js'), 'the trace sees imports');
      assert.ok(urls.includes('/better-sqlite3/lib/database.js'), 'and what is required');
      for (const heavy of [
        '/commander/',
        '/dist/src/',
        '/node_modules/zod/',
        '/node_modules/yaml/',
        '/node_modules/ulid/',
      ])
        assert.ok(!urls.includes(heavy), `${heavy} is not loaded`);
    }
    // The full CLI does load them for everything else (the trace would show it).
    const status = imported(['status']);
    assert.ok(status.includes('/commander/'));
    const written = imported([
      'remember',
      '--type',
      'fact',
      '--abstract',
      'Traced writes load the write path',
    ]);
    // (A plain revision's front matter is written without the YAML library: core/front-matter-write.)
    assert.ok(written.includes('/node_modules/zod/') && written.includes('/node_modules/ulid/'));
  });

  it('hands anything it does not fully understand to the full CLI', () => {
    for (const args of [
      [],
      ['status'],
      ['recall'],
      ['recall', '--help'],
      ['recall', '-h', 'x'],
      ['recall', 'x', '--limit', '0'],
      ['recall', 'x', '--limit', String(LIMITS.recallLimit + 1)], // past the recall schema's bound
      ['recall', 'x', '--limit', 'many'],
      ['recall', 'x', '--limit', '2', '--limit', '3'],
      ['recall', 'x', '--min-trust', 'total'],
      ['recall', 'x', '--bogus'],
      ['recall', 'x', '--json=yes'],
      ['recall', 'x', '--as-of'],
      ['recall', 'x', '--as-of', '-1d'],
      ['recall', '--', '--x'],
      ['--limit', '3', 'recall', 'x'],
      ['--db', '--tenant', 'recall', 'x'],
      ['hook'],
      ['hook', 'session-start', 'extra'],
      ['hook', 'session-start', '--unknown-flag'],
      ['hook', '--help'],
    ]) {
      assert.equal(parseFast(args), null, `the full CLI takes: ${args.join(' ') || '(nothing)'}`);
    }
    // The store flags are understood as the full CLI reads them, and carried to the command.
    assert.deepEqual(parseFast(['--db', 'postgres://x', '--tenant', 't', 'recall', 'x']), {
      cmd: 'recall',
      words: ['x'],
      flags: { limit: 10 },
      json: false,
      db: 'postgres://x',
      tenant: 't',
    });
    assert.deepEqual(parseFast(['--db', 'postgres://x', 'hook', 'stop']), {
      cmd: 'hook',
      event: 'stop',
      json: false,
      db: 'postgres://x',
    });
    // And the full CLI's answer is what the user gets, e.g. its flag check.
    const { fast, full } = both(['recall', 'x', '--limit', '0'], a);
    assert.deepEqual(fast, full);
    assert.equal(fast.code, 1);
    assert.match(fast.stderr, /invalid recall: limit is refused/);
  });
});
