// The HTTP API in-process (`app.request`) over a real file store: error codes map to statuses,
// If-Match guards writes, idempotency keys replay, the project parameter scopes every read, tokens
// are required off loopback, bodies are bounded, and cross-origin writes are refused.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as prettier from 'prettier';
import { renderApiMarkdown } from '../src/surfaces/http/api-docs.js';
import type { Principal } from '../src/surfaces/http/auth.js';
import { tokenFileResolver } from '../src/surfaces/http/auth.js';
import { ROOT, PROJECT_A, PROJECT_B, tmpDir } from './helpers.js';
import { httpFixture, jsonPost } from './http-fixture.js';

type F = Awaited<ReturnType<typeof httpFixture>>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON bodies
const body = async (r: Response): Promise<any> => r.json();

describe('HTTP API (loopback, local user)', () => {
  let f: F;
  before(async () => {
    f = await httpFixture();
  });
  after(() => f.close());

  it('remember answers 201 with id and rev; read answers the memory with its revision as ETag', async () => {
    const r = await f.app.request(
      '/api/memories',
      jsonPost({
        type: 'decision',
        abstract: 'Use Postgres for billing',
        fields: { subject: 'billing db' },
      }),
    );
    assert.equal(r.status, 201);
    const b = await body(r);
    assert.match(b.id, /^mem_/);
    assert.equal(b.rev, 1);
    assert.equal(r.headers.get('location'), `/api/memories/${b.id}`);
    const g = await f.app.request(`/api/memories/${b.id}`);
    assert.equal(g.status, 200);
    assert.equal(g.headers.get('etag'), '"1"');
    const m = await body(g);
    assert.equal(m.abstract, 'Use Postgres for billing');
    assert.equal(m.scope, 'global');
    const [entry] = await f.store.journal({ id: b.id });
    assert.deepEqual(entry!.actor, { kind: 'agent', surface: 'http-local' });
  });

  it('maps domain errors to statuses with the CLI’s error body', async () => {
    const bad = await f.app.request('/api/memories', jsonPost({ type: 'decision' }));
    assert.equal(bad.status, 400);
    assert.equal((await body(bad)).error.code, 'invalid');
    const trust = await f.app.request(
      '/api/memories',
      jsonPost({ type: 'fact', abstract: 'x is y', trust: 'confirmed' }),
    );
    assert.equal(trust.status, 400, 'a trust field is refused, never honoured');
    const notJson = await f.app.request('/api/memories', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{nope',
    });
    assert.equal(notJson.status, 400);
    const missing = await f.app.request('/api/memories/mem_01JZZZZZZZZZZZZZZZZZZZZZZZ');
    assert.equal(missing.status, 404);
    assert.equal((await body(missing)).error.code, 'not_found');
    const notAnId = await f.app.request('/api/memories/hello');
    assert.equal(notAnId.status, 400);
    // refused: a forgotten value may not come back (tombstone) → 403
    const w = await body(
      await f.app.request(
        '/api/memories',
        jsonPost({ type: 'fact', abstract: 'The staging password rotates weekly' }),
      ),
    );
    const forget = await f.app.request(
      `/api/memories/${w.id}/retract`,
      jsonPost({ reject: true, reason: 'wrong' }),
    );
    assert.equal(forget.status, 200);
    const again = await f.app.request(
      '/api/memories',
      jsonPost({ type: 'fact', abstract: 'The staging password rotates weekly' }),
    );
    assert.equal(again.status, 403);
    assert.equal((await body(again)).error.code, 'refused');
    const ok = await f.app.request(
      '/api/memories',
      jsonPost({ type: 'fact', abstract: 'The staging database lives in eu-west-1' }),
    );
    assert.equal(ok.status, 201, 'a different value is still accepted');
  });

  it('If-Match with a stale revision answers 409 and changes nothing', async () => {
    const { id } = await body(
      await f.app.request(
        '/api/memories',
        jsonPost({ type: 'fact', abstract: 'The API rate limit is 100 rps' }),
      ),
    );
    const s1 = await f.app.request(
      `/api/memories/${id}/supersede`,
      jsonPost({ abstract: 'The API rate limit is 200 rps' }, { 'If-Match': '"1"' }),
    );
    assert.equal(s1.status, 200);
    assert.equal((await body(s1)).rev, 2);
    const stale = await f.app.request(
      `/api/memories/${id}/supersede`,
      jsonPost({ abstract: 'The API rate limit is 300 rps' }, { 'If-Match': '"1"' }),
    );
    assert.equal(stale.status, 409);
    assert.equal((await body(stale)).error.code, 'conflict');
    const cur = await body(await f.app.request(`/api/memories/${id}`));
    assert.equal(cur.rev, 2);
    assert.equal(cur.abstract, 'The API rate limit is 200 rps');
    const junk = await f.app.request(
      `/api/memories/${id}/correct`,
      jsonPost({ abstract: 'x' }, { 'If-Match': 'yesterday' }),
    );
    assert.equal(junk.status, 400);
  });

  it('an Idempotency-Key replays the first result instead of writing twice', async () => {
    const req = () =>
      f.app.request(
        '/api/memories',
        jsonPost(
          { type: 'lesson', abstract: 'Run migrations before deploys' },
          { 'Idempotency-Key': 'k-123' },
        ),
      );
    const a = await req();
    const b = await req();
    assert.equal(a.status, 201);
    assert.equal(b.status, 201);
    const ja = await body(a);
    const jb = await body(b);
    assert.equal(jb.id, ja.id);
    assert.equal(jb.replayed, true);
    assert.equal(b.headers.get('idempotent-replayed'), 'true');
    const entries = await f.store.journal({ id: ja.id });
    assert.equal(entries.filter((e) => e.op === 'remember').length, 1);
  });

  it('the project parameter scopes reads: B’s memory is visible with project=B only', async () => {
    const inB = await body(
      await f.app.request(
        '/api/memories',
        jsonPost({
          type: 'constraint',
          abstract: 'Quokka service must not call the ledger directly',
          project: PROJECT_B,
        }),
      ),
    );
    const glob = await body(
      await f.app.request(
        '/api/memories',
        jsonPost({ type: 'constraint', abstract: 'Quokka naming uses kebab case' }),
      ),
    );
    const recall = async (project?: string) => {
      const r = await f.app.request(`/api/recall?q=quokka${project ? `&project=${project}` : ''}`);
      assert.equal(r.status, 200);
      return (await body(r)).results.map((x: { id: string }) => x.id) as string[];
    };
    const a = await recall(PROJECT_A);
    assert.ok(!a.includes(inB.id), 'project A does not see B');
    assert.ok(a.includes(glob.id), 'project A sees global');
    const b = await recall(PROJECT_B);
    assert.ok(b.includes(inB.id), 'project B sees its memory');
    assert.ok(b.includes(glob.id));
    const g = await recall();
    assert.ok(!g.includes(inB.id), 'the default is the global scope only');
    assert.ok(g.includes(glob.id));
    assert.equal((await f.app.request(`/api/memories/${inB.id}?project=${PROJECT_A}`)).status, 404);
    assert.equal((await f.app.request(`/api/memories/${inB.id}?project=${PROJECT_B}`)).status, 200);
    assert.equal((await f.app.request(`/api/memories/${inB.id}`)).status, 404);
    const list = await body(
      await f.app.request(`/api/memories?project=${PROJECT_B}&type=constraint`),
    );
    assert.ok(list.memories.some((m: { id: string }) => m.id === inB.id));
    assert.equal((await f.app.request('/api/recall?q=x&project=not a project')).status, 400);
  });

  it('recall with explain shows a superseded revision in the exclusion trace', async () => {
    const { id } = await body(
      await f.app.request(
        '/api/memories',
        jsonPost({ type: 'fact', abstract: 'The wombat cache TTL is 60 seconds' }),
      ),
    );
    await f.app.request(
      `/api/memories/${id}/supersede`,
      jsonPost({ abstract: 'The wombat cache TTL is 300 seconds' }),
    );
    const r = await body(await f.app.request('/api/recall?q=wombat+cache&explain=1'));
    assert.deepEqual(
      r.results.filter((x: { id: string }) => x.id === id).map((x: { rev: number }) => x.rev),
      [2],
    );
    const ex = r.excluded.find((x: { id: string }) => x.id === id);
    assert.equal(ex.rev, 1);
    assert.equal(ex.reason, 'superseded');
  });

  it('refuses a body over the limit with 413', async () => {
    const r = await f.app.request(
      '/api/memories',
      jsonPost({ type: 'fact', abstract: 'big', body: 'x'.repeat(1024 * 1024 + 10) }),
    );
    assert.equal(r.status, 413);
    const small = await f.app.request(
      '/api/memories',
      jsonPost({ type: 'fact', abstract: 'The sloth queue is small', body: 'x'.repeat(1000) }),
    );
    assert.equal(small.status, 201);
  });

  it('refuses cross-origin state changes and answers only to loopback names', async () => {
    const evil = await f.app.request(
      'http://localhost/api/memories',
      jsonPost({ type: 'fact', abstract: 'Set by a web page' }, { Origin: 'http://evil.example' }),
    );
    assert.equal(evil.status, 403);
    const site = await f.app.request(
      'http://localhost/api/memories',
      jsonPost({ type: 'fact', abstract: 'Set by a web page' }, { 'Sec-Fetch-Site': 'cross-site' }),
    );
    assert.equal(site.status, 403);
    const same = await f.app.request(
      'http://localhost/api/memories',
      jsonPost(
        { type: 'fact', abstract: 'Set from the dashboard origin' },
        { Origin: 'http://localhost' },
      ),
    );
    assert.equal(same.status, 201);
    assert.equal(evil.headers.get('access-control-allow-origin'), null);
    assert.equal((await f.app.request('http://evil.example/api/health')).status, 403);
    assert.equal((await f.app.request('http://127.0.0.1/api/health')).status, 200);
  });

  it('lists proposals, the journal with its chain status, tombstones and reports', async () => {
    fs.mkdirSync(path.join(f.dir, 'reports'), { recursive: true });
    fs.writeFileSync(path.join(f.dir, 'reports', 'fsck-2026-03-01.md'), '# fsck\nno issues\n');
    const j = await body(await f.app.request('/api/journal?actor=agent&limit=5'));
    assert.equal(j.chain.ok, true);
    assert.ok(j.entries.length > 0 && j.entries.length <= 5);
    assert.ok(j.entries.every((e: { actor: { kind: string } }) => e.actor.kind === 'agent'));
    assert.ok((await body(await f.app.request('/api/tombstones'))).tombstones.length >= 1);
    assert.deepEqual((await body(await f.app.request('/api/proposals'))).proposals, []);
    const reports = await body(await f.app.request('/api/reports'));
    assert.deepEqual(
      reports.reports.map((r: { name: string }) => r.name),
      ['fsck-2026-03-01.md'],
    );
    assert.match(
      await (await f.app.request('/api/reports/fsck-2026-03-01.md')).text(),
      /no issues/,
    );
    assert.equal((await f.app.request('/api/reports/..%2F..%2Fetc%2Fpasswd')).status, 404);
  });

  it('serves the OpenAPI document, and docs/api.md is generated from it', async () => {
    const doc = await body(await f.app.request('/api/openapi.json'));
    assert.equal(doc.openapi, '3.1.0');
    for (const p of [
      '/api/memories',
      '/api/memories/{id}',
      '/api/recall',
      '/api/memories/{id}/supersede',
      '/api/journal',
      '/api/proposals',
      '/api/health',
    ])
      assert.ok(doc.paths[p], `documents ${p}`);
    // Every route the API serves is documented (the purge route's 403 among them), but the
    // document itself.
    const undocumented = f.app.routes
      .filter((r) => r.path.startsWith('/api/') && r.method !== 'ALL')
      .filter((r) => r.path !== '/api/openapi.json')
      .map((r) => ({
        method: r.method.toLowerCase(),
        path: r.path.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}'),
      }))
      .filter((r) => !doc.paths[r.path]?.[r.method])
      .map((r) => `${r.method} ${r.path}`);
    assert.deepEqual(undocumented, []);
    assert.ok(doc.paths['/api/memories/{id}/purge'].post.responses['403']);
    const file = path.join(ROOT, 'docs', 'api.md');
    const config = (await prettier.resolveConfig(file)) ?? {};
    const expected = await prettier.format(renderApiMarkdown(), { ...config, filepath: file });
    assert.equal(fs.readFileSync(file, 'utf8'), expected, 'run `npm run docs:api`');
  });
});

