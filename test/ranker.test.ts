// The lexical ranker's pure parts: time windows named by queries, feedback terms, proximity.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { feedbackTerms, momentSupport } from '../src/core/ranking.js';
import {
  STOP_WORDS,
  asksForSeveral,
  contentTerms,
  ftsMatchExpression,
  queryTerms,
  timeWindow,
  withProximity,
} from '../src/core/text.js';

const now = '2023-06-30T12:00:00.000Z';

test('a query naming a period gets a window around it; one naming none gets null', () => {
  const w = timeWindow('What did I buy three weeks ago?', now)!;
  // 21 days back is 9 June 12:00; ± 3.5 days.
  assert.equal(w.from, '2023-06-06T00:00:00.000Z');
  assert.equal(w.to, '2023-06-13T00:00:00.000Z');
  const may = timeWindow('Which concerts did I attend in May?', now)!;
  assert.deepEqual(may, { from: '2023-05-01T00:00:00.000Z', to: '2023-06-01T00:00:00.000Z' });
  const past = timeWindow('trips in the past two months', now)!;
  assert.ok(past.from < '2023-05-01' && past.to > now);
  assert.equal(timeWindow('What degree did I graduate with?', now), null);
  // "before today" bounds a span; it does not name today.
  assert.ok(timeWindow('What did I eat today?', now));
  assert.equal(timeWindow('Which airlines did I fly before today?', now), null);
});

test('feedback terms are words the best matches share, never the query or stop words', () => {
  const docs = [
    ['violin', 'lesson', 'teacher', 'the', 'bow'],
    ['violin', 'teacher', 'recital', 'with'],
    ['guitar', 'teacher', 'violin'],
  ];
  const terms = feedbackTerms(docs, new Set(['violin']), STOP_WORDS, 5);
  assert.deepEqual(terms, ['teacher']);
  assert.ok(!terms.includes('violin') && !terms.includes('the'));
});

test('proximity groups render as NEAR next to the plain terms', () => {
  const terms = queryTerms('red bicycle commute');
  assert.equal(
    ftsMatchExpression(withProximity(terms, 5)),
    '"red" OR "bicycle" OR "commute" OR NEAR("red" "bicycle", 5) OR NEAR("bicycle" "commute", 5)',
  );
  assert.equal(ftsMatchExpression(terms), '"red" OR "bicycle" OR "commute"');
});

test('a question is searched by what it is about, not by the shape of its answer', () => {
  const words = contentTerms('How many different board games have I played in total?').map(
    (t) => t.text,
  );
  assert.ok(words.includes('board') && words.includes('games') && words.includes('played'));
  assert.ok(!words.includes('different') && !words.includes('total'));
  const lately = contentTerms('Which podcast have I been listening to lately?').map((t) => t.text);
  assert.ok(lately.includes('podcast') && !lately.includes('lately'));
  // A query made only of framing words still searches them.
  assert.deepEqual(
    contentTerms('the total order').map((t) => t.text),
    ['total', 'order'],
  );
});

test('memories matched at the same moment support each other; a lone match gets no support', () => {
  const day1 = '2023-05-01T10:00:00.000Z';
  const day2 = '2023-05-02T10:00:00.000Z';
  const cands = [
    { id: 'a', validFrom: day1, relevance: 0.8 },
    { id: 'b', validFrom: day1, relevance: 0.6 },
    { id: 'c', validFrom: day2, relevance: 0.9 },
  ];
  const [a, b, c] = momentSupport(cands, 0.25);
  assert.ok(a! > 0.8 && b! > 0.6, 'both memories of the shared moment gain');
  assert.ok(a! > c!, 'the supported memory now outranks the lone, slightly better match');
  assert.equal(c, 0.9);
  // Two revisions of one memory are not two memories of the moment.
  const revs = momentSupport(
    [
      { id: 'a', validFrom: day1, relevance: 0.8 },
      { id: 'a', validFrom: day1, relevance: 0.5 },
    ],
    0.25,
  );
  assert.deepEqual(revs, [0.8, 0.5]);
});

test('a counted span of time is left to the time window, not searched as words', () => {
  const words = contentTerms('Which museums did I visit in the past three months?').map(
    (t) => t.text,
  );
  assert.ok(words.includes('museums') && words.includes('visit'));
  assert.ok(!words.includes('three') && !words.includes('months') && !words.includes('past'));
  assert.ok(timeWindow('Which museums did I visit in the past three months?', now));
  // "last weekend" is how a memory of it may be worded: kept.
  assert.ok(contentTerms('What did I bake last weekend?').some((t) => t.text === 'weekend'));
  // A query that is nothing but a span still searches something.
  assert.ok(contentTerms('What happened five days ago?').length > 0);
});

test('a question that gathers several memories is told from one that one memory answers', () => {
  assert.ok(asksForSeveral('How many concerts did I go to this year?'));
  assert.ok(asksForSeveral('What is the order of the cities I visited?'));
  assert.ok(asksForSeveral('How much did I spend on books in total?'));
  assert.ok(!asksForSeveral('Which concert did I go to last Friday?'));
  assert.ok(!asksForSeveral('What did I order at the ramen place?'));
});
