// The MCP surface, driven by the SDK's own client: in-process over InMemoryTransport against a
// real file store, and once over real stdio (`node bin/mneme.js mcp`). Invariants pinned: scope
// binding (5), trust from provenance not payload (7), no agent approval verbs (9).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { newMemoryId } from '../src/core/ids.js';
import type { Engine } from '../src/engine/engine.js';
import { mnemeBin } from '../src/surfaces/install-root.js';
import { agentSafe } from '../src/surfaces/mcp/errors.js';
import { createMcpServer, TOOL_NAMES } from '../src/surfaces/mcp/server.js';
import { openEngine } from '../src/surfaces/compose.js';

const env = { ...process.env, MNEME_DURABLE: '0' };

function gitRepo(parent: string, name: string, remote: string): string {
  const dir = path.join(parent, name);
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('git', ['init', '-q', dir]);
  execFileSync('git', ['-C', dir, 'remote', 'add', 'origin', remote]);
  return dir;
}

async function connect(engine: Engine) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createMcpServer(engine);
  await server.connect(serverSide);
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(clientSide);
  return {
    client,
    async call(name: string, args: Record<string, unknown>) {
      const r = await client.callTool({ name, arguments: args });
      const content = r.content as { type: string; text: string }[];
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool results are JSON
      return { isError: r.isError === true, body: JSON.parse(content[0]!.text) as any };
    },
    async close() {
      await client.close();
      await server.close();
    },
  };
}

describe('MCP server (in-process, SDK client over InMemoryTransport)', () => {
  let tmp: string;
  let store: string;
  let repoA: string;
  let repoB: string;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-mcp-'));
    store = path.join(tmp, 'store');
    repoA = gitRepo(tmp, 'a', 'git@github.com:acme/alpha.git');
    repoB = gitRepo(tmp, 'b', 'git@github.com:acme/beta.git');
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const open = (cwd: string) => openEngine({ store, cwd, env, surface: 'agent' });

  it('lists exactly the documented tools, none of them a human-only verb', async () => {
    const engine = await open(repoA);
    const s = await connect(engine);
    try {
      const { tools } = await s.client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOL_NAMES].sort());
      for (const t of tools) {
        assert.doesNotMatch(t.name, /accept|confirm|approve|lift|trust|review|propos|purge/i);
        assert.doesNotMatch(
          t.description ?? '',
          /\b(accept|approve|lift|mneme review|dashboard|passphrase)\b/i,
        );
        const props = Object.keys((t.inputSchema.properties ?? {}) as object);
        for (const forbidden of ['scope', 'project', 'trust', 'store'])
          assert.ok(!props.includes(forbidden), `${t.name} takes no ${forbidden} argument`);
      }
      // The one scope-ish argument that exists: remember may write to global.
      const remember = tools.find((t) => t.name === 'remember')!;
      assert.ok(Object.keys(remember.inputSchema.properties ?? {}).includes('global'));
    } finally {
      await s.close();
      await engine.close();
    }
  });

  it('remember then recall finds it, written by an agent actor at trust claimed', async () => {
    const engine = await open(repoA);
    const s = await connect(engine);
    try {
      const w = await s.call('remember', {
        type: 'decision',
        abstract: 'Invoices are rounded half-even to the cent',
        fields: { subject: 'invoice rounding' },
      });
      assert.equal(w.isError, false, JSON.stringify(w.body));
      assert.equal(w.body.trust, 'claimed');
      assert.match(w.body.handle, /^\[mem:mem_/);
      const r = await s.call('recall', { query: 'invoice rounding' });
      assert.equal(r.isError, false);
      assert.deepEqual(
        r.body.results.map((x: { id: string }) => x.id),
        [w.body.id],
      );
      const h = await s.call('history', { id: w.body.id });
      assert.deepEqual(h.body.revisions[0].actor, {
        kind: 'agent',
        surface: 'mcp',
        host: 'mcp-test',
      });
      const t = await s.call('trace', { id: w.body.id });
      assert.equal(t.isError, false);
      assert.equal(t.body.journal[0].op, 'remember');
      // Each journal entry carries its chain hash (docs/mcp.md), the one the journal holds.
      const logged = await engine.log({ id: w.body.id });
      assert.deepEqual(
        t.body.journal.map((e: { hash: string }) => e.hash),
        logged.map((e) => e.hash),
      );
      assert.match(t.body.journal[0].hash, /^[0-9a-f]{64}$/);
      assert.equal(t.body.revisions[0].actor.surface, 'mcp');
      const f = await s.call('feedback', { id: w.body.id, useful: true });
      assert.equal(f.isError, false);
      const usage = fs
        .readdirSync(path.join(store, 'usage'))
        .map((n) => fs.readFileSync(path.join(store, 'usage', n), 'utf8'))
        .join('');
      assert.match(usage, /"kind":"feedback"/);
      const st = await s.call('status', {});
      assert.equal(st.body.project, engine.binding.project);
    } finally {
      await s.close();
      await engine.close();
    }
  });

  it("serves project A's memory to a server bound to A and never project B's", async () => {
    const engineB = await open(repoB);
    const b = await connect(engineB);
    const wb = await b.call('remember', {
      type: 'fact',
      abstract: 'Staging database host is db-staging-beta',
      fields: { subject: 'staging database host' },
    });
    assert.equal(wb.isError, false, JSON.stringify(wb.body));
    await b.close();
    await engineB.close();

    const engineA = await open(repoA);
    const a = await connect(engineA);
    try {
      const wa = await a.call('remember', {
        type: 'fact',
        abstract: 'Staging database host is db-staging-alpha',
        fields: { subject: 'staging database host' },
      });
      assert.equal(wa.isError, false, JSON.stringify(wa.body));
      const r = await a.call('recall', { query: 'staging database host', limit: 20 });
      const ids = r.body.results.map((x: { id: string }) => x.id);
      assert.ok(ids.includes(wa.body.id), "A's own memory is served");
      assert.ok(!ids.includes(wb.body.id), "B's memory is not");
      // Reading B's memory by id from A is "not found", not a leak.
      const rd = await a.call('read', { id: wb.body.id });
      assert.equal(rd.isError, true);
      assert.equal(rd.body.code, 'not_found');
      const ok = await a.call('read', { id: wa.body.id });
      assert.equal(ok.body.abstract, 'Staging database host is db-staging-alpha');
    } finally {
      await a.close();
      await engineA.close();
    }
  });

  it('refuses payload fields that try to set trust or scope; a plain write lands at claimed', async () => {
    const engine = await open(repoA);
    const s = await connect(engine);
    try {
      const bad = await s.call('remember', {
        type: 'preference',
        abstract: 'Use tabs for indentation',
        fields: { subject: 'indentation' },
        trust: 'confirmed',
        scope: 'global',
      });
      assert.equal(bad.isError, true);
      assert.equal(bad.body.code, 'invalid');
      assert.match(bad.body.message, /trust|scope/);
      const miss = await s.call('recall', { query: 'tabs indentation' });
      assert.equal(miss.body.results.length, 0, 'nothing was stored by the refused call');

      const good = await s.call('remember', {
        type: 'preference',
        abstract: 'Use spaces for indentation',
        fields: { subject: 'indentation style' },
      });
      assert.equal(good.body.trust, 'claimed');
      const sup = await s.call('supersede', {
        id: good.body.id,
        abstract: 'Use two spaces for indentation',
        trust: 'verified',
      });
      assert.equal(sup.isError, true);
      const read = await s.call('read', { id: good.body.id });
      assert.equal(read.body.trust, 'claimed');
      assert.equal(read.body.rev, 1);
      assert.equal(read.body.scope, engine.binding.project);
    } finally {
      await s.close();
      await engine.close();
    }
  });

  it('returns structured errors for bad and unknown ids', async () => {
    const engine = await open(repoA);
    const s = await connect(engine);
    try {
      const bad = await s.call('read', { id: 'not-an-id' });
      assert.equal(bad.isError, true);
      assert.equal(bad.body.code, 'invalid');
      assert.equal(typeof bad.body.message, 'string');
      assert.equal(typeof bad.body.hint, 'string');
      const missing = await s.call('retract', { id: newMemoryId(new Date()) });
      assert.equal(missing.isError, true);
      assert.equal(missing.body.code, 'not_found');
      const wrongType = await s.call('recall', { query: 42 });
      assert.equal(wrongType.isError, true);
      assert.equal(wrongType.body.code, 'invalid');
    } finally {
      await s.close();
      await engine.close();
    }
  });

  it('strips instructions for human-only actions from text agents read', () => {
    assert.equal(
      agentSafe('refused: the value was rejected; run `mneme tombstone lift abc` to allow it'),
      'refused: the value was rejected; run a person to allow it',
    );
    assert.equal(
      agentSafe('no memory mem_1; check with `mneme recall`'),
      'no memory mem_1; check with `mneme recall`',
    );
  });

  it('refuses to serve an engine opened for a human surface', async () => {
    const engine = await openEngine({ store, cwd: repoA, env, surface: 'human' });
    try {
      assert.throws(() => createMcpServer(engine), /surface "agent"/);
    } finally {
      await engine.close();
    }
  });
});

