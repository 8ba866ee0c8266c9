// firstK (core/top-k.ts) against a full sort: the same first k, in the same order, for any n
// and k, ties included (the order is total: score, then id, then rev, as byScore).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { byScore, type Ranked } from '../src/core/ranking.js';
import { firstK } from '../src/core/top-k.js';

const ranked = fc.array(
  fc.record({
    // Few distinct scores and ids: ties on score and on id happen often.
    score: fc.integer({ min: 0, max: 5 }).map((n) => n / 2),
    id: fc.constantFrom('a', 'b', 'c', 'd'),
    rev: fc.integer({ min: 1, max: 3 }),
  }),
  { maxLength: 60 },
);

const unique = (xs: Ranked[]) => {
  const seen = new Set<string>();
  return xs.filter((x) => !seen.has(`${x.id}#${x.rev}`) && seen.add(`${x.id}#${x.rev}`));
};

test('firstK picks what a full sort puts first, in its order; k beyond n gives all n sorted', () => {
  fc.assert(
    fc.property(ranked, fc.integer({ min: 0, max: 70 }), (raw, k) => {
      const xs = unique(raw);
      const got = firstK(xs.length, k, (a, b) => byScore(xs[a]!, xs[b]!)).map((i) => xs[i]!);
      assert.deepEqual(got, [...xs].sort(byScore).slice(0, k));
    }),
    { numRuns: 500 },
  );
});

test('firstK keeps the best items wherever they sit, and none when k is 0', () => {
  const xs: Ranked[] = [5, 1, 9, 3, 9, 0, 7].map((score, i) => ({ score, id: `m${i}`, rev: 1 }));
  const by = (a: number, b: number) => byScore(xs[a]!, xs[b]!);
  assert.deepEqual(firstK(xs.length, 3, by), [2, 4, 6]);
  assert.deepEqual(firstK(xs.length, 0, by), []);
});
