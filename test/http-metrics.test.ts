// /metrics on the embedded-store server: open on a plain loopback server, and behind a token as
// soon as the server has tokens (--token-file), loopback included.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { startServer } from '../src/surfaces/http/server.js';
import { liveServer } from './http-live.js';
import { tmpDir } from './helpers.js';

let s: Awaited<ReturnType<typeof liveServer>>;
before(async () => {
  s = await liveServer();
});
after(() => s.stop());

it('a loopback server shows its counters and the store gauges without a token', async () => {
  const w = await fetch(`${s.url}/api/memories`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'fact', abstract: 'The build cache lives on the okapi host' }),
  });
  assert.equal(w.status, 201);
  const r = await fetch(`${s.url}/metrics`);
  assert.equal(r.status, 200);
  const text = await r.text();
  assert.match(text, /^mneme_http_requests_total\{route="POST \/api\/memories",status="201"\} 1$/m);
  assert.match(text, /^mneme_writes_total 1$/m);
  assert.match(text, /^mneme_journal_length 1$/m);
  assert.match(text, /^mneme_proposals_pending 0$/m);
});

it('with a token file, /metrics needs a token even on loopback', async () => {
  const dir = tmpDir('mneme-metrics-');
  const file = path.join(dir, 'tokens');
  const token = 'a'.repeat(32);
  fs.writeFileSync(file, `${token}\n`);
  const t = await startServer({
    store: path.join(dir, 'store'),
    cwd: dir,
    env: { MNEME_DURABLE: '0' },
    port: 0,
    tokenFile: file,
    log: () => {},
  });
  try {
    const none = await fetch(`${t.url}/metrics`);
    assert.equal(none.status, 401);
    assert.doesNotMatch(await none.text(), /mneme_/);
    const ok = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(ok.status, 200);
    assert.match(await ok.text(), /^mneme_journal_length 0$/m);
  } finally {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
