// What one recall through `serve --db` costs in SQL round trips, counted through the real pg
// client (every Client#query is one round trip), so the fixed cost around the search cannot grow
// back unnoticed: on the response's critical path the token check (which also reads the tenant's
// tombstone version and whether it has knowledge), besides the search's own statements; the
// tombstones only when they moved, the knowledge chunks only for a tenant that has some (both
// read while the search runs); the usage row is written after the answer, batched, and still
// lands. Paired with: the recall returns the memory asked for, a value rejected through another
// instance is withheld at this one's next recall (which reads the tombstones again), a tenant
// with knowledge gets it served (its chunks read), and a revoked token is refused at its next
// request while the other token of the same tenant still reads.
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { issueToken, revokeToken } from '../src/store/postgres/tenants.js';
import { UsageBatch } from '../src/store/postgres/usage-batch.js';
import type { UsageEvent } from '../src/store/port.js';
import { startDbServer, type RunningDbServer } from '../src/surfaces/http/server.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const skip = process.env.MNEME_TEST_PG_URL
  ? await pgSkipReason()
  : 'MNEME_TEST_PG_URL is not set (CI sets it to postgres://postgres@127.0.0.1:5432/postgres)';
if (skip) console.log(`# skipping the serve round-trip tests: ${skip}`);

const API = 'api-00000001';

/** Round trips besides the search's, on a recall's critical path: the token check. */
const FIXED_CRITICAL = 1;
/** The knowledge read (knowledge-rows.ts search), sent only for a tenant with chunks. */
const isKnowledgeRead = (text: string) => text.startsWith('SELECT path, ord, line_from');
/** The tombstone read (PostgresStore.armedTombstones), sent only when the version moved. */
const isTombstoneRead = (text: string) => text.startsWith('WITH v AS MATERIALIZED');
/** The search's own statements (search-rows.ts) may only get fewer. */
const SEARCH_AT_MOST = 4;

interface Counted {
  text: string;
  inSearch: boolean;
}

/** Every statement this process sends through pg, and whether the store's search sent it. */
const sent: Counted[] = [];
const inSearch = new AsyncLocalStorage<boolean>();
const clientQuery = pg.Client.prototype.query;
const storeSearch = PostgresStore.prototype.search;

function count(): void {
  pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
    const c = a[0] as string | { text?: string; name?: string };
    const text = typeof c === 'string' ? c : (c.text ?? c.name ?? '?');
    sent.push({ text: text.replace(/\s+/g, ' ').trim(), inSearch: inSearch.getStore() === true });
    return (clientQuery as (...x: unknown[]) => unknown).apply(this, a);
  } as typeof pg.Client.prototype.query;
  PostgresStore.prototype.search = function (this: PostgresStore, req) {
    return inSearch.run(true, () => storeSearch.call(this, req));
  };
}

function uncount(): void {
  pg.Client.prototype.query = clientQuery;
  PostgresStore.prototype.search = storeSearch;
}

async function call(base: string, path: string, token: string, body?: unknown) {
  const r = await fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

async function usageRows(url: string): Promise<UsageEvent[]> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const { rows } = await pool.query<{ doc: string }>(
      "SELECT doc FROM usage_events WHERE tenant_id = 'acme' ORDER BY seq",
    );
    return rows.map((r) => JSON.parse(r.doc) as UsageEvent);
  } finally {
    await pool.end();
  }
}

