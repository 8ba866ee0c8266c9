// MCP over Streamable HTTP: the SDK's own client against a real listening `serve` server, bound
// to the project of the directory the server started in.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { liveServer } from './http-live.js';

let s: Awaited<ReturnType<typeof liveServer>>;
before(async () => {
  s = await liveServer();
});
after(() => s.stop());

it('an MCP client remembers and recalls over /mcp; the write is an agent’s, in the server’s project', async () => {
  const client = new Client({ name: 'http-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  try {
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'recall'));
    const w = await client.callTool({
      name: 'remember',
      arguments: { type: 'decision', abstract: 'Checkout uses the capybara payment gateway' },
    });
    assert.notEqual(w.isError, true);
    const r = await client.callTool({ name: 'recall', arguments: { query: 'capybara gateway' } });
    const text = (r.content as { text: string }[])[0]!.text;
    const found = JSON.parse(text) as { results: { abstract: string; scope: string }[] };
    assert.equal(found.results.length, 1);
    assert.match(found.results[0]!.scope, /^acme-shop-[0-9a-f]{8}$/);
    const [e] = await s.store.journal({ op: 'remember' });
    assert.equal(e!.actor.kind, 'agent');
    assert.equal(e!.actor.surface, 'mcp');
    const none = await client.callTool({ name: 'recall', arguments: { query: 'okapi' } });
    assert.equal(JSON.parse((none.content as { text: string }[])[0]!.text).results.length, 0);
  } finally {
    await client.close();
  }
});
