// The CLI bundle (dist/mneme.cjs) is written as ASCII so that node reads it into a one-byte
// string at every start (scripts/bundle-ascii.mjs). Escaping must never change what the code
// does: the escaped forms of a regular expression, a tagged template's cooked text, a string and
// a comment are run next to the originals; the two cases that escaping would change (String.raw,
// a backslash before the character) are refused, next to an accepted control; and through the
// real binary a rule that depends on a non-ASCII regular expression (ß folds to ss, so a
// respelled forgotten value stays refused) still holds, paired with a different value that passes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { after, before, describe, it } from 'node:test';
import { BIN, ROOT, tmpDir } from './helpers.js';

const { asciiOnly } = (await import(
  pathToFileURL(path.join(ROOT, 'scripts', 'bundle-ascii.mjs')).href
)) as { asciiOnly: (code: string) => string };

const NON_ASCII = /[\u0080-\uffff]/;

describe('the ASCII bundle', () => {
  it('holds no byte above 0x7f, and still holds the characters as escapes', () => {
    const bundle = fs.readFileSync(path.join(ROOT, 'dist', 'mneme.cjs'));
    assert.equal(
      bundle.findIndex((b) => b > 0x7f),
      -1,
    );
    // core/normalize.ts folds these four letters; the bundle carries them escaped.
    assert.match(bundle.toString('latin1'), /\[\\u00df\\u1e9e\\u017f\\u03c2\]/);
  });

  it('escaping keeps what regular expressions, templates, strings and comments mean', () => {
    const code = [
      '// a comment with → and ≈',
      'const tag = (s, ...v) => s.map((x, i) => x + (i < v.length ? v[i] : "")).join("");',
      'const fold = (t) => t.replace(/[ßẞſς]/g, "_");',
      'const astral = /😀|[é]/u;',
      'result = [',
      '  fold("Straße ſ ς abc"),',
      '  tag`<p>${1} · → ${"x"} “q”</p>`,',
      '  `plain → ${2}`,',
      '  "quoted — é", astral.test("😀"), astral.test("é"), astral.test("e"),',
      '  /[→]/.test("a→b"), /→/.test("->"),',
      '];',
    ].join('\n');
    const escaped = asciiOnly(code);
    assert.ok(!NON_ASCII.test(escaped), 'escaped');
    assert.ok(NON_ASCII.test(code), 'the original does hold non-ASCII text');
    const run = (src: string) => {
      const sandbox: { result?: unknown } = {};
      vm.runInNewContext(src, sandbox);
      // Through JSON: the array comes from another realm (its prototype is not this realm's).
      return JSON.parse(JSON.stringify(sandbox.result)) as unknown;
    };
    assert.deepEqual(run(escaped), run(code));
    assert.deepEqual(run(code), [
      'Stra_e _ _ abc',
      '<p>1 · → x “q”</p>',
      'plain → 2',
      'quoted — é',
      true,
      true,
      false,
      true,
      false,
    ]);
  });

  it('refuses what escaping would change, and accepts the same text without it', () => {
    assert.throws(() => asciiOnly('String.raw`a → b`'), /cannot write as ASCII.*String\.raw/);
    assert.throws(() => asciiOnly('/a\\→b/'), /cannot write as ASCII/);
    assert.equal(asciiOnly('String.raw`a -> b`; "→"'), 'String.raw`a -> b`; "\\u2192"');
    assert.equal(asciiOnly('/a\\.→b/'), '/a\\.\\u2192b/');
  });

  describe('through the real binary', () => {
    let home: string;
    const mneme = (...args: string[]) => {
      const r = spawnSync(process.execPath, [BIN, ...args], {
        env: { ...process.env, MNEME_HOME: home, MNEME_DURABLE: '0', MNEME_SLEEP_AUTO: '0' },
        cwd: home,
        encoding: 'utf8',
      });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    before(() => {
      home = tmpDir('mneme-ascii-');
    });
    after(() => fs.rmSync(home, { recursive: true, force: true }));

    it('a forgotten value respelled with ß → ss stays refused; another value is written', () => {
      const first = mneme(
        'remember',
        '--type',
        'fact',
        '--abstract',
        'Deploys go to the Straße cluster on Fridays',
        '--json',
      );
      assert.equal(first.code, 0, first.stderr);
      const id = (JSON.parse(first.stdout) as { id: string }).id;
      const forgot = mneme('forget', id);
      assert.equal(forgot.code, 0, forgot.stderr);
      const respelled = mneme(
        'remember',
        '--type',
        'fact',
        '--abstract',
        'Deploys go to the STRASSE cluster on Fridays',
      );
      assert.equal(respelled.code, 2);
      assert.match(respelled.stderr, /rejected before and may not be written again/);
      const other = mneme(
        'remember',
        '--type',
        'fact',
        '--abstract',
        'Deploys go to the Hauptstrasse cluster on Fridays',
      );
      assert.equal(other.code, 0, other.stderr);
      assert.match(other.stdout, /^remembered mem_/);
    });
  });
});
