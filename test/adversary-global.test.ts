// Adversary, issue 14 item 4: a value forgotten in project A never comes back to A through the
// global scope — not by a person's `remember --global`, not by an agent's MCP `remember` with
// `global: true`, not written from project B — on any read path (recall, read, the session-start
// hook, MCP recall/read). Project B, which never rejected it, is unaffected (the "does" twins).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { FileStore } from '../src/store/files/file-store.js';
import type { Store } from '../src/store/port.js';
import { AGENT, HUMAN, engineFor, testClock, tmpDir } from './helpers.js';
import { BIN, contextOf, makeWorld, type World } from './hook-helpers.js';
import { pgSkipReason, throwawayStore } from './pg-fixtures.js';

// Asked before any test runs, so blocking CLI tests cannot time the probe out.
const pgSkip = await pgSkipReason();

const VALUE = 'The staging database password rotates every 90 days';

async function mcp(w: World, cwd: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    cwd,
    env: { ...(w.env as Record<string, string>), CLAUDECODE: '1' },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'adversary', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

const ids = (r: { results: { id: string }[] }) => r.results.map((x) => x.id);

describe('a value forgotten in a project does not come back through global', () => {
  let w: World;
  let a: string;
  let b: string;
  let thirtyDays = '';
  before(() => {
    w = makeWorld();
    a = w.project('alpha', 'git@github.com:acme/alpha.git');
    b = w.project('bravo', 'git@github.com:acme/bravo.git');
    const id = w.json<{ id: string }>(['remember', '--type', 'fact', '--abstract', VALUE], a).id;
    assert.equal(w.cli(['forget', id], { cwd: a }).code, 0);
  });
  after(() => w.cleanup());

  it('a person in A cannot write it to global; a different value still goes', () => {
    const r = w.cli(['remember', '--global', '--type', 'fact', '--abstract', VALUE], { cwd: a });
    assert.equal(r.code, 2, r.stdout);
    assert.match(r.stderr, /rejected before/);
    assert.doesNotMatch(r.stderr, /bravo/);
    const other = w.cli(
      [
        'remember',
        '--global',
        '--type',
        'fact',
        '--abstract',
        'The staging database password rotates every 30 days',
      ],
      { cwd: a },
    );
    assert.equal(other.code, 0, other.stderr);
    thirtyDays = JSON.parse(
      w.cli(['--json', 'recall', 'password rotates 30 days'], { cwd: a }).stdout,
    ).results[0].id;
  });

  it('an agent in A cannot write it to global over MCP', async () => {
    const client = await mcp(w, a);
    try {
      const r = await client.callTool({
        name: 'remember',
        arguments: { type: 'fact', abstract: VALUE.toUpperCase(), global: true },
      });
      assert.equal(r.isError, true, JSON.stringify(r.content));
      assert.match(JSON.stringify(r.content), /rejected before/);
      const ok = await client.callTool({
        name: 'remember',
        arguments: { type: 'fact', abstract: 'The staging cache is flushed hourly', global: true },
      });
      assert.notEqual(ok.isError, true, JSON.stringify(ok.content));
    } finally {
      await client.close();
    }
  });

  it('written to global from B, it is served in B and withheld in A on every read path', async () => {
    const g = w.json<{ id: string }>(
      ['remember', '--global', '--type', 'fact', '--abstract', `${VALUE}.`],
      b,
    );
    assert.equal(w.json<{ scope: string }>(['read', g.id], b).scope, 'global');
    // B never rejected it: recall, read and the session-start block serve it there.
    assert.ok(ids(w.json(['recall', 'staging database password'], b)).includes(g.id));
    assert.equal(w.cli(['read', g.id], { cwd: b }).code, 0);
    const start = (cwd: string, session: string) =>
      contextOf(
        w.hook(
          'session-start',
          w.payload('session-start.json', { SESSION: session, TRANSCRIPT: '', CWD: cwd }),
          cwd,
        ).stdout,
      );
    assert.match(start(b, 'sess-b'), new RegExp(`mem:${g.id}`));

    // A rejected it: every read path withholds it.
    const inA = w.json<{ results: { id: string }[]; excluded: { id: string; reason: string }[] }>(
      ['recall', 'staging database password', '--explain'],
      a,
    );
    assert.ok(!ids(inA).includes(g.id), 'recall in A does not serve it');
    assert.ok(ids(inA).includes(thirtyDays), 'recall in A still serves the other global value');
    assert.deepEqual(
      inA.excluded.filter((x) => x.id === g.id).map((x) => x.reason),
      ['rejected_here'],
    );
    const read = w.cli(['read', g.id], { cwd: a });
    assert.equal(read.code, 1);
    assert.match(read.stderr, /withheld here/);
    const block = start(a, 'sess-a');
    assert.doesNotMatch(block, new RegExp(g.id));
    assert.match(block, /staging cache is flushed hourly/, 'the rest of global is injected in A');

    const client = await mcp(w, a);
    try {
      const r = await client.callTool({
        name: 'recall',
        arguments: { query: 'staging database password' },
      });
      const served = (r.structuredContent as { results: { id: string }[] }).results;
      assert.ok(!served.some((x) => x.id === g.id), 'MCP recall in A does not serve it');
      const rd = await client.callTool({ name: 'read', arguments: { id: g.id } });
      assert.equal(rd.isError, true);
    } finally {
      await client.close();
    }
  });

  it('in the body of a global memory from B, it is withheld in A and served in B', () => {
    const g = w.json<{ id: string }>(
      [
        'remember',
        '--global',
        '--type',
        'reference',
        '--abstract',
        'Staging runbook notes',
        '--body',
        `Access\n\n${VALUE}, so fetch it from the vault first.`,
      ],
      b,
    ).id;
    assert.ok(ids(w.json(['recall', 'staging runbook notes'], b)).includes(g));
    assert.ok(!ids(w.json(['recall', 'staging runbook notes'], a)).includes(g));
    assert.equal(w.cli(['read', g], { cwd: a }).code, 1);
  });

  it('a value forgotten in global is refused in every project; another value is not', () => {
    const g = w.json<{ id: string }>(
      ['remember', '--global', '--type', 'fact', '--abstract', 'Deploys freeze on Fridays'],
      b,
    ).id;
    assert.equal(w.cli(['forget', g], { cwd: b }).code, 0);
    const again = w.cli(['remember', '--type', 'fact', '--abstract', 'deploys FREEZE on fridays'], {
      cwd: a,
    });
    assert.equal(again.code, 2, again.stdout);
    const other = w.cli(['remember', '--type', 'fact', '--abstract', 'Deploys freeze on Mondays'], {
      cwd: a,
    });
    assert.equal(other.code, 0, other.stderr);
  });
});

// The same rule on both stores: it lives in the engine, so each adapter must give the same answer.
for (const kind of ['files', 'postgres'] as const) {
  describe(
    `on the ${kind} store: a value rejected in A, written to global from B`,
    { skip: kind === 'postgres' ? (pgSkip ?? false) : false },
    () => {
      it('is withheld from A on recall, read and inject, and served in B', async () => {
        const made =
          kind === 'files'
            ? {
                store: (await FileStore.open(tmpDir(), { durable: false })) as Store,
                cleanup: null,
              }
            : await throwawayStore();
        const store = made.store;
        try {
          const clock = testClock('2026-05-01T00:00:00.000Z');
          const a = engineFor(store, 'alpha-0000000a', clock);
          const b = engineFor(store, 'bravo-0000000b', clock);
          const [m] = await a.apply([{ op: 'remember', type: 'fact', abstract: VALUE }], HUMAN);
          await a.apply([{ op: 'retract', id: m!.id, reject: true }], HUMAN);
          clock.advance(60_000);
          const [g] = await b.apply(
            [{ op: 'remember', type: 'fact', abstract: VALUE, global: true }],
            AGENT,
          );
          clock.advance(60_000);
          const ids = async (e: typeof a) =>
            (await e.recall('staging database password')).results.map((r) => r.id);
          assert.ok((await ids(b)).includes(g!.id), 'B recalls it');
          assert.ok(!(await ids(a)).includes(g!.id), 'A does not');
          await assert.rejects(a.read(g!.id), /withheld here/);
          assert.equal((await b.read(g!.id)).id, g!.id);
          const inject = async (e: typeof a) =>
            (await e.injectSessionStart({ projectRoot: null, logUsage: false })).ids;
          assert.ok((await inject(b)).includes(g!.id), 'B injects it');
          assert.ok(!(await inject(a)).includes(g!.id), 'A does not');
        } finally {
          if (made.cleanup) await made.cleanup();
          else await store.close();
        }
      });
    },
  );
}
