// The ranking model's pure parts: time windows named by queries, feedback terms, the index
// tokens, BM25 and its narrowing, the re-ranking factors, moment support.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BM25_IDF_FLOOR,
  DEFAULT_RANKING,
  bm25,
  bm25Idf,
  bm25Term,
  leftOutScore,
  countTokens,
  feedbackTerms,
  feedbackWords,
  momentSupport,
  narrowTerms,
  narrowingPlan,
  rankCandidates,
  rankingModel,
  scoreCandidate,
  termWeighs,
  termsThatWeigh,
  tokenCount,
  type FeedbackChoice,
  type FieldCounts,
  type LexicalFeatures,
} from '../src/core/ranking.js';
import {
  STOP_WORDS,
  asksForSeveral,
  contentTerms,
  ftsMatchExpression,
  indexText,
  queryTerms,
  timeWindow,
  uniqueTerms,
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

test('a text is indexed and searched as the same stemmed tokens', () => {
  assert.equal(indexText('Deploying to Production, naïvely!'), 'deploi to product naiv');
  assert.equal(indexText('東京 tower2 x_y'), '東 京 tower2 x y');
  // The query side is the same tokenizer: its stems match the indexed ones.
  const terms = queryTerms('deployed production 東京');
  assert.equal(ftsMatchExpression(terms), '"deploi" OR "product" OR "東 京"');
  // Each word of the query is a term, two words with one stem too: BM25 sums over the query's
  // words (query term frequency), so "deploys … deployed" weighs that stem twice. A word given
  // twice is one term, and a word with no index tokens none.
  const unique = uniqueTerms([
    ...queryTerms('deploy deploys deployed'),
    { text: 'deploy', phrase: false },
    { text: '!', phrase: false },
  ]);
  assert.deepEqual(
    unique.map((t) => t.text),
    ['deploy', 'deploys', 'deployed'],
  );
  assert.equal(ftsMatchExpression(unique), '"deploi" OR "deploi" OR "deploi"');
  assert.equal(ftsMatchExpression(queryTerms('!!!')), null);
});

test('a token text counts words and phrases only at token boundaries', () => {
  const text = 'deploi product deploi prod 東 京 東';
  assert.equal(countTokens(text, ['deploi']), 2);
  assert.equal(countTokens(text, ['prod']), 1, 'a prefix of a longer token is not a match');
  assert.equal(countTokens(text, ['東', '京']), 1);
  assert.equal(countTokens(text, ['京', '東']), 1);
  assert.equal(countTokens('', ['x']), 0);
  assert.equal(tokenCount(text), 7);
  assert.equal(tokenCount(''), 0);
});

test('BM25: rarer terms weigh more, the abstract more than the body, longer rows less', () => {
  const stats = { rows: 100, tokens: 1000 };
  assert.ok(bm25Idf(100, 1) > bm25Idf(100, 30));
  assert.equal(bm25Idf(100, 80), BM25_IDF_FLOOR, 'a term in most rows still counts a little');
  const idf = [bm25Idf(100, 5)];
  const m = DEFAULT_RANKING;
  const inAbstract: LexicalFeatures = { length: 10, tf: [[1, 0, 0]] };
  const inBody: LexicalFeatures = { length: 10, tf: [[0, 1, 0]] };
  const inLongBody: LexicalFeatures = { length: 100, tf: [[0, 1, 0]] };
  const absent: LexicalFeatures = { length: 10, tf: [[0, 0, 0]] };
  assert.ok(bm25(inAbstract, idf, stats, m) > bm25(inBody, idf, stats, m));
  assert.ok(bm25(inBody, idf, stats, m) > bm25(inLongBody, idf, stats, m));
  assert.equal(bm25(absent, idf, stats, m), 0);
  // The field weights are the model's: a variant with equal weights ranks the two the same.
  const flat = rankingModel({ abstractWeight: 1 });
  assert.equal(bm25(inAbstract, idf, stats, flat), bm25(inBody, idf, stats, flat));
});

test('narrowing keeps the rarest terms within each budget, widening to every term', () => {
  const m = DEFAULT_RANKING;
  // "deploy" is rare, "production" and "server" are common.
  const df = [20, 900, 400];
  const phrase = [false, false, false];
  assert.deepEqual(narrowTerms(df, phrase, 150), [0]);
  assert.deepEqual(narrowTerms(df, phrase, 800), [0, 2]);
  assert.equal(narrowTerms(df, phrase, 3000), null, 'everything fits: no narrowing');
  assert.deepEqual(narrowingPlan(df, phrase, 10, m), [[0], [0, 2], null]);
  // Feedback (want 0) only ever tries the first budget.
  assert.deepEqual(narrowingPlan(df, phrase, 0, m), [[0]]);
  // A phrase counts as rare: never left out.
  assert.deepEqual(narrowTerms([20, 900, 400], [false, true, false], 150), [0, 1]);
  // A narrowed query that cannot find `want` rows is not run: its terms hold too few rows…
  assert.deepEqual(narrowingPlan(df, phrase, 100, m), [[0, 2], null]);
  // …or the store does.
  assert.deepEqual(narrowingPlan(df, phrase, 100, m, 50), [null]);
  // A store small enough for every term is never narrowed.
  assert.deepEqual(narrowingPlan([3, 4], [false, false], 10, m), [null]);
});

test('a capped (feedback) search keeps the first terms that weigh: a word in over half the rows gives its place up', () => {
  // 1000 rows: "photo" (600) and "john" (1000) have an IDF at the floor; the rest weigh.
  const rows = 1000;
  const df = [600, 40, 1000, 12, 300, 7];
  const phrase = [false, false, false, false, false, false];
  assert.equal(termWeighs(rows, 600, false), false);
  assert.equal(termWeighs(rows, 499, false), true);
  // A phrase's rows do not decide (the embedded index does not count them): it always weighs.
  assert.equal(termWeighs(rows, 0, true), true);
  assert.equal(termWeighs(rows, 1000, true), true);
  // Three places: the floor words are passed over and the next that weigh take them, in order.
  assert.deepEqual(termsThatWeigh(df, phrase, rows, 3), [1, 3, 4]);
  // The cap holds among words that all weigh too…
  assert.deepEqual(termsThatWeigh([40, 12, 300], [false, false, false], rows, 2), [0, 1]);
  // …and when every term weighs and fits, nothing is dropped (null: the request as it is).
  assert.equal(termsThatWeigh([40, 12, 300], [false, false, false], rows, 10), null);
  // A phrase is kept where a word as common would not be.
  assert.deepEqual(termsThatWeigh([900, 900], [true, false], rows, 2), [0]);
  // Nothing weighs: an empty search.
  assert.deepEqual(termsThatWeigh([600, 1000], [false, false], rows, 10), []);
});

test('a feedback search chosen by idf keeps the words that weigh most, in the request order', () => {
  const rows = 1000;
  const phrase = [false, false, false, false];
  // Offered most frequent first: "great" (df 400) is frequent, "skewers" rare, "photo" a floor word.
  const df = [400, 600, 30, 5];
  const freq = [0.5, 0.45, 0.3, 0.1];
  const docs = [3, 3, 2, 2];
  const by = (over: Partial<FeedbackChoice>) => ({
    byIdf: false,
    outside: false,
    freq,
    docs,
    ...over,
  });
  // By offer order (no choice, or one that does neither): the first two that weigh.
  assert.deepEqual(termsThatWeigh(df, phrase, rows, 2), [0, 2]);
  assert.deepEqual(termsThatWeigh(df, phrase, rows, 2, by({})), [0, 2]);
  // By frequency × idf: 0.5 × 0.40 = 0.20, 0.3 × 3.49 = 1.05, 0.1 × 5.28 = 0.53 — the frequent
  // common word gives its place to the rare one; the floor word is never chosen.
  assert.deepEqual(termsThatWeigh(df, phrase, rows, 2, by({ byIdf: true })), [2, 3]);
  assert.deepEqual(termsThatWeigh(df, phrase, rows, 1, by({ byIdf: true })), [2]);
  // Outside the best matches: a word no other row holds (df 2 ≤ the 2 matches holding it) finds
  // nothing new and is passed over; one that other rows hold stays.
  const inside = [400, 600, 30, 2];
  assert.deepEqual(termsThatWeigh(inside, phrase, rows, 3, by({ outside: true })), [0, 2]);
  assert.deepEqual(termsThatWeigh(inside, phrase, rows, 3, by({})), [0, 2, 3]);
  // A phrase's rows are not counted: it is never passed over as inside, and ranks as the rarest.
  assert.deepEqual(
    termsThatWeigh([0, 30], [true, false], rows, 1, {
      byIdf: true,
      outside: true,
      freq: [0.2, 0.3],
      docs: [3, 2],
    }),
    [0],
  );
});

test('feedback words counted by relevance: a weaker best match counts for less', () => {
  const docs = [
    ['garden', 'tomato', 'basil'],
    ['garden', 'cocktail', 'tomato'],
    ['cocktail', 'garden', 'basil'],
  ];
  const plain = feedbackWords(docs, new Set(), STOP_WORDS, 5);
  // Uniform: garden (3 matches) first, then basil, cocktail and tomato (two each) by name.
  assert.deepEqual(
    plain.map((x) => x.word),
    ['garden', 'basil', 'cocktail', 'tomato'],
  );
  assert.deepEqual(
    plain.map((x) => x.docs),
    [3, 2, 2, 2],
  );
  // The first match weighs most: its words (tomato, basil) come before cocktail.
  const weighted = feedbackWords(docs, new Set(), STOP_WORDS, 5, [1, 0.9, 0.2]);
  assert.deepEqual(
    weighted.map((x) => x.word),
    ['garden', 'tomato', 'basil', 'cocktail'],
  );
  assert.deepEqual(feedbackTerms(docs, new Set(), STOP_WORDS, 5), [
    'garden',
    'basil',
    'cocktail',
    'tomato',
  ]);
});

test('ranking candidates: a narrowed cut adds the left-out terms; ties go to the smaller id', () => {
  const stats = { rows: 1000, tokens: 20000 };
  const idf = [bm25Idf(1000, 10), bm25Idf(1000, 300)];
  const m = rankingModel({ narrowCandidates: 2, leftOut: 'presence' });
  const c = (id: string, tf: [number, number, number][], length = 20) => ({
    id,
    rev: 1,
    features: { length, tf } as LexicalFeatures,
  });
  const cands = [
    c('a', [
      [0, 1, 0],
      [0, 0, 0],
    ]),
    c('b', [
      [0, 1, 0],
      [1, 0, 0],
    ]), // rare and common: best once the common term is counted
    c(
      'c',
      [
        [0, 1, 0],
        [0, 0, 0],
      ],
      10,
    ), // shorter: best on the rare term alone
    c('d', [
      [0, 1, 0],
      [0, 0, 0],
    ]), // ties with a
  ];
  const full = rankCandidates(cands, null, idf, stats, m, 4).map((x) => x.id);
  assert.deepEqual(full, ['b', 'c', 'a', 'd']);
  // Narrowed to the rare term, the cut (narrowCut: max(2 × limit, 2) = 2) keeps the best 2 by
  // it — c, then a over d by id — so b, best over every term, is not among them…
  const narrowed = rankCandidates(cands, [0], idf, stats, m, 1);
  assert.deepEqual(
    narrowed.map((x) => x.id),
    ['c'],
  );
  assert.equal(rankCandidates(cands, null, idf, stats, m, 1)[0]!.id, 'b');
  // …and with room for all, the left-out common term puts b back on top: it counts as its idf
  // times the weight of the heaviest field holding it (the abstract).
  const wide = rankCandidates(cands, [0], idf, stats, m, 4);
  assert.deepEqual(
    wide.map((x) => x.id),
    full,
  );
  const b = cands[1]!;
  assert.equal(
    wide[0]!.score,
    bm25(b.features, idf, stats, m, [0]) + leftOutScore([1, 0, 0], idf[1]!, m, 20, stats),
  );
  assert.equal(leftOutScore([1, 0, 0], 2, m, 20, stats), 2 * m.abstractWeight);
  assert.equal(
    leftOutScore([0, 3, 1], 2, m, 20, stats),
    2 * m.extraWeight,
    'the heaviest field holding it',
  );
  assert.equal(leftOutScore([0, 0, 0], 2, m, 20, stats), 0);
});

test('the left-out variants: presence, one saturated occurrence, exact BM25', () => {
  const stats = { rows: 1000, tokens: 20000 }; // average length 20
  const idf = 2;
  const presence = rankingModel({ leftOut: 'presence' });
  const saturated = rankingModel();
  const exact = rankingModel({ leftOut: 'bm25' });
  assert.equal(saturated.leftOut, 'saturated', 'the default');
  // Twice in the body and once in the abstract of a 40-token candidate.
  const tf: [number, number, number] = [1, 2, 0];
  assert.equal(leftOutScore(tf, idf, presence, 40, stats), idf * presence.abstractWeight);
  // One occurrence in the abstract at the average length: saturated, so below presence.
  const one = bm25Term(saturated.abstractWeight, 20, stats, idf);
  assert.equal(leftOutScore(tf, idf, saturated, 40, stats), one);
  assert.ok(one < idf * saturated.abstractWeight && one > idf);
  // Presence only: the counts and the length do not matter to either.
  assert.equal(leftOutScore([1, 0, 0], idf, saturated, 5, stats), one);
  // Exact: the weighted count (4 + 2) at the candidate's length, as an unnarrowed query scores it.
  const f = { length: 40, tf: [tf] as FieldCounts[] };
  assert.equal(leftOutScore(tf, idf, exact, 40, stats), bm25(f, [idf], stats, exact));
  assert.ok(leftOutScore(tf, idf, exact, 80, stats) < leftOutScore(tf, idf, exact, 40, stats));
  for (const m of [presence, saturated, exact])
    assert.equal(
      leftOutScore([0, 0, 0], idf, m, 40, stats),
      0,
      `${m.leftOut}: absent adds nothing`,
    );
});

test('exact left-out scoring makes a narrowed cut rank as the unnarrowed query does', () => {
  const stats = { rows: 1000, tokens: 20000 };
  const idf = [bm25Idf(1000, 5), bm25Idf(1000, 400)];
  const c = (id: string, tf: [number, number, number][], length: number) => ({
    id,
    rev: 1,
    features: { length, tf } as LexicalFeatures,
  });
  // x: the common term three times in a long body; y: once in a short abstract.
  const cands = [
    c(
      'x',
      [
        [0, 1, 0],
        [0, 3, 0],
      ],
      60,
    ),
    c(
      'y',
      [
        [0, 1, 0],
        [1, 0, 0],
      ],
      12,
    ),
    c(
      'z',
      [
        [0, 1, 0],
        [0, 0, 0],
      ],
      20,
    ),
  ];
  for (const leftOut of ['bm25', 'presence'] as const) {
    const m = rankingModel({ leftOut });
    const full = rankCandidates(cands, null, idf, stats, m, 3);
    const narrowed = rankCandidates(cands, [0], idf, stats, m, 3);
    if (leftOut === 'bm25')
      narrowed.forEach((x, i) => {
        assert.equal(x.id, full[i]!.id);
        assert.ok(Math.abs(x.score - full[i]!.score) < 1e-9, 'the same score');
      });
    // Presence reads no counts and no length: it overweighs the abstract, and differs.
    else
      assert.notDeepEqual(
        narrowed.map((x) => x.score),
        full.map((x) => x.score),
      );
  }
});

test('re-ranking: weight, recency and trust are bounded factors of the model', () => {
  const nowMs = Date.parse(now);
  const base = { relevance: 2, weight: 1, recordedAt: now, trust: 'claimed' as const };
  const fresh = scoreCandidate(base, nowMs);
  assert.equal(fresh.score, 2 * 1 * 1 * DEFAULT_RANKING.trustFactors[1]!);
  const old = scoreCandidate({ ...base, recordedAt: '2022-12-30T12:00:00.000Z' }, nowMs);
  assert.ok(old.recency < 1 && old.recency > DEFAULT_RANKING.recencyFloor);
  // Feedback weight is clamped: a huge weight cannot drown relevance.
  assert.equal(scoreCandidate({ ...base, weight: 50 }, nowMs).weight, DEFAULT_RANKING.weightMax);
  assert.equal(scoreCandidate({ ...base, weight: 0 }, nowMs).weight, DEFAULT_RANKING.weightMin);
  // A variant model changes the factor; the default is untouched (no shared state).
  const flat = rankingModel({ recencyFloor: 1 });
  assert.equal(
    scoreCandidate({ ...base, recordedAt: '2020-01-01T00:00:00.000Z' }, nowMs, flat).recency,
    1,
  );
  assert.ok(scoreCandidate({ ...base, recordedAt: '2020-01-01T00:00:00.000Z' }, nowMs).recency < 1);
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