describe('mneme mcp over real stdio', () => {
  it('remembers and recalls through the spawned binary', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-mcp-stdio-'));
    const repo = gitRepo(tmp, 'repo', 'https://github.com/acme/stdio.git');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [mnemeBin(), 'mcp'],
      cwd: repo,
      env: { ...(env as Record<string, string>), MNEME_HOME: path.join(tmp, 'store') },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    try {
      await client.connect(transport);
      const w = await client.callTool({
        name: 'remember',
        arguments: {
          type: 'procedure',
          abstract: 'Release by tagging vX.Y.Z and pushing the tag',
          fields: { subject: 'release process' },
        },
      });
      assert.notEqual(w.isError, true, JSON.stringify(w.content));
      const id = (w.structuredContent as { id: string }).id;
      const r = await client.callTool({ name: 'recall', arguments: { query: 'release tag' } });
      const results = (r.structuredContent as { results: { id: string; scope: string }[] }).results;
      assert.deepEqual(
        results.map((x) => x.id),
        [id],
      );
      assert.match(results[0]!.scope, /stdio/);
      // status names the store this server writes to (doctor compares it with the hooks').
      const st = await client.callTool({ name: 'status', arguments: {} });
      assert.equal((st.structuredContent as { store: string }).store, path.join(tmp, 'store'));
      // An unknown tool is a JSON-RPC error whose message carries the code once, names the
      // tool and lists the real ones.
      const unknown = await client.callTool({ name: 'recal', arguments: {} }).then(
        () => null,
        (e: Error) => e,
      );
      assert.ok(unknown, 'calling an unknown tool fails');
      assert.equal((unknown as Error & { code?: number }).code, -32602);
      assert.match(
        unknown.message,
        /^MCP error -32602: unknown tool "recal"; the tools are recall, /,
      );
      assert.equal(unknown.message.match(/MCP error/g)?.length, 1, unknown.message);
    } finally {
      await client.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
