// indexTokens (core/text.ts) takes a shortcut for ASCII text (no normal forms, no Unicode scan).
// The shortcut must give exactly the tokens of the general path: the same text with one accented
// word appended goes the general path, and its tokens are the ASCII text's plus that word's.
// The accented word is itself folded (é → e), and the general path does split and stem.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { indexTokens } from '../src/core/text.js';

const ASCII = fc.string({
  unit: fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)),
});

test('ASCII text gets the tokens the general path gives it', () => {
  fc.assert(
    fc.property(ASCII, (s) => {
      assert.deepEqual(indexTokens(`${s} caf\u00e9`), [...indexTokens(s), 'cafe']);
    }),
    { numRuns: 2000 },
  );
  const words = 'Deploys RUNNING tests_42 x-y 3.14 ' + 'a'.repeat(201) + ' end';
  assert.deepEqual(indexTokens(words), ['deploi', 'run', 'test', '42', 'x', 'y', '3', '14', 'end']);
  assert.deepEqual(indexTokens(`${words} caf\u00e9`), [...indexTokens(words), 'cafe']);
});

test('non-ASCII text still folds, splits CJK and stems', () => {
  assert.deepEqual(indexTokens('Caf\u00e9 R\u00c9SUM\u00c9S'), ['cafe', 'resum']);
  assert.deepEqual(indexTokens('\u6771\u4eacdeploys'), ['\u6771', '\u4eac', 'deploi']);
});
