// The optional vector arm: a vector never brings back what eligibility excludes (superseded,
// other project, retracted, not valid at --as-of), each absence paired with a presence in the
// same fixture; fusion by reciprocal rank; writes never wait for a model; off by default, with
// recall byte-identical and sqlite-vec never loaded. The embedder is the deterministic hashed
// n-gram one, so no model is needed. Queries are misspelt so the lexical arm finds nothing and
// every result below came through the vector arm.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { hashEmbedder, hashVector, type Embedder } from '../src/core/embed.js';
import { fuseRanks } from '../src/core/fusion.js';
import { SchemaRegistry } from '../src/core/schema.js';
import type { Clock } from '../src/core/time.js';
import { Engine } from '../src/engine/engine.js';
import { FileStore } from '../src/store/files/file-store.js';
import { HUMAN, PROJECT_A, PROJECT_B, testClock, tmpDir } from './helpers.js';

const QUERY = 'stagin clustr bluwhale';

function engine(store: FileStore, project: string, clock: Clock, embedder?: Embedder): Engine {
  return new Engine({
    store,
    clock,
    registry: new SchemaRegistry(),
    binding: { project, identity: project },
    surface: 'human',
    ...(embedder ? { embedder } : {}),
  });
}

/** Counts model calls, and fails them while `down` is set. */
function counting(inner: Embedder) {
  const state = { calls: 0, texts: 0, down: false };
  const e: Embedder = {
    model: inner.model,
    dim: inner.dim,
    ...(inner.minSimilarity !== undefined ? { minSimilarity: inner.minSimilarity } : {}),
    embed: async (texts) => {
      if (state.down) throw new Error('model server unreachable');
      state.calls++;
      state.texts += texts.length;
      return inner.embed(texts);
    },
  };
  return { e, state };
}

async function fixture() {
  const dir = tmpDir('mneme-vec-');
  const store = await FileStore.open(dir, { durable: false });
  const clock = testClock('2026-03-01T00:00:00.000Z');
  const { e: embedder, state } = counting(hashEmbedder());
  const a = engine(store, PROJECT_A, clock, embedder);
  const b = engine(store, PROJECT_B, clock, embedder);
  const remember = async (en: Engine, abstract: string, extra: Record<string, unknown> = {}) => {
    clock.advance(60_000);
    const [r] = await en.apply([{ op: 'remember', type: 'fact', abstract, ...extra }], HUMAN);
    return r!.id as string;
  };
  // Superseded: its first revision is the nearest vector to QUERY; the successor stays.
  const moved = await remember(a, 'Deploys go to the staging cluster bluewhale', {
    fields: { subject: 'deploy target' },
  });
  const beforeMove = new Date(clock().getTime() + 30_000).toISOString();
  clock.advance(3_600_000);
  await a.apply(
    [{ op: 'supersede', id: moved, abstract: 'Deploys go to the cluster bluewhale-prod now' }],
    HUMAN,
  );
  // Another project's memory, almost the query verbatim.
  const foreign = await remember(b, 'staging cluster bluewhale credentials rotate weekly');
  // Retracted, also close to the query.
  const gone = await remember(a, 'The staging cluster bluewhale is shared with QA', {
    fields: { subject: 'qa sharing' },
  });
  clock.advance(60_000);
  await a.apply([{ op: 'retract', id: gone }], HUMAN);
  // Eligible and close: must be served.
  const kept = await remember(a, 'Staging cluster bluewhale runs Kubernetes 1.29', {
    fields: { subject: 'k8s version' },
  });
  // Valid only from the future (as-of before it: not served; as-of after it: served).
  const later = await remember(a, 'Staging clusters bluewhale get a new region', {
    valid_from: '2027-01-01T00:00:00.000Z',
    fields: { subject: 'region plan' },
  });
  // Unrelated, eligible: a spelling-level embedder must not match it to the query.
  const unrelated = await remember(a, 'Use pnpm, never npm, in this repository');
  return {
    dir,
    store,
    clock,
    a,
    b,
    state,
    beforeMove,
    ids: { moved, foreign, gone, kept, later, unrelated },
  };
}

