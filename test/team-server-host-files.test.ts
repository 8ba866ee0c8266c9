// The team server (`mneme serve --db`) reads no file of its own host for a request: a token
// holder cannot name a project by a server path (not "/", not a repository on the host, whose
// git remote the refusal would otherwise name), and a source binding has no host files to read.
// A project-bound token is shown no store-wide sequence: no seq in write results, no journal
// length on /metrics. Each beside the same request done the ordinary way, which works.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { issueToken } from '../src/store/postgres/tenants.js';
import { startDbServer, type RunningDbServer } from '../src/surfaces/http/server.js';
import { gitRepo } from './helpers.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const skip = process.env.MNEME_TEST_PG_URL
  ? await pgSkipReason()
  : 'MNEME_TEST_PG_URL is not set (CI sets it to postgres://postgres@127.0.0.1:5432/postgres)';

const API = 'api-00000001';

async function call(base: string, path: string, token: string, body?: unknown) {
  const r = await fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, text: await r.text() };
}

describe(
  'the team server reads no host file for a token (postgres)',
  { skip: skip ?? false },
  () => {
    let db: ThrowawayDb;
    let server: RunningDbServer;
    let bound: string;
    let every: string;

    before(async () => {
      db = await throwawayDb(['acme']);
      const pool = new pg.Pool({ connectionString: db.url, max: 1 });
      try {
        bound = (await issueToken(pool, { tenant: 'acme', projects: [API] })).token;
        every = (await issueToken(pool, { tenant: 'acme', projects: null })).token;
      } finally {
        await pool.end();
      }
      server = await startDbServer({ db: db.url, port: 0, poolSize: 2, log: () => {} });
    });
    after(async () => {
      await server?.close();
      await db?.drop();
    });

    it('"project": "/" with a source is refused without reading the file; the same fact by project id is stored', async () => {
      const root = await call(server.url, '/api/memories', every, {
        type: 'fact',
        abstract: 'accounts live in the password file',
        project: '/',
        source: 'etc/passwd',
      });
      assert.equal(root.status, 403, root.text);
      assert.match(root.text, /names a project by its id, not by a path/);
      assert.doesNotMatch(root.text, /passwd|verified|sha256/);
      const bySource = await call(server.url, '/api/memories', bound, {
        type: 'fact',
        abstract: 'accounts live in the password file',
        project: API,
        source: 'etc/passwd',
      });
      assert.ok(bySource.status >= 400, bySource.text);
      assert.doesNotMatch(bySource.text, /verified|sha256/);
      const plain = await call(server.url, '/api/memories', bound, {
        type: 'fact',
        abstract: 'accounts live in the password file',
        project: API,
      });
      assert.equal(plain.status, 201, plain.text);
      assert.equal(JSON.parse(plain.text).trust, 'claimed');
    });

    it("a host repository's path as project is refused without naming its remote; its id is read", async () => {
      const repo = gitRepo('git@example.com:secretorg/hidden-repo.git');
      const r = await call(
        server.url,
        `/api/recall?q=password&project=${encodeURIComponent(repo)}`,
        bound,
      );
      assert.equal(r.status, 403, r.text);
      assert.doesNotMatch(r.text, /secretorg|hidden/);
      const ok = await call(server.url, `/api/recall?q=password&project=${API}`, bound);
      assert.equal(ok.status, 200, ok.text);
      assert.match(ok.text, /password file/);
    });

    it('a project-bound token sees no store-wide seq or journal length; an every-project token does', async () => {
      const mine = await call(server.url, '/api/memories', bound, {
        type: 'fact',
        abstract: 'Invoices are rendered by the wombat service',
        project: API,
      });
      assert.equal(mine.status, 201, mine.text);
      assert.equal(JSON.parse(mine.text).seq, undefined);
      assert.ok(JSON.parse(mine.text).id);
      const theirs = await call(server.url, '/api/memories', every, {
        type: 'fact',
        abstract: 'Nightly exports are uploaded by the heron job',
      });
      assert.equal(typeof JSON.parse(theirs.text).seq, 'number');
      const m1 = await call(server.url, '/metrics', bound);
      assert.equal(m1.status, 200);
      assert.doesNotMatch(m1.text, /mneme_journal_length/);
      assert.match(m1.text, /mneme_proposals_pending/);
      const m2 = await call(server.url, '/metrics', every);
      assert.match(m2.text, /mneme_journal_length \d+/);
    });
  },
);
