// Tenant isolation on the Postgres store: a store opened for tenant A, handed tenant B's memory
// ids, B's project names or wildcard-looking names, reads nothing of B — while A's own reads in
// the same fixture still work. Project names are per tenant: both tenants may have `api`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Tombstone } from '../src/core/normalize.js';
import type { Store } from '../src/store/port.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { HUMAN, engineFor, testClock } from './helpers.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const skip = await pgSkipReason();
if (skip) console.log(`# skipping the Postgres tenancy tests: ${skip}`);

const API = 'api-00000001';
const SECRET = 'secret-0000000b';
const WILDCARDS = ['%', '*', '_%', '.*', `${API}' OR '1'='1`, 'api-%'];

const tombstone = (scope: string, key: string): Tombstone => ({
  key,
  scope,
  kind: 'value',
  value_norm: key,
  reason: null,
  actor: HUMAN,
  at: '2026-03-01T10:00:00.000Z',
  from_op: 'forget',
  memory: null,
});

describe('Postgres tenant isolation', { skip: skip ?? false }, () => {
  let db: ThrowawayDb;
  let storeA: PostgresStore;
  let storeB: PostgresStore;
  const clock = testClock('2026-03-01T10:00:00.000Z');
  const ids: Record<string, string> = {};

  before(async () => {
    db = await throwawayDb(['acme', 'globex']);
    storeA = await PostgresStore.open(db.url, { tenant: 'acme' });
    storeB = await PostgresStore.open(db.url, { tenant: 'globex' });
    const a = engineFor(storeA, API, clock);
    const b = engineFor(storeB, API, clock);
    const bSecret = engineFor(storeB, SECRET, clock);
    const one = async (e: ReturnType<typeof engineFor>, abstract: string, extra = {}) =>
      (await e.apply([{ op: 'remember', type: 'fact', abstract, ...extra }], HUMAN))[0]!.id;
    ids.a = await one(a, 'Billing uses Adyen for card payments', {
      fields: { subject: 'billing' },
      idempotency_key: 'shared-key',
    });
    ids.aGlobal = await one(a, 'Billing invoices are sent on the first day', { global: true });
    ids.b = await one(b, 'Billing uses Stripe for card payments', {
      fields: { subject: 'billing' },
      idempotency_key: 'shared-key',
    });
    ids.bGlobal = await one(b, 'Billing disputes go to the finance channel', { global: true });
    ids.bSecret = await one(bSecret, 'Billing master key rotation is on Tuesdays');
    const lock = (s: Store, t: Tombstone) =>
      s.withWriteLock(() =>
        s.commit({
          body: {
            at: t.at,
            actor: HUMAN,
            op: 'forget',
            target: null,
            before: null,
            after: null,
            reason: null,
            idem: null,
            req: null,
          },
          revision: null,
          tombstone: { arm: t },
        }),
      );
    await lock(storeA, tombstone(API, 'key-a'));
    await lock(storeB, tombstone(API, 'key-b'));
  });

  after(async () => {
    await storeA?.close();
    await storeB?.close();
    await db?.drop();
  });

  it('the same project name in two tenants holds two separate memories', async () => {
    const a = engineFor(storeA, API, clock);
    const b = engineFor(storeB, API, clock);
    const ra = await a.recall('billing card payments', { logUsage: false });
    const rb = await b.recall('billing card payments', { logUsage: false });
    assert.deepEqual(ra.results.map((r) => r.id).sort(), [ids.a, ids.aGlobal].sort());
    assert.deepEqual(rb.results.map((r) => r.id).sort(), [ids.b, ids.bGlobal].sort());
  });

  it("tenant B's ids read nothing through A; A's own ids read", async () => {
    const a = engineFor(storeA, API, clock);
    assert.equal((await a.read(ids.a!)).abstract, 'Billing uses Adyen for card payments');
    assert.ok(await storeA.getLineage(ids.a!));
    for (const id of [ids.b!, ids.bGlobal!, ids.bSecret!]) {
      assert.equal(await storeA.getLineage(id), null);
      await assert.rejects(a.read(id), /no memory/);
      await assert.rejects(a.history(id), /no memory/);
      assert.deepEqual(await storeA.journal({ id }), []);
      await assert.rejects(
        a.apply([{ op: 'supersede', id, abstract: 'hijacked' }], HUMAN),
        /no memory/,
      );
    }
    // B's memories are untouched by the attempts.
    assert.equal((await storeB.getLineage(ids.b!))!.length, 1);
    assert.equal((await storeA.verifyJournal()).ok, true);
  });

  it("tenant B's project names and wildcards read nothing through A", async () => {
    const onlyB = engineFor(storeA, SECRET, clock);
    const r = await onlyB.recall('billing master key rotation', { explain: true, logUsage: false });
    // Only A's global memory can match from A's store; B's secret project is invisible.
    assert.ok(r.results.every((x) => x.id === ids.aGlobal));
    assert.ok(!(r.excluded ?? []).some((x) => [ids.b, ids.bSecret, ids.bGlobal].includes(x.id)));
    const inB = engineFor(storeB, SECRET, clock);
    const rb = await inB.recall('billing master key rotation', { logUsage: false });
    assert.ok(
      rb.results.some((x) => x.id === ids.bSecret),
      'B itself sees its project',
    );

    assert.deepEqual(
      (await storeA.listCurrent([API])).map((v) => v.id),
      [ids.a],
    );
    assert.deepEqual(await storeA.listCurrent([SECRET]), []);
    assert.deepEqual(await storeA.listCurrent(WILDCARDS), []);
    const eligibility = {
      asOf: clock().toISOString(),
      knownAt: null,
      minTrust: 'untrusted' as const,
      includeQuarantined: true,
    };
    const terms = [{ text: 'billing', phrase: false }];
    assert.equal(
      (await storeA.search({ terms, eligibility: { ...eligibility, scopes: [API] }, limit: 50 }))
        .length,
      1,
    );
    assert.deepEqual(
      await storeA.search({ terms, eligibility: { ...eligibility, scopes: WILDCARDS }, limit: 50 }),
      [],
    );
    // Tenant B's project named as a scope, or a wildcard, brings nothing of B's through A.
    const near = await storeA.nearest(terms, [API, 'global', SECRET, ...WILDCARDS], 50);
    assert.deepEqual(near.map((h) => h.view.id).sort(), [ids.a, ids.aGlobal].sort());
    assert.equal(await storeA.findLiveBySlug('%', 'fact', '%'), null);
    assert.ok(
      await storeA.findLiveBySlug(API, 'fact', (await storeA.getLineage(ids.a!))![0]!.slug),
    );
  });

  it('journal, idempotency keys, tombstones and status are per tenant', async () => {
    const ja = await storeA.journal({});
    assert.ok(ja.length > 0);
    assert.ok(ja.every((e) => e.target === null || ![ids.b, ids.bSecret].includes(e.target.id)));
    // Both tenants used the key "shared-key": each resolves to its own memory.
    assert.equal((await storeA.findIdempotent('shared-key'))!.target!.id, ids.a);
    assert.equal((await storeB.findIdempotent('shared-key'))!.target!.id, ids.b);
    assert.deepEqual(
      (await storeA.tombstones([API, ...WILDCARDS])).map((t) => t.key),
      ['key-a'],
    );
    assert.deepEqual(
      (await storeB.tombstones([API])).map((t) => t.key),
      ['key-b'],
    );
    const sa = await storeA.status();
    const sb = await storeB.status();
    assert.equal(sa.memories, 2);
    assert.equal(sb.memories, 3);
    assert.equal((await storeA.verifyJournal()).entries, sa.journalHead.seq);
    assert.notEqual(sa.journalHead.hash, sb.journalHead.hash);
  });
});