const ids = (r: { results: { id: string }[] }) => r.results.map((x) => x.id);
const cos = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * y[i]!, 0);

describe('vector arm: eligibility applies to vector candidates', () => {
  it('a superseded revision nearest to the query stays out; its successor and an eligible neighbour come back', async () => {
    const f = await fixture();
    // The premise: the superseded revision's vector really is the nearest of the fixture's.
    const lineage = (await f.store.getLineage(f.ids.moved))!;
    const q = hashVector(QUERY, 256);
    const old = cos(q, hashVector(lineage[0]!.abstract, 256));
    const successor = cos(q, hashVector(lineage[1]!.abstract, 256));
    const keptSim = cos(q, hashVector('Staging cluster bluewhale runs Kubernetes 1.29', 256));
    assert.ok(old > successor && old > keptSim, `rev 1 is the nearest (${old} vs ${keptSim})`);

    await f.b.recall(QUERY); // project B's memories get their vectors
    const r = await f.a.recall(QUERY, { explain: true });
    const moved = r.results.find((x) => x.id === f.ids.moved);
    assert.ok(moved, 'the memory is served');
    assert.equal(moved.rev, 2, 'by its successor revision, never the superseded one');
    assert.equal(moved.abstract, 'Deploys go to the cluster bluewhale-prod now');
    assert.ok(ids(r).includes(f.ids.kept), 'an eligible neighbour is served');
    for (const x of r.results) {
      assert.equal(x.explain?.fusion?.lexical_rank, null, 'the lexical arm found nothing');
      assert.equal(typeof x.explain?.fusion?.vector_rank, 'number');
    }
    assert.equal(r.vector?.error, undefined);
    assert.ok(r.vector!.candidates >= 2);
    // --explain names what the vector arm saw but did not serve, and why.
    const excluded = new Map(r.excluded!.map((x) => [x.id, x]));
    // Another project's memory is never named, even though its vector is near.
    assert.ok(!excluded.has(f.ids.foreign), "another project's memory is not named");
    assert.equal(excluded.get(f.ids.gone)?.reason, 'retracted');
    assert.equal(excluded.get(f.ids.later)?.reason, 'not_yet_valid');
    assert.ok(!excluded.has(f.ids.kept), 'a served memory is not listed');
    const plain = await engine(f.store, PROJECT_A, f.clock).recall(QUERY, { explain: true });
    assert.deepEqual(
      plain.excluded,
      [],
      'lexically nothing matched, so the trace came from vectors',
    );
  });

  it('another project, a retracted memory and an unrelated one stay out; the eligible ones are in', async () => {
    const f = await fixture();
    const r = await f.a.recall(QUERY);
    assert.ok(!ids(r).includes(f.ids.foreign), 'no other project');
    assert.ok(!ids(r).includes(f.ids.gone), 'no retracted memory');
    assert.ok(!ids(r).includes(f.ids.unrelated), 'below the similarity floor');
    assert.ok(!ids(r).includes(f.ids.later), 'not yet valid now');
    assert.ok(ids(r).includes(f.ids.kept));
    // From project B the foreign memory is eligible, and comes back by vector.
    const rb = await f.b.recall(QUERY);
    assert.ok(ids(rb).includes(f.ids.foreign));
    assert.ok(!ids(rb).includes(f.ids.kept), 'and project A stays out of B');
  });

  it('--as-of: before the supersession the first revision is served, not the successor; a future fact only after it starts', async () => {
    const f = await fixture();
    const then = await f.a.recall(QUERY, { asOf: f.beforeMove });
    const moved = then.results.find((x) => x.id === f.ids.moved);
    assert.equal(moved?.rev, 1, 'what held then');
    assert.ok(!ids(then).includes(f.ids.later));
    const future = await f.a.recall(QUERY, { asOf: '2027-06-01T00:00:00.000Z' });
    assert.ok(ids(future).includes(f.ids.later));
    assert.equal(future.results.find((x) => x.id === f.ids.moved)?.rev, 2);
  });

  it('the store-level vector search applies the predicate itself', async () => {
    const f = await fixture();
    await f.a.indexVectors();
    const vs = await f.store.vectors();
    const key = 'hash:ngram3-4#256';
    const eligibility = {
      scopes: [PROJECT_A, 'global'],
      asOf: '2026-06-01T00:00:00.000Z',
      knownAt: null,
      minTrust: 'untrusted' as const,
      includeQuarantined: false,
    };
    const hits = await vs.search(key, hashVector(QUERY, 256), eligibility, 50);
    const keys = hits.map((h) => `${h.view.id}#${h.view.rev}`);
    assert.ok(keys.includes(`${f.ids.moved}#2`) && !keys.includes(`${f.ids.moved}#1`));
    assert.ok(keys.includes(`${f.ids.kept}#1`) && !keys.includes(`${f.ids.gone}#1`));
    assert.ok(!hits.some((h) => h.view.scope === PROJECT_B));
    // Known-at before the supersession, the first revision was what the store believed.
    const known = await vs.search(
      key,
      hashVector(QUERY, 256),
      { ...eligibility, asOf: f.beforeMove, knownAt: f.beforeMove },
      50,
    );
    const knownKeys = known.map((h) => `${h.view.id}#${h.view.rev}`);
    assert.ok(knownKeys.includes(`${f.ids.moved}#1`) && !knownKeys.includes(`${f.ids.moved}#2`));
    assert.ok(
      hits.every((h, i) => i === 0 || h.distance >= hits[i - 1]!.distance),
      'nearest first',
    );
  });
});

