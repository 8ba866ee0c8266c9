// Two real `serve --db` instances on one Postgres database: writes on one are read on the other,
// optimistic revisions and idempotency keys hold across them, a request without a valid token
// gets 401 and no data, a token of one tenant reads nothing of another, and /metrics counts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { createToken } from '../src/store/postgres/tenants.js';
import { startDbServer, type RunningDbServer } from '../src/surfaces/http/server.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const skip = process.env.MNEME_TEST_PG_URL
  ? await pgSkipReason()
  : 'MNEME_TEST_PG_URL is not set (CI sets it to postgres://postgres@127.0.0.1:5432/postgres)';
if (skip) console.log(`# skipping the multi-instance server tests: ${skip}`);

const API = 'api-00000001';
const WEB = 'web-00000002';
const OTHER = 'ops-00000003';

/** The fields of the API answers these tests read (each answer has some of them). */
interface Body {
  id: string;
  abstract: string;
  results: { id: string; abstract: string }[];
  projects: { id: string }[];
  error: { code: string; message: string };
}

interface Res {
  status: number;
  headers: Headers;
  json: Body;
  text: string;
}

async function call(
  base: string,
  method: string,
  path: string,
  o: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Res> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(`${base}${path}`, {
    method,
    headers,
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
  });
  const text = await r.text();
  let json = {} as Body;
  try {
    json = JSON.parse(text);
  } catch {
    /* /metrics is text */
  }
  return { status: r.status, headers: r.headers, json, text };
}

