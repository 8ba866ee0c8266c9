// Governance of a team server through its real entry points: two `mneme serve --db` processes on
// one database and the `mneme tenant|token|journal` CLI. A revoked token, an expired one and a
// disabled tenant's are refused by both instances at their next request while the others keep
// working; every change is in the operator journal, whose tampering `journal verify --operator`
// finds; /api/health answers a probe without a token and nothing else does; a project named
// plainly (`api`) is writable, and two tenants' `api` never meet.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { BIN, cli, tmpDir } from './helpers.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';
import { servingUrl } from './http-live.js';

const skip = await pgSkipReason();
if (skip) console.log(`# skipping the governance tests: ${skip}`);

interface Res {
  status: number;
  text: string;
  json: {
    id?: string;
    ok?: boolean;
    results?: { id: string; abstract: string }[];
    error?: { code: string; message: string; hint?: string };
  };
}

/**
 * One request on a connection of its own (no keep-alive): the tests wait seconds between
 * requests (an expiry), and a pooled socket the server closes at its keep-alive timeout just as
 * it is reused would fail the request for a reason that is not the one under test.
 */
function call(base: string, path: string, token?: string, body?: unknown): Promise<Res> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  const data = body === undefined ? undefined : JSON.stringify(body);
  if (data !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${path}`,
      { method: data === undefined ? 'GET' : 'POST', headers, agent: false },
      (r) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (d: string) => (text += d));
        r.on('end', () => {
          let json: Res['json'] = {};
          try {
            json = JSON.parse(text) as Res['json'];
          } catch {
            /* not JSON */
          }
          resolve({ status: r.statusCode ?? 0, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

function serve(url: string, home: string): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, [BIN, '--db', url, 'serve', '--port', '0'], {
    env: { ...process.env, MNEME_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return servingUrl(child).then((base) => ({ child, base }));
}

describe(
  'governance: tenants, tokens, the operator journal, /api/health, named projects',
  {
    skip: skip ?? false,
  },
  () => {
    let db: ThrowawayDb;
    const home = tmpDir('mneme-gov-');
    const servers: ChildProcess[] = [];
    let a = '';
    let b = '';
    const mneme = (args: string[]) => cli(['--json', '--db', db.url, ...args], { home });
    const token = (tenant: string, ...more: string[]) => {
      const r = mneme(['--tenant', tenant, 'token', 'create', ...more]);
      assert.equal(r.code, 0, r.stderr);
      return r.json() as { token: string; id: string; expires: string | null };
    };
    const recall = (base: string, t: string, q: string, project = 'api') =>
      call(base, `/api/recall?q=${encodeURIComponent(q)}&project=${project}`, t);

    before(async () => {
      db = await throwawayDb();
      for (const t of ['acme', 'beta']) assert.equal(mneme(['tenant', 'create', t]).code, 0);
      const [x, y] = await Promise.all([serve(db.url, home), serve(db.url, home)]);
      servers.push(x.child, y.child);
      a = x.base;
      b = y.base;
    });
    after(async () => {
      for (const s of servers) s.kill();
      await db?.drop();
    });

    it('a revoked token gets 401 on both instances at its next request; another token keeps working', async () => {
      const bot = token('acme', '--label', 'ci bot');
      const other = token('acme');
      for (const base of [a, b]) assert.equal((await recall(base, bot.token, 'x')).status, 200);

      const listed = mneme(['token', 'list']);
      assert.equal(listed.code, 0, listed.stderr);
      assert.ok(!listed.stdout.includes(bot.token), 'token list never shows the secret');
      const row = (
        listed.json() as { tokens: { id: string; lastUsed: string | null }[] }
      ).tokens.find((t) => t.id === bot.id);
      assert.ok(row?.lastUsed, 'the token’s last use is recorded');

      const rev = mneme(['token', 'revoke', bot.id]);
      assert.equal(rev.code, 0, rev.stderr);
      assert.deepEqual(rev.json(), { id: bot.id, revoked: true });
      for (const base of [a, b]) {
        const r = await recall(base, bot.token, 'x');
        assert.equal(r.status, 401, r.text);
        assert.match(r.json.error!.message, /revoked/);
        assert.match(r.json.error!.hint!, /token create/);
        assert.deepEqual(Object.keys(r.json), ['error']);
        assert.equal((await recall(base, other.token, 'x')).status, 200);
      }
      assert.equal(mneme(['token', 'revoke', bot.id]).json().revoked, false);
      assert.equal(mneme(['token', 'revoke', 'tok_nope']).code, 1);
    });

    it('a token with an expiry works until it, then is refused saying what to do', async () => {
      const soon = token('acme', '--expires', '3s');
      const later = token('acme', '--expires', '30d');
      assert.ok(soon.expires && Date.parse(soon.expires) > Date.now());
      assert.equal((await recall(a, soon.token, 'x')).status, 200);
      await new Promise((r) =>
        setTimeout(r, Math.max(0, Date.parse(soon.expires!) - Date.now()) + 300),
      );
      for (const base of [a, b]) {
        const r = await recall(base, soon.token, 'x');
        assert.equal(r.status, 401, r.text);
        assert.match(r.json.error!.message, /expired at/);
        assert.match(r.json.error!.hint!, /new token/);
        assert.equal((await recall(base, later.token, 'x')).status, 200);
      }
      const past = mneme(['--tenant', 'acme', 'token', 'create', '--expires', '2020-01-01']);
      assert.equal(past.code, 1);
      assert.match(past.stderr, /in the past/);
      assert.equal(mneme(['--tenant', 'acme', 'token', 'create', '--expires', 'soon']).code, 1);
    });

    it('a disabled tenant’s tokens are refused on both instances; another tenant’s are not; enable restores', async () => {
      const t = token('beta');
      const acme = token('acme');
      assert.equal(mneme(['tenant', 'disable', 'beta']).code, 0);
      const tenants = (
        mneme(['tenant', 'list']).json() as {
          tenants: { tenant: string; disabled: string | null }[];
        }
      ).tenants;
      assert.deepEqual(
        tenants.map((x) => [x.tenant, x.disabled !== null]),
        [
          ['acme', false],
          ['beta', true],
        ],
      );
      for (const base of [a, b]) {
        const r = await recall(base, t.token, 'x');
        assert.equal(r.status, 401, r.text);
        assert.match(r.json.error!.message, /tenant beta was disabled/);
        assert.equal((await recall(base, acme.token, 'x')).status, 200);
      }
      assert.equal(mneme(['tenant', 'enable', 'beta']).code, 0);
      for (const base of [a, b]) assert.equal((await recall(base, t.token, 'x')).status, 200);
    });

    it('/api/health answers a probe without a token and with no data; every other route needs one', async () => {
      const acme = token('acme');
      for (const base of [a, b]) {
        const probe = await call(base, '/api/health');
        assert.equal(probe.status, 200, probe.text);
        assert.deepEqual(probe.json, { ok: true });
        const full = await call(base, '/api/health', acme.token);
        assert.equal(full.status, 200);
        assert.equal((full.json as { backend?: string }).backend, 'postgres');
        assert.equal((await call(base, '/api/health', 'mnm_wrong')).status, 401);
        for (const p of [
          '/api/recall?q=x&project=api',
          '/api/projects',
          '/api/journal',
          '/metrics',
        ]) {
          assert.equal((await call(base, p)).status, 401, p);
          assert.equal((await call(base, p, acme.token)).status, 200, p);
        }
      }
    });

    it('a project named plainly is written and read; two tenants’ `api` never see each other', async () => {
      const acme = token('acme');
      const beta = token('beta');
      const acmeApi = token('acme', '--project', 'api');
      const w1 = await call(a, '/api/memories', acme.token, {
        type: 'fact',
        abstract: 'Acme api deploys from the pelican branch',
        project: 'api',
      });
      assert.equal(w1.status, 201, w1.text);
      const w2 = await call(b, '/api/memories', beta.token, {
        type: 'fact',
        abstract: 'Beta api deploys from the pelican tag',
        project: 'api',
      });
      assert.equal(w2.status, 201, w2.text);
      const mine = await recall(b, acme.token, 'pelican');
      assert.deepEqual(
        mine.json.results!.map((r) => r.abstract),
        ['Acme api deploys from the pelican branch'],
      );
      const theirs = await recall(a, beta.token, 'pelican');
      assert.deepEqual(
        theirs.json.results!.map((r) => r.abstract),
        ['Beta api deploys from the pelican tag'],
      );
      // A token allowed only `api` (by name) reads it and nothing else.
      assert.equal((await recall(a, acmeApi.token, 'pelican')).json.results!.length, 1);
      const web = await call(a, '/api/memories', acmeApi.token, {
        type: 'fact',
        abstract: 'Not allowed here',
        project: 'web',
      });
      assert.equal(web.status, 403, web.text);
      const bad = await call(a, '/api/memories', acme.token, {
        type: 'fact',
        abstract: 'A bad name',
        project: 'Not A Name!',
      });
      assert.equal(bad.status, 400, bad.text);
      assert.match(bad.json.error!.hint!, /name a project plainly/);
    });

    it('every change is in the operator journal, and tampering with it is found and stops changes', async () => {
      const ok = mneme(['journal', 'verify', '--operator']);
      assert.equal(ok.code, 0, ok.stderr);
      const report = ok.json() as { ok: boolean; entries: number };
      assert.equal(report.ok, true);
      const pool = new pg.Pool({ connectionString: db.url, max: 1 });
      try {
        const { rows } = await pool.query<{ op: string }>(
          "SELECT op FROM journal WHERE tenant_id = '_operator' ORDER BY seq",
        );
        const ops = rows.map((r) => r.op);
        assert.equal(report.entries, ops.length);
        for (const op of [
          'tenant_create',
          'token_create',
          'token_revoke',
          'tenant_disable',
          'tenant_enable',
        ])
          assert.ok(ops.includes(op), op);
        const secrets = await pool.query<{ entry: string }>(
          "SELECT entry FROM journal WHERE tenant_id = '_operator' AND entry LIKE '%mnm\\_%'",
        );
        assert.equal(secrets.rows.length, 0, 'no token secret is journaled');
        // Nobody can open the operator journal as a tenant's store.
        const asTenant = mneme(['--tenant', '_operator', 'journal', 'verify']);
        assert.equal(asTenant.code, 1);

        await pool.query(
          `UPDATE journal SET entry = replace(entry, '"tenant":"beta"', '"tenant":"gamma"')
         WHERE tenant_id = '_operator' AND seq = 2`,
        );
        const bad = mneme(['journal', 'verify', '--operator']);
        assert.equal(bad.code, 2, bad.stdout);
        assert.match(JSON.stringify(bad.json()), /seq 2 was edited/);
        const refused = mneme(['--tenant', 'acme', 'token', 'create']);
        assert.equal(refused.code, 3, refused.stderr); // corrupt
        assert.match(refused.stderr, /operator journal does not verify/);
        // A tenant's own journal is a different chain and still verifies.
        assert.equal(mneme(['--tenant', 'acme', 'journal', 'verify']).code, 0);
      } finally {
        await pool.end();
      }
    });
  },
);