describe('vector arm: fusion', () => {
  it('reciprocal rank fusion sums 1/(k+rank) over the lists that hold a key', () => {
    const f = fuseRanks(['a', 'b', 'c'], ['c', 'd']);
    assert.deepEqual([...f.keys()], ['c', 'a', 'b', 'd']);
    assert.deepEqual(f.get('c'), { lexical: 3, vector: 1, score: 1 / 63 + 1 / 61 });
    assert.deepEqual(f.get('d'), { lexical: null, vector: 2, score: 1 / 62 });
    assert.deepEqual(f.get('a'), { lexical: 1, vector: null, score: 1 / 61 });
  });

  it('a memory both arms find outranks one only the lexical arm ranks first', async () => {
    const dir = tmpDir('mneme-vec-');
    const store = await FileStore.open(dir, { durable: false });
    const clock = testClock('2026-03-01T00:00:00.000Z');
    const e = engine(store, PROJECT_A, clock, hashEmbedder());
    const off = engine(store, PROJECT_A, clock);
    await e.apply(
      [
        { op: 'remember', type: 'fact', abstract: 'retries retries retries for payments' },
        {
          op: 'remember',
          type: 'fact',
          abstract: 'Payment retries use exponential backoff',
          fields: { subject: 'backoff' },
        },
      ],
      HUMAN,
    );
    const q = 'payment retries exponential backoff';
    const lexical = await off.recall(q, { explain: true });
    const fused = await e.recall(q, { explain: true });
    assert.equal(fused.results[0]!.abstract, 'Payment retries use exponential backoff');
    const top = fused.results[0]!.explain!.fusion!;
    assert.equal(top.vector_rank, 1);
    assert.equal(typeof top.lexical_rank, 'number');
    assert.equal(
      lexical.results[0]!.explain!.fusion,
      undefined,
      'no fusion parts with the arm off',
    );
  });
});

