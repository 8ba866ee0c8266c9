// Sleep (issue 5 part 2): rule-only steps are applied and journaled as actor sleep; inferred
// ones wait as proposals (nothing is retracted, merged or split without a person); nothing is
// linked or merged across scopes; a second pass with no new usage changes nothing; the weight
// cache after a rebuild equals the one before it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleepReport } from '../src/engine/sleep.js';
import { FileStore } from '../src/store/files/file-store.js';
import { AGENT, HUMAN, PROJECT_A, PROJECT_B, engineFor, testClock, tmpDir } from './helpers.js';

async function fixture() {
  const dir = tmpDir();
  const store = await FileStore.open(dir, { durable: false });
  const clock = testClock('2026-01-01T00:00:00.000Z');
  const a = engineFor(store, PROJECT_A, clock);
  const b = engineFor(store, PROJECT_B, clock);
  const rem = async (e: typeof a, abstract: string, extra: Record<string, unknown> = {}) => {
    clock.advance(1000);
    return (await e.apply([{ op: 'remember', type: 'fact', abstract, ...extra }], AGENT))[0]!;
  };
  return { dir, store, clock, a, b, rem };
}

const active = async (e: ReturnType<typeof engineFor>) =>
  new Set((await e.memories()).filter((v) => v.scope !== 'global').map((v) => v.id));

describe('sleep', () => {
  it('retracts an exact duplicate (older kept) but never across projects; inferred steps are proposals only', async () => {
    const { a, b, rem } = await fixture();
    const d1 = await rem(a, 'Builds run on the self-hosted runner');
    const d2 = await rem(a, 'builds run on the  self-hosted runner!');
    const other = await rem(b, 'Builds run on the self-hosted runner');
    const n1 = await rem(a, 'The staging cluster lives in Frankfurt today');
    const n2 = await rem(a, 'Today the staging cluster lives in Frankfurt');
    const c1 = await rem(a, 'Payments service uses Stripe', { fields: {} });
    const c2 = await rem(a, 'Payments service uses Adyen');
    const big = await rem(a, 'Release checklist notes', {
      body: '- Tags are signed by the release manager.\n- Changelog entries come from PR titles.\n- Docker images are pushed to GHCR.\n- Rollbacks need two approvals.',
    });
    const r = await a.sleep();
    const ids = await active(a);
    assert.ok(ids.has(d1.id), 'the older duplicate is kept');
    assert.ok(!ids.has(d2.id), 'the newer duplicate is retracted');
    const h = await a.history(d2.id);
    assert.equal(h.revisions.at(-1)!.actor.kind, 'sleep');
    assert.match(h.revisions.at(-1)!.reason ?? '', /exact duplicate of/);
    // Another project's identical memory is untouched (and B's own pass finds nothing to merge).
    assert.ok((await active(b)).has(other.id));
    // Inferred: proposals only, and every target still active.
    const props = await a.proposals({ state: 'pending' });
    const kinds = props.map((p) => p.kind).sort();
    assert.deepEqual(kinds, ['conflict', 'merge', 'split']);
    for (const id of [n1.id, n2.id, c1.id, c2.id, big.id])
      assert.ok(ids.has(id), `${id} still active`);
    assert.ok(props.every((p) => p.scope === PROJECT_A && p.created_by.kind === 'sleep'));
    const merge = props.find((p) => p.kind === 'merge')!;
    assert.deepEqual([...merge.targets].sort(), [n1.id, n2.id].sort());
    assert.ok(
      ((merge.draft as { accept: { op: string; abstract?: string }[] }).accept[0]!.abstract ?? '')
        .length > 0,
    );
    assert.equal((await b.proposals({})).length, 0);
    assert.match(sleepReport(r), /Exact duplicates retracted \(the older memory is kept\) \(1\)/);
  });

  it('caps proposals per kind per pass', async () => {
    const { a, rem } = await fixture();
    for (let i = 0; i < 4; i++) {
      await rem(a, `Service ${i} uses queue alpha`);
      await rem(a, `Service ${i} uses queue beta`);
    }
    await a.sleep({ config: { caps: { conflict: 2 } } });
    assert.equal(
      (await a.proposals({ state: 'pending' })).filter((p) => p.kind === 'conflict').length,
      2,
    );
    await a.sleep({ config: { caps: { conflict: 2 } } });
    assert.equal(
      (await a.proposals({ state: 'pending' })).filter((p) => p.kind === 'conflict').length,
      4,
    );
  });

  it('weights and co-recall links come from usage; a second pass with no new usage changes nothing; rebuild recomputes the same weights', async () => {
    const { a, b, store, clock, rem } = await fixture();
    const x = await rem(a, 'Postgres holds the orders table');
    const y = await rem(a, 'Redis caches the orders page');
    const z = await rem(a, 'Kafka carries shipment events');
    const foreign = await rem(b, 'Postgres holds the orders table in bravo');
    for (let i = 0; i < 3; i++) {
      clock.advance(60_000);
      await a.recall('orders postgres redis');
    }
    await a.read(x.id);
    await store.appendUsage([
      { at: clock().toISOString(), kind: 'ignored', ids: [z.id], actor: 'hook' },
    ]);
    clock.advance(60_000);
    const r1 = await a.sleep();
    assert.ok(r1.changed);
    const w = store.cachedWeights();
    assert.ok(w.get(x.id)! > 1, 'read and recalled: raised');
    assert.ok(w.get(z.id)! < 1, 'injected but ignored: lowered');
    assert.ok(!w.has(foreign.id), 'another project is not weighed by this pass');
    const xv = (await store.getLineage(x.id))!.at(-1)!;
    assert.deepEqual(xv.links, [{ rel: 'relates_to', target: y.id }]);
    assert.equal(xv.actor.kind, 'sleep');
    const seq = (await store.journal({})).length;
    clock.advance(60_000);
    const r2 = await a.sleep();
    assert.equal(r2.changed, false);
    assert.equal(r2.weights.length, 0);
    assert.equal((await store.journal({})).length, seq, 'no journal entry on an idle pass');
    // Rebuild: the weight cache is recomputed from the journaled watermark and the usage log.
    await a.rebuild();
    assert.deepEqual(store.cachedWeights(), w);
    // The idle penalty is a function of the watermark: a month later weights move again.
    clock.advance(90 * 86_400_000);
    const r3 = await a.sleep();
    assert.ok(r3.weights.length > 0);
  });

  it('dry run writes nothing', async () => {
    const { a, store, rem } = await fixture();
    await rem(a, 'Builds run on the self-hosted runner');
    await rem(a, 'builds run on the self-hosted runner');
    const before = (await store.journal({})).length;
    const r = await a.sleep({ dryRun: true });
    assert.equal(r.steps.filter((s) => s.kind === 'duplicate').length, 1);
    assert.equal((await store.journal({})).length, before);
    // …and the same pass for real applies it.
    await a.sleep();
    assert.equal((await store.journal({})).length, before + 1);
  });

  it('proposes retracting a memory never used, at the weight floor, after the configured age', async () => {
    const { a, clock, rem } = await fixture();
    const old = await rem(a, 'An old note nobody reads');
    const used = await rem(a, 'An old note people read');
    clock.advance(400 * 86_400_000);
    await a.read(used.id);
    await a.sleep({ config: { retractAfterDays: 180 } });
    const props = (await a.proposals({ state: 'pending' })).filter((p) => p.kind === 'retract');
    assert.deepEqual(
      props.map((p) => p.targets),
      [[old.id]],
    );
    assert.ok((await active(a)).has(old.id), 'still active until a person decides');
    void HUMAN;
  });
});
