// One ranking on both stores: the same memories and the same query give the same ranked list on
// the files store and on Postgres — for common and rare words, a query whose common words the
// rare-term narrowing leaves out, a CJK phrase, and memories whose usage weight moves them — and
// each store's lexical relevance is the ranking model's BM25 (core/ranking.ts) to the last digits.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import {
  DEFAULT_RANKING,
  bm25,
  bm25Idf,
  countTokens,
  rankingModel,
  tokenCount,
  type FeedbackChoice,
  type RankingModel,
} from '../src/core/ranking.js';
import { indexText, queryTerms, termTokens, type QueryTerm } from '../src/core/text.js';
import type { Engine } from '../src/engine/engine.js';
import { FileStore } from '../src/store/files/file-store.js';
import type { Store } from '../src/store/port.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { HUMAN, engineFor, testClock, tmpDir } from './helpers.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const skip = await pgSkipReason();
if (skip) console.log(`# skipping the ranking parity tests: ${skip}`);

const PROJECT = 'parity-00000001';
const clock = testClock('2026-03-01T10:00:00.000Z');

// A deterministic corpus: many memories about deploying to production (common words: the
// narrowing leaves them out of the candidate query), a few about rarer things.
function corpus(): { abstract: string; body: string; tags?: string[] }[] {
  let seed = 7;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const filler = ['server', 'release', 'rollback', 'pipeline', 'staging', 'build', 'cache'];
  const out: { abstract: string; body: string; tags?: string[] }[] = [];
  for (let i = 0; i < 180; i++) {
    const words = Array.from({ length: 3 + rnd(12) }, () => filler[rnd(filler.length)]!);
    out.push({
      abstract: `Deploy note ${i}: ${words.slice(0, 3).join(' ')}`,
      body: `We deploy to production ${words.join(' ')}${i % 3 === 0 ? ' production again' : ''}`,
    });
  }
  out.push(
    { abstract: 'Kubernetes deploys go through Argo', body: 'production deploys use kubernetes' },
    { abstract: 'The kubernetes cluster is in Frankfurt', body: 'one cluster, three nodes' },
    {
      abstract: 'Kubernetes upgrades happen on Tuesdays',
      body: 'never deploy kubernetes upgrades on Friday',
      tags: ['kubernetes'],
    },
    { abstract: '東京 office deploys at night', body: '東京 team: deploy after 22:00 JST' },
    { abstract: 'Billing is reconciled weekly', body: 'the finance team reconciles billing' },
    { abstract: 'Billing reports go to finance', body: 'billing reports, monthly' },
  );
  return out;
}

const QUERIES = [
  'deploy production', // common words only
  'kubernetes', // a rare word
  'How do we deploy kubernetes to production?', // rare and common together
  '東京 deploys', // a CJK phrase
  'billing reports for finance', // feedback-weighted pair
  'rollback pipeline staging', // common words, prf on
  'deploys deployed kubernetes', // two forms of one stem: it counts twice on both
  'what is it', // stop words only
];