describe('serve --db: two instances, tokens, tenants, metrics', { skip: skip ?? false }, () => {
  let db: ThrowawayDb;
  let a: RunningDbServer;
  let b: RunningDbServer;
  let acme: string; // tenant acme, projects api + web
  let acmeAll: string; // tenant acme, every project
  let beta: string; // tenant beta, every project
  before(async () => {
    db = await throwawayDb(['acme', 'beta']);
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      acme = await createToken(pool, { tenant: 'acme', projects: [API, WEB] });
      acmeAll = await createToken(pool, { tenant: 'acme', projects: null });
      beta = await createToken(pool, { tenant: 'beta', projects: null });
    } finally {
      await pool.end();
    }
    a = await startDbServer({ db: db.url, port: 0, poolSize: 4, log: () => {} });
    b = await startDbServer({ db: db.url, port: 0, poolSize: 4, log: () => {} });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it('a write on one instance is read on the other; If-Match and idempotency hold across them', async () => {
    const w = await call(a.url, 'POST', '/api/memories', {
      token: acme,
      body: {
        type: 'decision',
        abstract: 'Invoices are rendered by the wombat service',
        project: API,
      },
    });
    assert.equal(w.status, 201, w.text);
    const id = w.json.id as string;

    const r = await call(b.url, 'GET', `/api/memories/${id}?project=${API}`, { token: acme });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.abstract, 'Invoices are rendered by the wombat service');
    const found = await call(b.url, 'GET', `/api/recall?q=wombat&project=${API}`, { token: acme });
    assert.deepEqual(
      found.json.results.map((x: { id: string }) => x.id),
      [id],
    );

    const s = await call(b.url, 'POST', `/api/memories/${id}/supersede`, {
      token: acme,
      headers: { 'if-match': '"1"' },
      body: { abstract: 'Invoices are rendered by the wombat service v2', project: API },
    });
    assert.equal(s.status, 200, s.text);
    assert.equal(s.headers.get('etag'), '"2"');
    const stale = await call(a.url, 'POST', `/api/memories/${id}/supersede`, {
      token: acme,
      headers: { 'if-match': '"1"' },
      body: { abstract: 'a stale edit that must not land', project: API },
    });
    assert.equal(stale.status, 409, stale.text);
    assert.equal(stale.json.error.code, 'conflict');
    const now = await call(a.url, 'GET', `/api/memories/${id}?project=${API}`, { token: acme });
    assert.equal(now.json.abstract, 'Invoices are rendered by the wombat service v2');

    const body = { type: 'fact', abstract: 'The nightly export runs at 02:00 UTC', project: API };
    const key = { 'idempotency-key': 'export-note-1' };
    const first = await call(a.url, 'POST', '/api/memories', { token: acme, body, headers: key });
    const again = await call(b.url, 'POST', '/api/memories', { token: acme, body, headers: key });
    assert.equal(first.status, 201, first.text);
    assert.equal(again.status, 201, again.text);
    assert.equal(again.json.id, first.json.id);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    const exports = await call(a.url, 'GET', `/api/recall?q=nightly+export&project=${API}`, {
      token: acme,
    });
    assert.equal(exports.json.results.length, 1);
  });

  it('without a valid token: 401 and no data, on loopback too; with one the same reads work', async () => {
    const w = await call(a.url, 'POST', '/api/memories', {
      token: acme,
      body: { type: 'fact', abstract: 'The staging database is called quokka', project: API },
    });
    assert.equal(w.status, 201, w.text);
    const paths = [
      `/api/recall?q=quokka&project=${API}`,
      `/api/memories/${w.json.id}?project=${API}`,
      '/api/projects',
      '/api/journal',
      '/metrics',
      '/',
    ];
    for (const server of [a, b])
      for (const p of paths) {
        for (const token of [undefined, 'mnm_not-a-real-token-at-all', 'garbage']) {
          const r = await call(server.url, 'GET', p, { token });
          assert.equal(r.status, 401, `${p} without a valid token`);
          assert.doesNotMatch(r.text, /quokka|mneme_http/);
          assert.deepEqual(Object.keys(r.json), ['error']);
        }
      }
    const mcp = await call(a.url, 'POST', '/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    assert.equal(mcp.status, 401);
    const dash = await call(a.url, 'GET', '/', { token: acme });
    assert.equal(dash.status, 404);
    assert.match(dash.json.error.message, /no dashboard/);
    const ok = await call(b.url, 'GET', `/api/recall?q=quokka&project=${API}`, { token: acme });
    assert.equal(ok.status, 200);
    assert.equal(ok.json.results[0]!.abstract, 'The staging database is called quokka');
  });

  it('a token of tenant acme passing beta’s ids, projects or a wildcard reads nothing of beta', async () => {
    // Both tenants have a project named API; beta also has OTHER.
    const mine = await call(a.url, 'POST', '/api/memories', {
      token: acme,
      body: {
        type: 'fact',
        abstract: 'Acme pager rotation lives in the narwhal sheet',
        project: API,
      },
    });
    const theirs = await call(b.url, 'POST', '/api/memories', {
      token: beta,
      body: {
        type: 'fact',
        abstract: 'Beta pager rotation lives in the narwhal wiki',
        project: API,
      },
    });
    const theirOther = await call(b.url, 'POST', '/api/memories', {
      token: beta,
      body: { type: 'fact', abstract: 'Beta narwhal secrets vault', project: OTHER },
    });
    const theirGlobal = await call(a.url, 'POST', '/api/memories', {
      token: beta,
      body: { type: 'fact', abstract: 'Beta global narwhal policy' },
    });
    for (const r of [mine, theirs, theirOther, theirGlobal]) assert.equal(r.status, 201, r.text);

    for (const [token, server] of [
      [acme, a],
      [acmeAll, b],
    ] as const) {
      const own = await call(server.url, 'GET', `/api/recall?q=narwhal&project=${API}`, { token });
      assert.deepEqual(
        own.json.results.map((x: { id: string }) => x.id),
        [mine.json.id],
      );
      const read = await call(server.url, 'GET', `/api/memories/${mine.json.id}?project=${API}`, {
        token,
      });
      assert.equal(read.status, 200);
      for (const id of [theirs.json.id, theirOther.json.id, theirGlobal.json.id]) {
        for (const project of [API, OTHER, 'global']) {
          const r = await call(server.url, 'GET', `/api/memories/${id}?project=${project}`, {
            token,
          });
          assert.ok([403, 404].includes(r.status), `${id} in ${project}: ${r.status}`);
          assert.doesNotMatch(r.text, /Beta/);
          const h = await call(
            server.url,
            'GET',
            `/api/memories/${id}/history?project=${project}`,
            {
              token,
            },
          );
          assert.doesNotMatch(h.text, /Beta/);
        }
      }
      for (const project of [OTHER, '*', '%', 'global']) {
        const r = await call(
          server.url,
          'GET',
          `/api/recall?q=narwhal&project=${encodeURIComponent(project)}`,
          { token },
        );
        assert.doesNotMatch(r.text, /Beta/, `recall in ${project}`);
      }
      const projects = await call(server.url, 'GET', '/api/projects', { token });
      assert.ok(projects.json.projects.some((p: { id: string }) => p.id === API));
      assert.ok(!projects.json.projects.some((p: { id: string }) => p.id === OTHER));
      const journal = await call(server.url, 'GET', `/api/journal?limit=1000&project=${API}`, {
        token,
      });
      assert.equal(journal.status, 200);
      assert.ok(journal.text.includes(mine.json.id), 'acme’s own journal entry');
      for (const r of [theirs, theirOther, theirGlobal])
        assert.ok(!journal.text.includes(r.json.id), 'no journal entry of beta');
    }
    // The allow-list binds: acme's restricted token may not even name OTHER.
    const refused = await call(a.url, 'GET', `/api/recall?q=narwhal&project=${OTHER}`, {
      token: acme,
    });
    assert.equal(refused.status, 403);
    // And beta still reads its own.
    const betaOwn = await call(a.url, 'GET', `/api/recall?q=narwhal&project=${OTHER}`, {
      token: beta,
    });
    assert.ok(betaOwn.json.results.some((x: { id: string }) => x.id === theirOther.json.id));
  });

  it('MCP over /mcp serves the token’s tenant, bound to its first allowed project', async () => {
    const client = new Client({ name: 'serve-multi', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${b.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${acme}` } },
      }),
    );
    try {
      const r = await client.callTool({ name: 'recall', arguments: { query: 'narwhal' } });
      const text = (r.content as { text: string }[])[0]!.text;
      assert.match(text, /Acme pager rotation/);
      assert.doesNotMatch(text, /Beta/);
    } finally {
      await client.close();
    }
  });

  it('/metrics counts requests, writes and refusals, and reports the journal and proposals', async () => {
    const m = await call(a.url, 'GET', '/metrics', { token: acmeAll });
    assert.equal(m.status, 200);
    assert.match(m.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.match(
      m.text,
      /^mneme_http_requests_total\{route="POST \/api\/memories",status="201"\} \d+$/m,
    );
    assert.match(m.text, /^mneme_http_requests_total\{route="GET \/metrics",status="401"\} \d+$/m);
    assert.match(
      m.text,
      /^mneme_http_request_duration_seconds_count\{route="GET \/api\/recall"\} \d+$/m,
    );
    assert.match(m.text, /^mneme_refusals_total\{code="conflict",reason="[^"]+"\} 1$/m);
    const writes = Number(/^mneme_writes_total (\d+)$/m.exec(m.text)![1]);
    assert.ok(writes >= 4, `writes on A: ${writes}`);
    const journal = Number(/^mneme_journal_length (\d+)$/m.exec(m.text)![1]);
    assert.ok(journal >= 6, `acme journal length ${journal}`);
    assert.match(m.text, /^mneme_proposals_pending \d+$/m);
    // Another tenant's gauges are its own.
    const mb = await call(b.url, 'GET', '/metrics', { token: beta });
    assert.equal(Number(/^mneme_journal_length (\d+)$/m.exec(mb.text)![1]), 3);
  });
});
