// The vector arm's embedders and how it is turned on: OpenAI-compatible and Ollama endpoints
// against a real local HTTP server started here (deterministic vectors, no network); the
// transformers.js embedder refuses without its package; settings refuse what they cannot use;
// the CLI turns the arm on by flag or environment and `status` says so.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { hashEmbedder, hashVector } from '../src/core/embed.js';
import { SchemaRegistry } from '../src/core/schema.js';
import { Engine } from '../src/engine/engine.js';
import { FileStore } from '../src/store/files/file-store.js';
import { embedderFromEnv } from '../src/surfaces/embed/settings.js';
import { HUMAN, PROJECT_A, cli, testClock, tmpDir } from './helpers.js';

interface Seen {
  path: string;
  auth: string | undefined;
  body: { model: string; input: string[]; dimensions?: number };
}

/** A fake model server: hashed n-gram vectors for whatever it is sent, in both dialects. */
function modelServer() {
  const seen: Seen[] = [];
  let failing = false;
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(data) as Seen['body'];
      seen.push({ path: req.url ?? '', auth: req.headers.authorization, body });
      if (failing) {
        res.writeHead(503).end('overloaded');
        return;
      }
      const dim = body.dimensions ?? 64;
      const vecs = body.input.map((t) => [...hashVector(t, dim)]);
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url === '/v1/embeddings')
        res.end(
          JSON.stringify({
            // Out of order on purpose: the client must sort by index.
            data: vecs.map((embedding, index) => ({ embedding, index })).reverse(),
            model: body.model,
          }),
        );
      else if (req.url === '/api/embed')
        res.end(JSON.stringify({ model: body.model, embeddings: vecs }));
      else res.writeHead(404).end();
    });
  });
  return {
    seen,
    setFailing: (v: boolean) => (failing = v),
    start: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () =>
          resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
        ),
      ),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const srv = modelServer();
let base = '';
before(async () => {
  base = await srv.start();
});
after(() => srv.stop());

async function engineWith(env: NodeJS.ProcessEnv) {
  const embedder = embedderFromEnv(env);
  const store = await FileStore.open(tmpDir('mneme-emb-'), { durable: false });
  return new Engine({
    store,
    clock: testClock('2026-03-01T00:00:00.000Z'),
    registry: new SchemaRegistry(),
    binding: { project: PROJECT_A, identity: PROJECT_A },
    surface: 'human',
    ...(embedder ? { embedder } : {}),
  });
}

describe('HTTP embedders against a local model server', () => {
  it('openai: POST {base}/embeddings with model, key and dimensions; vectors fused into recall', async () => {
    const e = await engineWith({
      MNEME_EMBEDDER: 'openai',
      MNEME_EMBED_URL: `${base}/v1/`,
      MNEME_EMBED_MODEL: 'fake-embed',
      MNEME_EMBED_DIM: '48',
      MNEME_EMBED_KEY_ENV: 'MY_KEY',
      MY_KEY: 'sk-test',
      MNEME_EMBED_MIN_SIMILARITY: '0.2',
    });
    await e.apply(
      [
        { op: 'remember', type: 'fact', abstract: 'Invoices are generated on the first weekday' },
        {
          op: 'remember',
          type: 'fact',
          abstract: 'Use pnpm in this repository',
          fields: { subject: 'pm' },
        },
      ],
      HUMAN,
    );
    const before = srv.seen.length;
    assert.equal(before, 0, 'writes called no model');
    const r = await e.recall('invoicez generatd', { explain: true });
    assert.deepEqual(
      r.results.map((x) => x.abstract),
      ['Invoices are generated on the first weekday'],
      'found by vector only (the words do not match), and the unrelated memory is not',
    );
    assert.equal(r.vector?.embedder, `openai:fake-embed@${base}/v1#48`);
    const calls = srv.seen.filter((s) => s.path === '/v1/embeddings');
    assert.ok(calls.length >= 2, 'the query, then the missing revisions');
    assert.equal(calls[0]!.auth, 'Bearer sk-test');
    assert.equal(calls[0]!.body.model, 'fake-embed');
    assert.equal(calls[0]!.body.dimensions, 48);
    assert.deepEqual(calls[0]!.body.input, ['invoicez generatd']);
    const status = await e.status();
    assert.deepEqual(status.vector, {
      on: true,
      embedder: `openai:fake-embed@${base}/v1#48`,
      revisions: 2,
      withVector: 2,
    });
  });

  it('ollama: POST {base}/api/embed; the dimension is learnt from the answer', async () => {
    srv.seen.length = 0;
    const e = await engineWith({
      MNEME_EMBEDDER: 'ollama',
      MNEME_EMBED_URL: base,
      MNEME_EMBED_MODEL: 'nomic-fake',
      MNEME_EMBED_MIN_SIMILARITY: '0.2',
    });
    await e.apply(
      [{ op: 'remember', type: 'fact', abstract: 'Backups run nightly at 02:00' }],
      HUMAN,
    );
    const report = await e.indexVectors();
    assert.equal(report.embedder, `ollama:nomic-fake@${base}#64`);
    assert.equal(report.withVector, 1);
    assert.ok(srv.seen.every((s) => s.path === '/api/embed' && s.auth === undefined));
    const r = await e.recall('backupz nightlee');
    assert.equal(r.results[0]?.abstract, 'Backups run nightly at 02:00');
  });

  it('a failing endpoint never fails a write; recall answers lexically and says why', async () => {
    const e = await engineWith({
      MNEME_EMBEDDER: 'openai',
      MNEME_EMBED_URL: `${base}/v1`,
      MNEME_EMBED_MODEL: 'fake-embed',
    });
    srv.setFailing(true);
    try {
      const [w] = await e.apply(
        [{ op: 'remember', type: 'fact', abstract: 'The cache TTL is ten minutes' }],
        HUMAN,
      );
      assert.ok(w!.id);
      const r = await e.recall('cache TTL');
      assert.equal(r.results[0]?.abstract, 'The cache TTL is ten minutes');
      assert.match(r.vector!.error!, /answered 503/);
      const idx = await e.indexVectors();
      assert.match(idx.error!, /503/);
    } finally {
      srv.setFailing(false);
    }
    const idx = await e.indexVectors();
    assert.equal(idx.error, undefined);
    assert.equal(idx.withVector, 1);
  });
});