describe('ranking parity: files and Postgres', { skip: skip ?? false }, () => {
  let db: ThrowawayDb;
  let dir: string;
  let files: FileStore;
  let pg: PostgresStore;
  let ef: Engine;
  let ep: Engine;

  before(async () => {
    db = await throwawayDb(['acme']);
    dir = tmpDir();
    files = await FileStore.open(dir, { durable: false });
    pg = await PostgresStore.open(db.url, { tenant: 'acme' });
    ef = engineFor(files, PROJECT, clock);
    ep = engineFor(pg, PROJECT, clock);
    const ops = corpus().map((m) => ({ op: 'remember' as const, type: 'fact', ...m }));
    for (const e of [ef, ep]) {
      for (let i = 0; i < ops.length; i += 50) await e.apply(ops.slice(i, i + 50), HUMAN);
    }
  });

  after(async () => {
    await files?.close();
    await pg?.close();
    await db?.drop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Every eligible revision of the project, now. */
  const everything = () => ({
    scopes: ef.scopes,
    asOf: clock().toISOString(),
    knownAt: null,
    minTrust: 'untrusted' as const,
    includeQuarantined: false,
  });

  const ranked = async (e: Engine, q: string, limit = 10) =>
    (await e.recall(q, { limit, logUsage: false })).results.map((r) => r.abstract);

  it('gives the same ranked list on both stores for every query', async () => {
    for (const q of QUERIES) {
      const a = await ranked(ef, q);
      const b = await ranked(ep, q);
      assert.ok(a.length > 0, `files finds something for "${q}"`);
      assert.deepEqual(b, a, `same list for "${q}"`);
    }
  });

  it('narrows a query to its rare word the same way on both, and finds the same page', async () => {
    // limit 2: the rare word alone finds enough eligible memories, so "deploy" and
    // "production" (in ~180 rows) are left out of the candidate query and only re-scored.
    const q = 'deploy production kubernetes';
    const a = await ranked(ef, q, 2);
    const b = await ranked(ep, q, 2);
    assert.deepEqual(b, a);
    assert.ok(
      a.every((x) => /kubernetes/i.test(x)),
      'the narrowed query finds the rare word',
    );
    // Without narrowing room (limit 30 > 3 rare matches) the common words find the rest too.
    const wide = await ranked(ef, q, 30);
    assert.deepEqual(await ranked(ep, q, 30), wide);
    assert.ok(
      wide.some((x) => !/kubernetes/i.test(x)),
      'the widened query finds common matches',
    );
  });

  it('lets a usage weight move a memory up, the same on both stores', async () => {
    const q = 'billing reports for finance';
    const before = await ranked(ef, q);
    assert.equal(before[0], 'Billing reports go to finance');
    // Weight the other billing memory up on both stores (what a sleep pass writes after
    // feedback): it now leads on both.
    const target = 'Billing is reconciled weekly';
    await setWeight(files, ef, target, 2);
    await setWeight(pg, ep, target, 2);
    const a = await ranked(ef, q);
    const b = await ranked(ep, q);
    assert.equal(a[0], target, 'the weighted memory moves up');
    assert.deepEqual(b, a);
  });

  it("computes each candidate's relevance as the model's BM25, on both stores", async () => {
    const terms = queryTerms('deploy kubernetes production');
    const eligibility = everything();
    const req = { terms, eligibility, limit: 20, want: 20 };
    const hf = await files.search(req);
    const hp = await pg.search(req);
    assert.equal(hf.length, 20);
    assert.deepEqual(
      hp.map((h) => h.view.abstract),
      hf.map((h) => h.view.abstract),
    );
    for (const [i, h] of hf.entries()) {
      const expected = modelBm25(terms, h.view.abstract, DEFAULT_RANKING);
      assert.ok(Math.abs(h.relevance - expected) < 1e-9, `files: ${h.relevance} vs ${expected}`);
      assert.ok(Math.abs(hp[i]!.relevance - expected) < 1e-9, `postgres: ${hp[i]!.relevance}`);
    }
  });

  it('caps a feedback search at the terms that weigh, the same on both stores', async () => {
    // "production" is in every deploy note (over half the rows): its IDF is at the floor, so a
    // search capped at one term passes it over for "kubernetes"; capped at two, "billing" too.
    const terms = queryTerms('production kubernetes billing');
    const eligibility = everything();
    const texts = async (maxTerms?: number) => {
      // No narrowing, so the cap alone decides which terms are searched.
      const model = rankingModel({ narrowBudgets: [Infinity] });
      const req = { terms, eligibility, limit: 30, want: 0, model, maxTerms };
      const hf = (await files.search(req)).map((h) => `${h.view.abstract} ${h.view.body}`);
      const hp = (await pg.search(req)).map((h) => `${h.view.abstract} ${h.view.body}`);
      assert.deepEqual(hp, hf, `same hits on both stores (maxTerms ${maxTerms})`);
      return hf;
    };
    const one = await texts(1);
    assert.ok(
      one.length > 0 && one.every((t) => /kubernetes/i.test(t)),
      'the first word that weighs',
    );
    assert.ok(!one.some((t) => /billing/i.test(t)), 'the cap holds: one term');
    const two = await texts(2);
    assert.ok(
      two.some((t) => /billing/i.test(t)),
      'capped at two, billing is searched too',
    );
    assert.ok(
      two.every((t) => /kubernetes|billing/i.test(t)),
      'the floor word is never searched',
    );
    // Uncapped, the common word is a term like the others: its rows are candidates.
    const all = await texts(undefined);
    assert.ok(
      all.some((t) => !/kubernetes|billing/i.test(t)),
      'uncapped, production is searched',
    );
  });

  it('chooses a feedback search by frequency × idf, and passes over words only the best matches hold, the same on both stores', async () => {
    // "kubernetes" (3 rows) is offered first, "billing" (2 rows) second, as often.
    const terms = queryTerms('kubernetes billing');
    const eligibility = everything();
    const model = rankingModel({ narrowBudgets: [Infinity] });
    const texts = async (feedback?: FeedbackChoice) => {
      const req = { terms, eligibility, limit: 30, want: 0, model, maxTerms: 1, feedback };
      const hf = (await files.search(req)).map((h) => `${h.view.abstract} ${h.view.body}`);
      const hp = (await pg.search(req)).map((h) => `${h.view.abstract} ${h.view.body}`);
      assert.deepEqual(hp, hf, 'same hits on both stores');
      return hf;
    };
    const only = (ts: string[], word: RegExp) => ts.length > 0 && ts.every((t) => word.test(t));
    const choice = { byIdf: false, outside: false, freq: [1, 1], docs: [1, 1] };
    assert.ok(only(await texts(), /kubernetes/i), 'by offer order: the first word');
    assert.ok(only(await texts(choice), /kubernetes/i), 'a choice that does neither: the same');
    assert.ok(only(await texts({ ...choice, byIdf: true }), /billing/i), 'by idf: the rarer word');
    // kubernetes' three rows are all among the best matches: it can find nothing new.
    const outside = { ...choice, docs: [3, 1] };
    assert.ok(only(await texts({ ...outside, outside: true }), /billing/i), 'passed over');
    assert.ok(only(await texts(outside), /kubernetes/i), 'kept when outside is off');
  });

  it('scores left-out terms by their exact BM25 under leftOut=bm25, the same on both stores', async () => {
    // limit 2: narrowed to "kubernetes"; "deploy" and "production" are left out and re-scored.
    const terms = queryTerms('deploy kubernetes production');
    const eligibility = everything();
    for (const leftOut of ['bm25', 'presence'] as const) {
      const model = rankingModel({ leftOut });
      const req = { terms, eligibility, limit: 2, want: 2, model };
      const hf = await files.search(req);
      const hp = await pg.search(req);
      assert.equal(hf.length, 2);
      assert.ok(hf.every((h) => /kubernetes/i.test(h.view.abstract + h.view.body)));
      assert.deepEqual(
        hp.map((h) => h.view.abstract),
        hf.map((h) => h.view.abstract),
      );
      for (const [i, h] of hf.entries()) {
        const full = modelBm25(terms, h.view.abstract, model);
        assert.ok(Math.abs(hp[i]!.relevance - h.relevance) < 1e-9, `postgres: ${hp[i]!.relevance}`);
        if (leftOut === 'bm25')
          assert.ok(Math.abs(h.relevance - full) < 1e-9, `exact: ${h.relevance} vs ${full}`);
        // Presence reads no counts (the common words' idf is near its floor here, so the gap is
        // small, but it is there): not the unnarrowed score.
        else assert.ok(Math.abs(h.relevance - full) > 1e-9, `presence: ${h.relevance} vs ${full}`);
      }
    }
  });
});

/** The model's BM25 of a corpus memory over every term, from its counts (rows = memories). */
function modelBm25(terms: QueryTerm[], abstract: string, model: RankingModel): number {
  // The model's BM25 from the counts (every memory has one revision: rows = memories).
  const rows = corpus().length;
  const texts = corpus().map((m) => ({
    a: indexText(m.abstract),
    b: indexText(m.body),
    e: indexText(['fact', ...(m.tags ?? [])].join(' ')),
  }));
  const tokens = texts.reduce((n, t) => n + tokenCount(t.a) + tokenCount(t.b) + tokenCount(t.e), 0);
  const stats = { rows, tokens };
  const toks = terms.map(termTokens);
  const df = toks.map(
    (t) => texts.filter((x) => countTokens(`${x.a} ${x.b} ${x.e}`, t) > 0).length,
  );
  const idf = df.map((d) => bm25Idf(rows, d));
  const m = corpus().find((c) => c.abstract === abstract)!;
  const t = {
    a: indexText(m.abstract),
    b: indexText(m.body),
    e: indexText(['fact', ...(m.tags ?? [])].join(' ')),
  };
  const f = {
    length: tokenCount(t.a) + tokenCount(t.b) + tokenCount(t.e),
    tf: toks.map((k) => [countTokens(t.a, k), countTokens(t.b, k), countTokens(t.e, k)] as const),
  };
  return bm25(f, idf, stats, model);
}

/** Sets a memory's usage weight in a store's weight cache (what a sleep pass computes). */
async function setWeight(store: Store, e: Engine, abstract: string, w: number): Promise<void> {
  const hit = (await e.recall(abstract, { limit: 1, logUsage: false })).results[0]!;
  assert.equal(hit.abstract, abstract);
  if (store instanceof FileStore) {
    const index = (
      store as unknown as { index: { setWeights(s: string[], m: Map<string, number>): void } }
    ).index;
    index.setWeights([hit.scope], new Map([[hit.id, w]]));
  } else {
    await (store as PostgresStore).pool.query(
      `INSERT INTO weights(tenant_id, id, w) VALUES ('acme', $1, $2)
       ON CONFLICT (tenant_id, id) DO UPDATE SET w = excluded.w`,
      [hit.id, w],
    );
  }
}