describe('vector arm: writes, rebuild, off by default', () => {
  it('writes never call the model; a model that is down leaves recall lexical and is caught up later', async () => {
    const f = await fixture();
    assert.equal(f.state.calls, 0, 'no write embedded anything');
    f.state.down = true;
    f.clock.advance(60_000);
    const [w] = await f.a.apply(
      [{ op: 'remember', type: 'fact', abstract: 'Staging cluster bluewhale backups run nightly' }],
      HUMAN,
    );
    assert.ok(w!.id, 'the write succeeded with the model down');
    const r = await f.a.recall('bluewhale backups');
    assert.match(r.vector!.error!, /embedder failed: model server unreachable/);
    assert.ok(ids(r).includes(w!.id as string), 'lexical recall still finds it');
    f.state.down = false;
    const unfilled = await f.a.recall('bluwhale backupz nitely', { vectorFill: 0 });
    assert.ok(!ids(unfilled).includes(w!.id as string), 'vectorFill 0: not embedded yet');
    assert.equal(unfilled.vector!.filled, 0);
    const vectorOnly = await f.a.recall('bluwhale backupz nitely');
    assert.ok(
      ids(vectorOnly).includes(w!.id as string),
      'filled and found by vector once the model is back',
    );
    const status = await f.a.status();
    assert.deepEqual(status.vector, {
      on: true,
      embedder: 'hash:ngram3-4#256',
      revisions: 7,
      withVector: 7,
    });
  });

  it('rebuild keeps the vectors without asking the model, and drops one whose text changed', async () => {
    const f = await fixture();
    const first = await f.a.indexVectors();
    assert.equal(first.error, undefined);
    assert.equal(first.withVector, first.revisions);
    const calls = f.state.texts;
    const report = await f.a.rebuild();
    assert.equal(report.vectors?.embedded, 0, 'nothing re-embedded');
    assert.equal(report.vectors?.withVector, first.withVector);
    assert.equal(f.state.texts, calls);
    // A stored vector whose text hash no longer matches (a damaged cache) is dropped and redone.
    const db = new Database(f.store.layout.indexFile);
    db.prepare("UPDATE vec SET hash = 'x' WHERE id = ?").run(f.ids.kept);
    db.close();
    const again = await f.a.rebuild();
    assert.equal(again.vectors?.pruned, 1);
    assert.equal(again.vectors?.embedded, 1);
    assert.equal(again.vectors?.withVector, first.withVector);
  });

  it('an identical text is embedded once', async () => {
    const f = await fixture();
    await f.a.indexVectors();
    const before = f.state.texts;
    f.clock.advance(60_000);
    await f.a.apply(
      [
        {
          op: 'remember',
          type: 'fact',
          abstract: 'Use pnpm, never npm, in this repository',
          global: true,
        },
      ],
      HUMAN,
    );
    const r = await f.a.indexVectors();
    assert.equal(r.reused, 1);
    assert.equal(r.embedded, 0);
    assert.equal(f.state.texts, before);
  });

  it('with the arm off recall is byte-identical, and sqlite-vec is never loaded', async () => {
    const f = await fixture();
    const reopen = async () => FileStore.open(f.dir, { durable: false });
    const fresh = await reopen();
    const offBefore = JSON.stringify(
      await engine(fresh, PROJECT_A, f.clock).recall('staging cluster bluewhale', {
        explain: true,
        logUsage: false,
      }),
    );
    assert.equal(fresh.vectorArmLoaded, false);
    await fresh.close();
    // The arm fills vectors, then is turned off again.
    await f.a.indexVectors();
    const on = await f.a.recall('staging cluster bluewhale', { logUsage: false });
    assert.ok(on.vector, 'the arm was on');
    const after = await reopen();
    const offAfter = JSON.stringify(
      await engine(after, PROJECT_A, f.clock).recall('staging cluster bluewhale', {
        explain: true,
        logUsage: false,
      }),
    );
    assert.equal(offAfter, offBefore);
    assert.ok(!offAfter.includes('"vector"') && !offAfter.includes('fusion'));
    assert.equal(after.vectorArmLoaded, false);
    assert.deepEqual((await engine(after, PROJECT_A, f.clock).status()).vector, { on: false });
    await after.close();
  });

  it('a store never used with the arm has no vector table', async () => {
    const dir = tmpDir('mneme-vec-');
    const store = await FileStore.open(dir, { durable: false });
    const e = engine(store, PROJECT_A, testClock());
    await e.apply([{ op: 'remember', type: 'fact', abstract: 'a plain fact' }], HUMAN);
    assert.equal((await e.recall('plain fact')).results.length, 1);
    await store.close();
    const db = new Database(store.layout.indexFile, { readonly: true });
    const t = db.prepare("SELECT name FROM sqlite_master WHERE name = 'vec'").get();
    db.close();
    assert.equal(t, undefined);
    assert.ok(fs.existsSync(dir));
  });
});