describe('turning the arm on', () => {
  it('is off unless named; unknown or incomplete settings are refused with what to set', () => {
    assert.equal(embedderFromEnv({}), undefined);
    assert.equal(embedderFromEnv({ MNEME_EMBEDDER: 'hash' }, 'off'), undefined);
    assert.equal(embedderFromEnv({}, 'hash')?.model, hashEmbedder().model);
    assert.throws(
      () => embedderFromEnv({ MNEME_EMBEDDER: 'bert' }),
      /MNEME_EMBEDDER="bert" is not a valid embed.embedder: expected one of off, hash/,
    );
    assert.throws(
      () => embedderFromEnv({ MNEME_EMBEDDER: 'ollama' }),
      (e: { hint?: string }) => /MNEME_EMBED_MODEL/.test(e.hint ?? ''),
    );
    assert.throws(
      () => embedderFromEnv({ MNEME_EMBEDDER: 'transformers', MNEME_EMBED_DIR: tmpDir() }),
      /not a transformers.js model directory/,
    );
    assert.throws(
      () => embedderFromEnv({ MNEME_EMBEDDER: 'hash', MNEME_EMBED_DIM: '0' }),
      /MNEME_EMBED_DIM="0" is not a valid embed.dim: expected an integer ≥ 1/,
    );
  });

  it('transformers: without the package installed, recall refuses and says how to fix or turn off', async () => {
    const dir = tmpDir();
    (await import('node:fs')).writeFileSync(`${dir}/config.json`, '{}');
    const e = await engineWith({ MNEME_EMBEDDER: 'transformers', MNEME_EMBED_DIR: dir });
    await e.apply([{ op: 'remember', type: 'fact', abstract: 'A fact to find' }], HUMAN);
    await assert.rejects(
      e.recall('fact'),
      (err: { code?: string; hint?: string; message: string }) => {
        assert.equal(err.code, 'refused');
        assert.match(err.message, /@huggingface\/transformers, which is not installed/);
        assert.match(err.hint!, /npm install @huggingface\/transformers/);
        assert.match(err.hint!, /unset MNEME_EMBEDDER/);
        return true;
      },
    );
  });

  it('CLI: --embedder hash turns it on for one command; status counts vectors; --explain shows both ranks', () => {
    const home = tmpDir();
    assert.equal(
      cli(['remember', '--type', 'fact', '--abstract', 'Releases are cut on Tuesdays'], { home })
        .code,
      0,
    );
    const off = cli(['status'], { home });
    assert.match(off.stdout, /vectors {2}off/);
    const idx = cli(['--embedder', 'hash', 'index', 'vectors', '--json'], { home });
    assert.equal(idx.code, 0, idx.stderr);
    assert.equal(idx.json().withVector, 1);
    const on = cli(['status', '--json'], { home, env: { MNEME_EMBEDDER: 'hash' } });
    assert.deepEqual(on.json().vector, {
      on: true,
      embedder: 'hash:ngram3-4#256',
      revisions: 1,
      withVector: 1,
    });
    const r = cli(['recall', 'releases', 'tuesdays', '--explain'], {
      home,
      env: { MNEME_EMBEDDER: 'hash' },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /fused: lexical #1, vector #1 sim/);
    const plain = cli(['recall', 'releases', 'tuesdays', '--explain'], { home });
    assert.doesNotMatch(plain.stdout, /fused/);
    const bad = cli(['--embedder', 'nope', 'recall', 'x'], { home });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--embedder "nope" is not valid: expected one of off, hash/);
  });
});
