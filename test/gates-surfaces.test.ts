// Every write entry point consults tombstones (invariant 8), continued for the agent and HTTP
// surfaces: the MCP tools (SDK client over InMemoryTransport) and the HTTP API (in-process),
// each refusing a rejected value while an unrejected one through the same entry point is stored.
// The CLI, importer, hand edits (correction.test.ts) and the distiller (hooks-e2e.test.ts) are
// covered beside their own surfaces.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer } from '../src/surfaces/mcp/server.js';
import { HUMAN, engineFor, testClock } from './helpers.js';
import { httpFixture, jsonPost } from './http-fixture.js';

const REJECTED = 'Session tokens live for 30 days';

describe('tombstones gate the agent and HTTP surfaces', () => {
  it('MCP remember and supersede refuse a rejected value; a new value passes', async () => {
    const f = await httpFixture();
    try {
      const human = f.engine(null);
      const [m] = await human.apply(
        [
          {
            op: 'remember',
            type: 'fact',
            abstract: REJECTED,
            fields: { subject: 'token lifetime' },
            global: true,
          },
        ],
        HUMAN,
      );
      await human.apply([{ op: 'retract', id: m!.id, reject: true }], HUMAN);
      const agent = engineFor(f.store, null, testClock('2026-06-01T00:00:00.000Z'), 'agent');
      const [c, s] = InMemoryTransport.createLinkedPair();
      const server = createMcpServer(agent);
      await server.connect(s);
      const client = new Client({ name: 'gate-test', version: '1.0.0' });
      await client.connect(c);
      const call = async (name: string, args: Record<string, unknown>) => {
        const r = await client.callTool({ name, arguments: args });
        return {
          isError: r.isError === true,
          body: JSON.parse((r.content as { text: string }[])[0]!.text),
        };
      };
      const refused = await call('remember', {
        type: 'fact',
        abstract: 'session TOKENS live for 30 days.',
        global: true,
      });
      assert.equal(refused.isError, true);
      assert.equal(refused.body.code, 'refused');
      const ok = await call('remember', {
        type: 'fact',
        abstract: 'Session tokens live for 7 days',
        global: true,
      });
      assert.equal(ok.isError, false, JSON.stringify(ok.body));
      const sup = await call('supersede', {
        id: ok.body.id,
        abstract: REJECTED,
        valid_from: '2030-01-01',
      });
      assert.equal(sup.isError, true);
      assert.equal(sup.body.code, 'refused');
      const rec = await call('recall', { query: 'session tokens days' });
      assert.deepEqual(
        rec.body.results.map((r: { abstract: string }) => r.abstract),
        ['Session tokens live for 7 days'],
      );
      await client.close();
      await server.close();
    } finally {
      await f.close();
    }
  });

  it('HTTP remember and supersede refuse a rejected value; a new value passes', async () => {
    const f = await httpFixture();
    try {
      const human = f.engine(null);
      const [m] = await human.apply(
        [{ op: 'remember', type: 'fact', abstract: REJECTED, global: true }],
        HUMAN,
      );
      await human.apply([{ op: 'retract', id: m!.id, reject: true }], HUMAN);
      const refused = await f.app.request(
        '/api/memories',
        jsonPost({ type: 'fact', abstract: 'Session  tokens live for 30 days' }),
      );
      assert.equal(refused.status, 403);
      const ok = await f.app.request(
        '/api/memories',
        jsonPost({ type: 'fact', abstract: 'Session tokens live for 14 days' }),
      );
      assert.equal(ok.status, 201);
      const { id } = (await ok.json()) as { id: string };
      const sup = await f.app.request(
        `/api/memories/${id}/supersede`,
        jsonPost({ abstract: REJECTED }),
      );
      assert.equal(sup.status, 403);
      const rec = (await (await f.app.request('/api/recall?q=session%20tokens')).json()) as {
        results: { abstract: string }[];
      };
      assert.deepEqual(
        rec.results.map((r) => r.abstract),
        ['Session tokens live for 14 days'],
      );
    } finally {
      await f.close();
    }
  });
});
