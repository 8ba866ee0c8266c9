// HTTP abuse: a client that sends its request headers too slowly is cut off, while a normal
// request to the same server is served (a real listening server, a raw TCP client).
import assert from 'node:assert/strict';
import net from 'node:net';
import { it } from 'node:test';
import { startServer } from '../src/surfaces/http/server.js';
import { gitRepo, tmpDir } from './helpers.js';

it('a slow client is disconnected; a normal request still succeeds', async () => {
  const server = await startServer({
    store: tmpDir('mneme-slow-'),
    cwd: gitRepo('git@github.com:acme/slow.git'),
    env: { MNEME_DURABLE: '0', MNEME_HTTP_HEADERS_TIMEOUT_MS: '400' },
    host: '127.0.0.1',
    port: 0,
    log: () => {},
  });
  try {
    const { port } = new URL(server.url);
    const started = Date.now();
    const outcome = await new Promise<{ closed: boolean; data: string }>((resolve) => {
      const sock = net.connect(Number(port), '127.0.0.1');
      let data = '';
      sock.on('data', (d) => (data += d));
      sock.on('close', () => resolve({ closed: true, data }));
      sock.on('error', () => {});
      // Headers begun and never finished; keep dribbling a byte now and then.
      sock.write('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      const drip = setInterval(() => sock.writable && sock.write('X'), 100);
      sock.on('close', () => clearInterval(drip));
      setTimeout(() => {
        clearInterval(drip);
        sock.destroy();
        resolve({ closed: false, data });
      }, 8_000);
    });
    assert.equal(outcome.closed, true, 'the server closed the slow connection');
    assert.ok(Date.now() - started < 8_000);
    assert.doesNotMatch(outcome.data, /"status"/, 'the slow request got no API answer');
    const ok = await fetch(`${server.url}/api/health`);
    assert.equal(ok.status, 200);
  } finally {
    await server.close();
  }
});
