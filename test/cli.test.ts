// The CLI contract: every command through the real binary, --json shapes, exit codes, project
// binding from the git remote, and journal tamper detection.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { cli, gitRepo, tmpDir } from './helpers.js';

describe('CLI', () => {
  const home = tmpDir('mneme-home-');
  const repoA = gitRepo('git@github.com:acme/shop.git');
  const repoA2 = gitRepo('https://github.com/Acme/shop');
  const repoB = gitRepo('git@github.com:acme/other.git');
  const A = (args: string[]) => cli(['--json', ...args], { home, cwd: repoA });

  it('remember, recall, read, supersede, history with --json', () => {
    const r = A([
      'remember',
      '--type',
      'decision',
      '--abstract',
      'Orders are stored in Postgres',
      '--field',
      'subject=orders store',
      '--tag',
      'db',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const { id, rev } = r.json();
    assert.match(id, /^mem_/);
    assert.equal(rev, 1);

    const rec = A(['recall', 'orders', 'postgres']).json();
    assert.deepEqual(
      Object.keys(rec.results[0]).filter((k) =>
        [
          'id',
          'rev',
          'type',
          'scope',
          'abstract',
          'score',
          'trust',
          'status',
          'valid_from',
          'valid_to',
          'handle',
        ].includes(k),
      ).length,
      11,
    );
    assert.equal(rec.results[0].handle, `[mem:${id}]`);

    const sup = A([
      'supersede',
      id,
      '--abstract',
      'Orders are stored in CockroachDB',
      '--expected-rev',
      '1',
    ]);
    assert.equal(sup.code, 0, sup.stderr);
    assert.equal(sup.json().rev, 2);

    const read = A(['read', id]).json();
    for (const k of [
      'id',
      'rev',
      'type',
      'scope',
      'abstract',
      'body',
      'trust',
      'status',
      'valid_from',
      'valid_to',
    ])
      assert.ok(k in read, k);
    assert.equal(read.abstract, 'Orders are stored in CockroachDB');

    const h = A(['history', id]).json();
    assert.equal(h.id, id);
    assert.deepEqual(
      h.revisions.map((x: { rev: number; status: string }) => [x.rev, x.status]),
      [
        [1, 'superseded'],
        [2, 'active'],
      ],
    );
    for (const k of [
      'rev',
      'abstract',
      'status',
      'trust',
      'valid_from',
      'valid_to',
      'recorded_at',
      'retired_at',
      'actor',
    ])
      assert.ok(k in h.revisions[0], k);

    const ex = A(['recall', 'orders', 'Postgres', '--explain']).json();
    assert.deepEqual(
      ex.results.map((x: { abstract: string }) => x.abstract),
      ['Orders are stored in CockroachDB'],
    );
    assert.ok(
      ex.excluded.some(
        (x: { id: string; reason: string }) => x.id === id && x.reason === 'superseded',
      ),
    );
  });

  it('binds the project from the canonical git remote; other projects do not see it', () => {
    A(['remember', '--type', 'fact', '--abstract', 'Shop checkout uses Stripe']);
    const same = cli(['--json', 'recall', 'checkout'], { home, cwd: repoA2 }).json();
    assert.equal(same.results.length, 1, 'https and scp forms of one remote are one project');
    const other = cli(['--json', 'recall', 'checkout'], { home, cwd: repoB }).json();
    assert.equal(other.results.length, 0);
    cli(
      [
        '--json',
        'remember',
        '--type',
        'fact',
        '--abstract',
        'Checkout copy is reviewed by legal',
        '--global',
      ],
      { home, cwd: repoB },
    );
    const both = A(['recall', 'checkout']).json();
    assert.deepEqual(both.results.map((x: { abstract: string }) => x.abstract).sort(), [
      'Checkout copy is reviewed by legal',
      'Shop checkout uses Stripe',
    ]);
  });

  it('correct, retract, forget, log and exit codes', () => {
    const id = A([
      'remember',
      '--type',
      'fact',
      '--abstract',
      'Staging URL is staging.acme.io',
      '--field',
      'subject=staging url',
    ]).json().id;
    assert.equal(A(['correct', id, '--abstract', 'Staging URL is stage.acme.io']).code, 0);
    const stale = A([
      'supersede',
      id,
      '--abstract',
      'Staging URL is s.acme.io',
      '--expected-rev',
      '1',
    ]);
    assert.equal(stale.code, 2);
    assert.equal(stale.json().error.code, 'conflict');
    assert.match(stale.stderr, /hint: read it again/);
    assert.equal(A(['read', 'mem_01J00000000000000000000000']).code, 1);
    assert.equal(A(['remember', '--type', 'nonsense', '--abstract', 'x']).code, 1);
    assert.equal(A(['remember', '--type', 'fact']).code, 1, 'missing --abstract is a user error');
    const other = A(['remember', '--type', 'fact', '--abstract', 'Old cron host is cron1']).json()
      .id;
    assert.equal(A(['retract', other, '--reason', 'decommissioned']).code, 0);
    assert.equal(A(['forget', id]).code, 0);
    assert.deepEqual(A(['recall', 'staging', 'cron']).json().results, []);
    assert.equal(
      A(['recall', 'shop']).json().results.length,
      1,
      'unrelated memories are still served',
    );
    const log = A(['log', '--limit', '3']).json();
    assert.deepEqual(
      log.entries.map((e: { op: string }) => e.op),
      ['forget', 'retract', 'remember'],
    );
    assert.equal(
      A(['supersede', other, '--abstract', 'x']).code,
      2,
      'a retracted memory cannot be revised',
    );
  });

  it('idempotency keys via the CLI', () => {
    const a = A([
      'remember',
      '--type',
      'fact',
      '--abstract',
      'Idem A',
      '--idempotency-key',
      'same',
    ]).json();
    const b = A([
      'remember',
      '--type',
      'fact',
      '--abstract',
      'Idem A',
      '--idempotency-key',
      'same',
    ]).json();
    assert.equal(a.id, b.id);
    assert.equal(b.replayed, true);
    assert.equal(
      A(['remember', '--type', 'fact', '--abstract', 'Idem B', '--idempotency-key', 'same']).code,
      2,
    );
  });

  it('status, rebuild, export and import into a fresh store', () => {
    const s = A(['status']).json();
    assert.ok(s.activeMemories >= 3);
    assert.match(s.project, /^acme-shop-[0-9a-f]{8}$/);
    const rb = A(['rebuild']).json();
    assert.ok(rb.memories >= 5);
    const out = path.join(tmpDir(), 'bundle.json');
    assert.equal(A(['export', '--out', out]).code, 0);
    const home2 = tmpDir('mneme-home2-');
    const imp = cli(['--json', 'import', out, '--global'], { home: home2, cwd: repoA });
    assert.equal(imp.code, 0, imp.stderr);
    assert.ok(imp.json().imported >= 5);
    const again = cli(['--json', 'import', out, '--global'], { home: home2, cwd: repoA }).json();
    assert.equal(again.imported, 0, 'importing twice changes nothing');
    const rec = cli(['--json', 'recall', 'orders'], { home: home2, cwd: repoA }).json();
    assert.deepEqual(
      rec.results.map((x: { abstract: string; trust: string }) => [x.abstract, x.trust]),
      [['Orders are stored in CockroachDB', 'untrusted']],
    );
    assert.deepEqual(
      cli(['--json', 'recall', 'staging'], { home: home2, cwd: repoA }).json().results,
      [],
      'a forgotten memory stays forgotten',
    );
    const hist = cli(['--json', 'history', rec.results[0].id], { home: home2, cwd: repoA }).json();
    assert.equal(hist.revisions.length, 2, 'revisions travel with the bundle');
  });

  it('journal verify detects an edited, deleted, reordered or truncated entry', () => {
    const h = tmpDir('mneme-tamper-');
    for (const a of ['one', 'two', 'three', 'four'])
      cli(['remember', '--type', 'fact', '--abstract', `Tamper ${a}`], { home: h, cwd: repoA });
    assert.equal(cli(['journal', 'verify'], { home: h }).code, 0);
    const file = path.join(h, 'journal', '00000001.jsonl');
    const pristine = fs.readFileSync(file, 'utf8');
    const lines = pristine.trim().split('\n');
    const check = (text: string, expectSeq: RegExp) => {
      fs.writeFileSync(file, text);
      const r = cli(['--json', 'journal', 'verify'], { home: h });
      assert.equal(r.code, 2, `tampering must fail verification: ${r.stdout}`);
      assert.match(JSON.stringify(r.json().firstBad), expectSeq);
      fs.writeFileSync(file, pristine);
    };
    check(
      [lines[0], lines[1]!.replace('"kind":"human"', '"kind":"agent"'), lines[2], lines[3]].join(
        '\n',
      ) + '\n',
      /"seq":2/,
    );
    check([lines[0], lines[2], lines[3]].join('\n') + '\n', /"seq":3/);
    check([lines[0], lines[2], lines[1], lines[3]].join('\n') + '\n', /"seq":3/);
    check([lines[0], lines[1], lines[2]].join('\n') + '\n', /deleted from the tail/);
    assert.equal(
      cli(['journal', 'verify'], { home: h }).code,
      0,
      'the pristine journal verifies again',
    );
  });
});