describe('serve --db: round trips per recall', { skip: skip ?? false }, () => {
  let db: ThrowawayDb;
  let server: RunningDbServer;
  let token: string;
  let tokenId: string;
  let other: string;
  const ids = new Map<string, string>();

  before(async () => {
    db = await throwawayDb(['acme', 'globex']);
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      const t = await issueToken(pool, { tenant: 'acme', projects: [API] });
      token = t.token;
      tokenId = t.id;
      other = (await issueToken(pool, { tenant: 'acme', projects: [API] })).token;
    } finally {
      await pool.end();
    }
    server = await startDbServer({ db: db.url, port: 0, poolSize: 4, log: () => {} });
    for (const [name, what] of [
      ['wombat', 'Invoices are rendered by the wombat service'],
      ['heron', 'Nightly exports are uploaded by the heron job'],
      ['otter', 'Search indexes are rebuilt by the otter worker'],
    ] as const) {
      const w = await call(server.url, '/api/memories', token, {
        type: 'fact',
        abstract: what,
        project: API,
      });
      assert.equal(w.status, 201, JSON.stringify(w.json));
      ids.set(name, w.json.id as string);
    }
    // A forgotten value in global: the project reader's recall has a tombstone to match.
    const g = await call(server.url, '/api/memories', token, {
      type: 'fact',
      abstract: 'The staging password is hunter2',
    });
    assert.equal(g.status, 201, JSON.stringify(g.json));
    const f = await call(server.url, `/api/memories/${g.json.id as string}/retract`, token, {
      reason: 'wrong',
      reject: true,
    });
    assert.equal(f.status, 200, JSON.stringify(f.json));
  });
  after(async () => {
    uncount();
    await server?.close();
    await db?.drop();
  });

  it('a recall: the memory asked for, a fixed number of round trips, its usage row written after', async () => {
    const before = (await usageRows(db.url)).length;
    const ask = (q: string) =>
      call(server.url, `/api/recall?q=${encodeURIComponent(q)}&project=${API}`, token);
    // Warm: the tenant's store exists and the prepared statements are parsed.
    assert.equal((await ask('wombat invoices')).status, 200);
    await new Promise((r) => setTimeout(r, 200));
    count();
    const per: { critical: number; search: number; fixed: string[]; later: string[] }[] = [];
    const queries = ['wombat invoices', 'heron nightly exports', 'otter search indexes'];
    try {
      for (const [i, q] of queries.entries()) {
        sent.length = 0;
        const r = await ask(q);
        // What ran before the answer came back: the critical path.
        const critical = sent.slice();
        assert.equal(r.status, 200, JSON.stringify(r.json));
        const results = r.json.results as { id: string }[];
        assert.equal(results[0]?.id, ids.get(['wombat', 'heron', 'otter'][i]!), q);
        // What ran after it: the usage row, once its batch's delay ran out (a loaded machine
        // runs the timer late: waited for, then a little longer for anything else).
        for (let w = 0; w < 200 && sent.length === critical.length; w++)
          await new Promise((res) => setTimeout(res, 10));
        await new Promise((res) => setTimeout(res, 100));
        per.push({
          critical: critical.length,
          search: critical.filter((s) => s.inSearch).length,
          fixed: critical.filter((s) => !s.inSearch).map((s) => s.text.slice(0, 60)),
          later: sent.slice(critical.length).map((s) => s.text.slice(0, 60)),
        });
      }
    } finally {
      uncount();
    }
    for (const p of per) {
      assert.equal(
        p.critical - p.search,
        FIXED_CRITICAL,
        `round trips besides the search: ${JSON.stringify(p.fixed, null, 1)}`,
      );
      assert.ok(p.search >= 1 && p.search <= SEARCH_AT_MOST, `search round trips: ${p.search}`);
      assert.ok(
        !p.fixed.some((t) => t.startsWith('INSERT INTO usage_events')),
        'the usage row is not on the critical path',
      );
      assert.ok(p.fixed[0]!.startsWith('WITH used AS ( UPDATE tokens'), 'the token check first');
      assert.deepEqual(
        p.later.map((t) => t.slice(0, 23)),
        ['INSERT INTO usage_event'],
        'after the answer: its usage row, one INSERT',
      );
    }
    // Each recall's usage row lands (batched, after the answer), none twice.
    let rows: UsageEvent[] = [];
    for (let i = 0; i < 100; i++) {
      rows = await usageRows(db.url);
      if (rows.length >= before + 1 + queries.length) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const recalls = rows.slice(before).filter((e) => e.kind === 'recall');
    assert.deepEqual(
      recalls.map((e) => e.query),
      ['wombat invoices', ...queries],
    );
  });

  it('a value rejected through another instance is withheld at this one’s next recall; unchanged, no tombstone is read', async () => {
    const b = await startDbServer({ db: db.url, port: 0, poolSize: 2, log: () => {} });
    try {
      const VALUE = 'Ledger exports run at midnight';
      const g = await call(server.url, '/api/memories', token, { type: 'fact', abstract: VALUE });
      assert.equal(g.status, 201, JSON.stringify(g.json));
      const recalled = async () => {
        sent.length = 0;
        const r = await call(
          server.url,
          `/api/recall?q=${encodeURIComponent('ledger exports midnight')}&project=${API}`,
          token,
        );
        assert.equal(r.status, 200, JSON.stringify(r.json));
        const fixed = sent.filter((x) => !x.inSearch).map((x) => x.text);
        return {
          ids: (r.json.results as { id: string }[]).map((x) => x.id),
          fixed: fixed.filter((t) => !t.startsWith('INSERT INTO usage_events')),
        };
      };
      assert.ok((await recalled()).ids.includes(g.json.id as string), 'served before');
      count();
      try {
        const unchanged = await recalled();
        assert.ok(unchanged.ids.includes(g.json.id as string));
        assert.equal(unchanged.fixed.length, FIXED_CRITICAL, JSON.stringify(unchanged.fixed));
        assert.ok(!unchanged.fixed.some(isTombstoneRead), 'no tombstone read');
        // Through instance B: the same value written in the project, then rejected there.
        const p = await call(b.url, '/api/memories', other, {
          type: 'fact',
          abstract: VALUE,
          project: API,
        });
        assert.equal(p.status, 201, JSON.stringify(p.json));
        const f = await call(b.url, `/api/memories/${p.json.id as string}/retract`, other, {
          reason: 'wrong',
          reject: true,
          project: API,
        });
        assert.equal(f.status, 200, JSON.stringify(f.json));
        const next = await recalled();
        assert.ok(!next.ids.includes(g.json.id as string), 'withheld at the next recall');
        assert.equal(next.fixed.filter(isTombstoneRead).length, 1, 'the tombstones read again');
        const after = await recalled();
        assert.ok(!after.ids.includes(g.json.id as string), 'still withheld');
        assert.ok(!after.fixed.some(isTombstoneRead), 'and not read again');
      } finally {
        uncount();
      }
    } finally {
      await b.close();
    }
  });

  it('a tenant with knowledge chunks gets them served beside its memories; one without reads none', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    let globex: string;
    try {
      globex = (await issueToken(pool, { tenant: 'globex', projects: [API] })).token;
      const store = PostgresStore.forTenant(pool, { tenant: 'globex' });
      const text = 'Deploys to the zebra cluster run through the kestrel pipeline';
      await (
        await store.knowledge()
      ).change(
        API,
        [
          {
            file: {
              path: 'docs/deploy.md',
              hash: 'h1',
              bytes: text.length,
              chunks: 1,
              skipped: null,
            },
            chunks: [
              { path: 'docs/deploy.md', ord: 0, line_from: 1, line_to: 1, trail: 'Deploy', text },
            ],
          },
        ],
        [],
      );
      await store.close();
    } finally {
      await pool.end();
    }
    const ask = async (who: string) => {
      sent.length = 0;
      const r = await call(
        server.url,
        `/api/recall?q=${encodeURIComponent('kestrel pipeline zebra cluster')}&project=${API}`,
        who,
      );
      assert.equal(r.status, 200, JSON.stringify(r.json));
      return { json: r.json, fixed: sent.filter((x) => !x.inSearch).map((x) => x.text) };
    };
    await ask(globex); // warm: the tenant's store and its tombstone list
    count();
    try {
      const withKnowledge = await ask(globex);
      assert.deepEqual(
        ((withKnowledge.json.knowledge ?? []) as { path: string }[]).map((k) => k.path),
        ['docs/deploy.md'],
      );
      assert.equal(withKnowledge.fixed.filter(isKnowledgeRead).length, 1, 'its chunks read');
      const without = await ask(token);
      assert.equal(without.json.knowledge, undefined);
      assert.ok(!without.fixed.some(isKnowledgeRead), 'no knowledge read for acme');
    } finally {
      uncount();
    }
  });

  it('a revoked token is refused at its very next request; the tenant’s other token still reads', async () => {
    const ok = await call(server.url, `/api/recall?q=wombat&project=${API}`, token);
    assert.equal(ok.status, 200);
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      assert.equal(await revokeToken(pool, tokenId), true);
    } finally {
      await pool.end();
    }
    const refused = await call(server.url, `/api/recall?q=wombat&project=${API}`, token);
    assert.equal(refused.status, 401);
    assert.match(String((refused.json.error as { message: string }).message), /revoked/);
    assert.equal(refused.json.results, undefined);
    const still = await call(server.url, `/api/recall?q=wombat&project=${API}`, other);
    assert.equal(still.status, 200);
    assert.equal((still.json.results as { id: string }[])[0]?.id, ids.get('wombat'));
  });

  it('usage events whose write fails are kept, retried and written once; close writes what is left', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    const logged: string[] = [];
    let failNext = 1;
    const store = PostgresStore.forTenant(pool, { tenant: 'acme' });
    const before = (await usageRows(db.url)).length;
    try {
      // The real INSERT, behind a connection that drops once (what a restarting server does).
      const batch = new UsageBatch(
        async (events) => {
          if (failNext-- > 0) throw new Error('Connection terminated unexpectedly');
          await store.appendUsage(events);
        },
        { delayMs: 5, log: (l) => logged.push(l) },
      );
      const ev = (n: number): UsageEvent => ({
        at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
        kind: 'recall',
        ids: [],
        actor: 'agent',
        query: `q${n}`,
      });
      batch.add([ev(1), ev(2)]);
      batch.add([ev(3)]);
      await new Promise((r) => setTimeout(r, 30));
      batch.add([ev(4)]);
      await batch.settle();
      assert.equal(batch.size, 0);
      assert.ok(
        logged.some((l) => /writing \d usage events failed .*retrying/.test(l)),
        logged.join('\n'),
      );
      batch.add([ev(5)]);
      await batch.close(); // before its delay ran out
      // (The server's own recalls of the tests before may land in between: only ours count.)
      const rows = (await usageRows(db.url)).slice(before).filter((e) => /^q\d$/.test(e.query!));
      assert.deepEqual(
        rows.map((e) => e.query),
        ['q1', 'q2', 'q3', 'q4', 'q5'],
      );
      assert.equal(batch.dropped, 0);
    } finally {
      await store.close();
      await pool.end();
    }
  });

  it('a server that stops writes the usage rows of the recalls it answered', async () => {
    const s = await startDbServer({ db: db.url, port: 0, poolSize: 2, log: () => {} });
    const before = (await usageRows(db.url)).length;
    try {
      const r = await call(s.url, `/api/recall?q=heron&project=${API}`, other);
      assert.equal(r.status, 200);
    } finally {
      await s.close();
    }
    const rows = (await usageRows(db.url)).slice(before);
    assert.deepEqual(
      rows.map((e) => e.query),
      ['heron'],
    );
  });
});
