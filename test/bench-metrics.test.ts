// The benchmark metrics on tiny hand-made fixtures whose answers are worked out by hand.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  aggregate,
  dedupe,
  ndcg,
  parseEvidence,
  percentile,
  reciprocalRank,
  recallAll,
  recallAny,
  recallFraction,
} from '../bench/src/metrics.js';
import { parseLocomoDate, parseSlashDate, splitBytes } from '../bench/src/harness.js';

const ranked = ['s3', 's1', 's7', 's2', 's9', 's4'];

test('recall_any and recall_all at k', () => {
  // s2 is at rank 4, s4 at rank 6.
  assert.equal(recallAny(ranked, ['s2', 's4'], 5), 1);
  assert.equal(recallAll(ranked, ['s2', 's4'], 5), 0);
  assert.equal(recallAll(ranked, ['s2', 's4'], 6), 1);
  assert.equal(recallAny(ranked, ['s8'], 6), 0);
  assert.equal(recallAny(ranked, ['s3'], 1), 1);
  assert.equal(recallAll(ranked, [], 5), 0);
});

test('evidence recall is the fraction found in the top k', () => {
  // s1 (rank 2) and s9 (rank 5) found at k=5, s4 (rank 6) not, s8 never: 2 of 4.
  assert.equal(recallFraction(ranked, ['s1', 's9', 's4', 's8'], 5), 0.5);
  assert.equal(recallFraction(ranked, ['s1', 's9', 's4', 's8'], 6), 0.75);
  assert.equal(recallFraction(ranked, ['s1', 's1'], 2), 1);
});

test('NDCG@10 with binary relevance', () => {
  // relevant at ranks 2 and 4: DCG = 1/log2(3) + 1/log2(5); ideal = 1 + 1/log2(3).
  const dcg = 1 / Math.log2(3) + 1 / Math.log2(5);
  const ideal = 1 + 1 / Math.log2(3);
  assert.ok(Math.abs(ndcg(ranked, ['s1', 's2'], 10) - dcg / ideal) < 1e-12);
  assert.equal(ndcg(ranked, ['s3'], 10), 1);
  assert.equal(ndcg(ranked, ['s8'], 10), 0);
});

test('reciprocal rank of the first relevant id', () => {
  assert.equal(reciprocalRank(ranked, ['s7', 's2']), 1 / 3);
  assert.equal(reciprocalRank(ranked, ['s8']), 0);
});

test('passages of one session count once, at their best rank', () => {
  assert.deepEqual(dedupe(['a', 'b', 'a', 'c', 'b']), ['a', 'b', 'c']);
});

test('percentile is nearest-rank', () => {
  const xs = [5, 1, 4, 2, 3, 6, 7, 8, 9, 10];
  assert.equal(percentile(xs, 50), 5);
  assert.equal(percentile(xs, 95), 10);
  assert.equal(percentile([], 50), 0);
});

test('aggregate averages overall and per group', () => {
  const a = aggregate(
    [
      { group: 'x', values: { m: 1 } },
      { group: 'x', values: { m: 0 } },
      { group: 'y', values: { m: 1 } },
    ],
    ['m'],
  );
  assert.equal(a.overall.m, 0.6667);
  assert.deepEqual(a.byGroup, { x: { m: 0.5, n: 2 }, y: { m: 1, n: 1 } });
});

test('LoCoMo evidence ids: malformed and unknown ids are counted, good ones kept', () => {
  const known = new Set(['D1:3', 'D8:6', 'D9:17']);
  const p = parseEvidence(['D8:6; D9:17', 'D', 'D:11:26', 'D1:3', 'D4:99', 'D1:3'], known);
  assert.deepEqual(p.ids, ['D8:6', 'D9:17', 'D1:3']);
  assert.deepEqual(p.skipped, [
    { raw: 'D', why: 'malformed' },
    { raw: 'D:11:26', why: 'malformed' },
    { raw: 'D4:99', why: 'unknown' },
  ]);
  const empty = parseEvidence([''], known);
  assert.deepEqual(empty.ids, []);
  assert.equal(empty.skipped.length, 1);
});

test('data set dates parse to ISO UTC', () => {
  assert.equal(parseSlashDate('2023/05/20 (Sat) 02:21'), '2023-05-20T02:21:00.000Z');
  assert.equal(parseSlashDate('not a date'), null);
  assert.equal(parseLocomoDate('1:56 pm on 8 May, 2023'), '2023-05-08T13:56:00.000Z');
  assert.equal(parseLocomoDate('12:05 am on 1 January, 2024'), '2024-01-01T00:05:00.000Z');
  assert.equal(parseLocomoDate('yesterday'), null);
});

test('long text splits at line breaks under the byte limit and loses nothing', () => {
  const text = ['aaaa', 'bbbb', 'cccc', 'dddddddddddd'].join('\n');
  const parts = splitBytes(text, 10);
  assert.deepEqual(parts, ['aaaa\nbbbb', 'cccc', 'dddddddddd', 'dd']);
  assert.deepEqual(splitBytes('short', 10), ['short']);
});