describe('HTTP API off loopback (tokens)', () => {
  let f: F;
  const grants: Record<string, Principal> = {
    'token-all-0123456789': { tenant: null, projects: '*' },
    'token-a-0123456789ab': { tenant: null, projects: [PROJECT_A] },
  };
  before(async () => {
    f = await httpFixture({ requireToken: true, resolveToken: (t) => grants[t] ?? null });
  });
  after(() => f.close());
  const auth = (t: string) => ({ Authorization: `Bearer ${t}` });

  it('every request but a health probe needs a valid token; a token holder writes as an agent', async () => {
    const none = await f.app.request('http://10.0.0.5/api/projects');
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer');
    // A load balancer's probe: no token, and nothing but {ok} in the answer.
    const probe = await f.app.request('http://10.0.0.5/api/health');
    assert.equal(probe.status, 200);
    assert.deepEqual(await probe.json(), { ok: true });
    assert.equal(
      (await f.app.request('http://10.0.0.5/api/health', { headers: auth('wrong-token-000000') }))
        .status,
      401,
    );
    const full = await f.app.request('http://10.0.0.5/api/health', {
      headers: auth('token-all-0123456789'),
    });
    assert.equal(full.status, 200);
    assert.equal(((await full.json()) as { backend: string }).backend, 'files');
    const w = await f.app.request(
      'http://10.0.0.5/api/memories',
      jsonPost(
        { type: 'fact', abstract: 'Written over the network', project: PROJECT_A },
        auth('token-a-0123456789ab'),
      ),
    );
    assert.equal(w.status, 201);
    const [e] = await f.store.journal({ id: (await body(w)).id });
    assert.deepEqual(e!.actor, { kind: 'agent', surface: 'http' });
  });

  it('a token reads only its projects', async () => {
    const a = await f.app.request(`http://10.0.0.5/api/recall?q=network&project=${PROJECT_A}`, {
      headers: auth('token-a-0123456789ab'),
    });
    assert.equal(a.status, 200);
    assert.equal((await body(a)).results.length, 1);
    const b = await f.app.request(`http://10.0.0.5/api/recall?q=network&project=${PROJECT_B}`, {
      headers: auth('token-a-0123456789ab'),
    });
    assert.equal(b.status, 403);
  });

  it('a token never reaches the dashboard or its decisions', async () => {
    for (const [p, init] of [
      ['/review', {}],
      ['/review/prop_x', { method: 'POST', body: 'decision=accept' }],
      ['/', {}],
    ] as const) {
      const r = await f.app.request(`http://10.0.0.5${p}`, {
        ...init,
        headers: {
          ...auth('token-all-0123456789'),
          'Content-Type': 'application/x-www-form-urlencoded',
        },
      });
      assert.equal(r.status, 403, p);
    }
  });

  it('reads a token file: tokens with and without project lists', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'tokens');
    fs.writeFileSync(
      file,
      `# tokens\nabcdefghijklmnopqrstuvwx\nzyxwvutsrqponmlkjihgfedc ${PROJECT_A}\n`,
    );
    const resolve = tokenFileResolver(file);
    assert.deepEqual(resolve('abcdefghijklmnopqrstuvwx'), { tenant: null, projects: '*' });
    assert.deepEqual(resolve('zyxwvutsrqponmlkjihgfedc'), { tenant: null, projects: [PROJECT_A] });
    assert.equal(resolve('abcdefghijklmnopqrstuvwy'), null);
    fs.writeFileSync(file, 'short\n');
    assert.throws(() => tokenFileResolver(file), /at least 16/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
