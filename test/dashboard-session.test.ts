// The dashboard's human gate in-process: a login ticket works once, pages need the session, and
// with a review passphrase set a decision without it changes nothing while one with it does.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { hashPassphrase } from '../src/engine/passphrase.js';
import fs from 'node:fs';
import { SLEEP, HUMAN, cli, tmpDir } from './helpers.js';
import { httpFixture } from './http-fixture.js';

let f: Awaited<ReturnType<typeof httpFixture>>;
before(async () => {
  f = await httpFixture();
});
after(() => f.close());

const form = (data: Record<string, string>, cookie: string) => ({
  method: 'POST',
  headers: {
    'Content-Type': 'application/x-www-form-urlencoded',
    Cookie: cookie,
    Origin: 'http://localhost',
  },
  body: new URLSearchParams(data).toString(),
});

it('a login ticket works once and sets an HttpOnly SameSite=Strict cookie', async () => {
  assert.equal((await f.app.request('/review')).status, 401);
  const t = f.sessions.issueTicket();
  const first = await f.app.request(`/login?t=${t}`);
  assert.equal(first.status, 303);
  const cookie = first.headers.get('set-cookie') ?? '';
  assert.match(cookie, /mneme_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict/);
  assert.equal((await f.app.request(`/login?t=${t}`)).status, 403, 'spent');
  assert.equal((await f.app.request('/login?t=guess')).status, 403);
  const page = await f.app.request('/review', { headers: { Cookie: cookie.split(';')[0]! } });
  assert.equal(page.status, 200);
});

it('with a passphrase set, a decision needs it', async () => {
  const e = f.engine(null);
  const [m] = await e.apply(
    [{ op: 'remember', type: 'fact', abstract: 'The llama job runs nightly' }],
    HUMAN,
  );
  const [p] = await e.apply(
    [
      {
        op: 'propose',
        kind: 'retract',
        targets: [m!.id],
        summary: 'retract llama',
        accept: [{ op: 'retract', id: m!.id }],
      },
    ],
    SLEEP,
  );
  await e.apply([{ op: 'set_passphrase', ...hashPassphrase('correct horse battery') }], HUMAN);
  const login = await f.app.request(`/login?t=${f.sessions.issueTicket()}`);
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const html = await (await f.app.request('/review', { headers: { Cookie: cookie } })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
  const effects = /name="effects_accept"\s+value="([^"]+)"/.exec(html)![1]!;
  assert.match(html, /withdraws mem_\w+ &quot;The llama job runs nightly&quot;/);
  assert.match(html, /name="passphrase"/);
  const without = await f.app.request(
    `/review/${p!.proposal}`,
    form({ csrf, decision: 'accept' }, cookie),
  );
  assert.equal(without.status, 303);
  assert.equal((await f.store.proposals({ id: p!.proposal! }))[0]!.state, 'pending');
  assert.match(
    await (await f.app.request('/review', { headers: { Cookie: cookie } })).text(),
    /passphrase is wrong/,
  );
  const withIt = await f.app.request(
    `/review/${p!.proposal}`,
    form(
      {
        csrf,
        decision: 'accept',
        effects_accept: effects,
        passphrase: 'correct horse battery',
        reason: 'gone',
      },
      cookie,
    ),
  );
  assert.equal(withIt.status, 303);
  const [decided] = await f.store.proposals({ id: p!.proposal! });
  assert.equal(decided!.state, 'accepted');
  assert.deepEqual(decided!.decided_by, { kind: 'human', surface: 'dashboard' });
});

it('`mneme ui` refuses inside an agent session (a login URL would hand the agent the human surface)', () => {
  const home = tmpDir();
  const r = cli(['ui', '--port', '0'], { home, env: { CLAUDECODE: '1' } });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /refuses to run inside an agent session/);
  assert.doesNotMatch(r.stdout, /login\?t=/);
  const off = cli(['serve', '--host', '0.0.0.0', '--port', '0'], { home });
  assert.equal(off.code, 2, 'a non-loopback bind without tokens is refused');
  assert.match(off.stderr, /--token-file/);
  fs.rmSync(home, { recursive: true, force: true });
});
