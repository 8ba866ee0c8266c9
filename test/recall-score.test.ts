// Recall's `score` is on a 0–1 scale that does not drift with the store's size (core/
// match-score.ts): the same exact-match query scores its memory the same on a three-memory store
// and after hundreds of unrelated memories are added, while the ranking model's raw score (shown
// by --explain) moves with the store. An unrelated memory that shares a word scores low; both
// stores give the same figures. Asked through the CLI binary.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { openEngine } from '../src/surfaces/compose.js';
import { cli, gitRepo, HUMAN, tmpDir } from './helpers.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const pgSkip = await pgSkipReason();

const TARGET = 'The orders service keeps invoices in the Postgres ledger schema';
const NEAR = 'Nightly backups copy the ledger to cold storage';
const OTHER = 'Frontend builds run with Vite and pnpm';
const QUERY = 'orders service invoices postgres ledger schema';

interface Hit {
  id: string;
  abstract: string;
  score: number;
  explain: { score: number };
}

const WORDS = (
  'alpha bravo kestrel harbor lantern meadow quartz saffron timber velvet walnut yonder ' +
  'copper dune ember fjord glacier hollow island juniper'
).split(' ');

/** A filler memory unrelated to the query (none of its words). */
const filler = (i: number) =>
  `${WORDS[i % WORDS.length]} ${WORDS[(i * 7 + 3) % WORDS.length]} note ${i} about ${WORDS[(i * 3 + 1) % WORDS.length]} rotas`;

function scenario(o: { home: string; repo: string; flags: string[]; openFlags: object }) {
  const run = (args: string[]) => {
    const r = cli([...o.flags, ...args], { home: o.home, cwd: o.repo });
    assert.equal(r.code, 0, r.stderr);
    return r;
  };
  const remember = (abstract: string) =>
    run(['remember', '--type', 'fact', '--abstract', abstract, '--json']).json().id as string;
  const recall = () =>
    run(['recall', ...QUERY.split(' '), '--explain', '--json']).json().results as Hit[];
  return async () => {
    const target = remember(TARGET);
    const near = remember(NEAR);
    remember(OTHER);
    const small = recall();
    const t1 = small.find((h) => h.id === target)!;
    const n1 = small.find((h) => h.id === near)!;
    // Every query term is in the target's abstract: full marks; the near memory shares one
    // term of six ("ledger"): low. The memory sharing none is not a result at all.
    assert.ok(t1.score >= 0.99 && t1.score <= 1, `target ${t1.score}`);
    assert.ok(n1.score > 0 && n1.score < 0.25, `near ${n1.score}`);
    assert.equal(small.length, 2);

    // Three hundred unrelated memories (one batch through the write path).
    const engine = await openEngine({ ...o.openFlags, cwd: o.repo, env: { MNEME_DURABLE: '0' } });
    try {
      await engine.apply(
        Array.from({ length: 300 }, (_, i) => ({
          op: 'remember' as const,
          type: 'fact',
          abstract: filler(i),
        })),
        HUMAN,
      );
    } finally {
      await engine.close();
    }
    const large = recall();
    const t2 = large.find((h) => h.id === target)!;
    const n2 = large.find((h) => h.id === near)!;
    assert.ok(Math.abs(t2.score - t1.score) <= 0.01, `target ${t1.score} → ${t2.score}`);
    assert.ok(Math.abs(n2.score - n1.score) <= 0.01, `near ${n1.score} → ${n2.score}`);
    // The ranking's raw score, which orders results, does move with the store (the drift the
    // displayed score is free of) — and the order is unchanged.
    assert.ok(
      t2.explain.score > t1.explain.score * 2,
      `raw ${t1.explain.score} → ${t2.explain.score}`,
    );
    assert.deepEqual(
      large.map((h) => h.id),
      [target, near],
    );
    return { target: t2.score, near: n2.score };
  };
}

describe('recall score: 0–1, the same whatever the store holds', () => {
  const figures: Record<string, { target: number; near: number }> = {};

  it('files: an exact match scores 1 on 3 memories and after 300 more; an unrelated one low', async () => {
    const home = tmpDir('mneme-score-');
    const repo = gitRepo('git@example.com:acme/score.git');
    figures.files = await scenario({ home, repo, flags: [], openFlags: { store: home } })();
  });

  let db: ThrowawayDb | undefined;
  after(async () => {
    await db?.drop();
  });
  it('postgres: the same figures as the files store', { skip: pgSkip ?? false }, async () => {
    db = await throwawayDb(['acme']);
    const home = tmpDir('mneme-score-pg-');
    const repo = gitRepo('git@example.com:acme/score.git');
    figures.postgres = await scenario({
      home,
      repo,
      flags: ['--db', db.url, '--tenant', 'acme'],
      openFlags: { db: db.url, tenant: 'acme' },
    })();
    if (figures.files) assert.deepEqual(figures.postgres, figures.files);
  });
});
