// One composition root: `mneme serve` builds its engines where the CLI does, with the same
// abilities. The same store and query give the same recall over HTTP and on the command line,
// and a memory bound to a source file is labelled `drifted` on both once the file changes
// (the embedded server reads its own project's files; the team server reads none of its host's
// and serves the verdict the CLI journaled).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createToken } from '../src/surfaces/compose.js';
import { startDbServer } from '../src/surfaces/http/server.js';
import { cli, gitRepo, tmpDir } from './helpers.js';
import { liveServer } from './http-live.js';
import { pgSkipReason, throwawayDb } from './pg-fixtures.js';

// Asked before any test runs, so a busy event loop cannot time the probe out.
const pgSkip = await pgSkipReason();

let s: Awaited<ReturnType<typeof liveServer>>;
before(async () => {
  s = await liveServer();
});
after(() => s.stop());

interface Hit {
  id: string;
  freshness: string;
}

const QUERY = 'charging doubles amount shipping route';

function cliRecall(): { results: Hit[] } {
  const r = cli(['recall', ...QUERY.split(' '), '--json'], { home: s.home, cwd: s.repo });
  assert.equal(r.code, 0, r.stderr);
  return r.json();
}

async function httpRecall(project: string): Promise<{ results: Hit[] }> {
  const r = await fetch(
    `${s.url}/api/recall?q=${encodeURIComponent(QUERY)}&project=${encodeURIComponent(project)}`,
  );
  assert.equal(r.status, 200);
  return (await r.json()) as { results: Hit[] };
}

const verdicts = (r: { results: Hit[] }) =>
  Object.fromEntries(r.results.map((h) => [h.id, h.freshness]));

/** Browsing (GET /api/memories, what the dashboard renders too): freshness of the given ids. */
async function browsed(project: string, ids: string[]): Promise<Record<string, string>> {
  const r = await fetch(`${s.url}/api/memories?project=${encodeURIComponent(project)}`);
  assert.equal(r.status, 200);
  const { memories } = (await r.json()) as { memories: Hit[] };
  return Object.fromEntries(
    memories.filter((m) => ids.includes(m.id)).map((m) => [m.id, m.freshness]),
  );
}

it('HTTP and CLI recall agree, and a source-bound memory is drifted on both after its file changes', async () => {
  fs.mkdirSync(path.join(s.repo, 'src'));
  fs.writeFileSync(path.join(s.repo, 'src', 'pay.ts'), 'export const charge = (n) => n * 2;\n');
  fs.writeFileSync(path.join(s.repo, 'src', 'ship.ts'), 'export const route = "north";\n');
  const remember = (abstract: string, source: string) => {
    const r = cli(
      ['remember', '--type', 'fact', '--abstract', abstract, '--source', source, '--json'],
      { home: s.home, cwd: s.repo },
    );
    assert.equal(r.code, 0, r.stderr);
    return (r.json() as { id: string }).id;
  };
  const pay = remember('Charging doubles the amount', 'src/pay.ts');
  const ship = remember('Shipping route is north', 'src/ship.ts');

  const project = (cliRecall() as unknown as { results: { scope: string }[] }).results[0]!.scope;
  const before = cliRecall();
  assert.deepEqual(verdicts(before), { [pay]: 'fresh', [ship]: 'fresh' });
  assert.deepEqual((await httpRecall(s.repo)).results, before.results);
  assert.deepEqual(await browsed(s.repo, [pay, ship]), { [pay]: 'fresh', [ship]: 'fresh' });

  // The server looks first (recall journals a verdict that moved, which the other then reads).
  fs.writeFileSync(path.join(s.repo, 'src', 'pay.ts'), 'export const charge = (n) => n * 3;\n');
  const byPath = await httpRecall(s.repo);
  assert.deepEqual(verdicts(byPath), { [pay]: 'drifted', [ship]: 'fresh' });
  const cliAfter = cliRecall();
  assert.deepEqual(verdicts(cliAfter), { [pay]: 'drifted', [ship]: 'fresh' });
  assert.deepEqual(byPath.results, cliAfter.results);
  // Browsing agrees with recall on both: the changed file's memory drifted, the other fresh.
  assert.deepEqual(await browsed(s.repo, [pay, ship]), { [pay]: 'drifted', [ship]: 'fresh' });

  // By project id too: the server's own project (its starting directory) has its files.
  fs.writeFileSync(path.join(s.repo, 'src', 'ship.ts'), 'export const route = "south";\n');
  const byId = await httpRecall(project);
  assert.deepEqual(verdicts(byId), { [pay]: 'drifted', [ship]: 'drifted' });
  assert.deepEqual(byId.results, cliRecall().results);
  assert.deepEqual(await browsed(project, [pay, ship]), { [pay]: 'drifted', [ship]: 'drifted' });
});

it('MCP over HTTP (the server’s own project) labels a changed source drifted too, as the CLI does', async () => {
  fs.mkdirSync(path.join(s.repo, 'lib'), { recursive: true });
  fs.writeFileSync(path.join(s.repo, 'lib', 'tax.ts'), 'export const rate = 0.2;\n');
  const w = cli(
    [
      'remember',
      '--type',
      'fact',
      '--abstract',
      'Tax rate is twenty percent',
      '--source',
      'lib/tax.ts',
      '--json',
    ],
    { home: s.home, cwd: s.repo },
  );
  assert.equal(w.code, 0, w.stderr);
  const id = (w.json() as { id: string }).id;
  fs.writeFileSync(path.join(s.repo, 'lib', 'tax.ts'), 'export const rate = 0.25;\n');
  const client = new Client({ name: 'parity-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  try {
    const r = await client.callTool({ name: 'recall', arguments: { query: 'tax rate percent' } });
    const found = JSON.parse((r.content as { text: string }[])[0]!.text) as { results: Hit[] };
    assert.equal(verdicts(found)[id], 'drifted');
  } finally {
    await client.close();
  }
  const c = cli(['recall', 'tax', 'rate', 'percent', '--json'], { home: s.home, cwd: s.repo });
  assert.equal(verdicts(c.json() as { results: Hit[] })[id], 'drifted');
});

describe('serve --db and the CLI on one Postgres tenant', { skip: pgSkip ?? false }, () => {
  it('agree on recall, and a memory bound with --source is drifted on both once the CLI saw the file change (the server reads no host file)', async () => {
    const db = await throwawayDb(['acme']);
    const dir = tmpDir('mneme-pg-parity-');
    const repo = gitRepo('git@github.com:acme/ledger.git');
    const server = await startDbServer({ db: db.url, port: 0, poolSize: 2, log: () => {} });
    try {
      const token = await createToken(db.url, { tenant: 'acme', projects: null });
      const env = { XDG_STATE_HOME: path.join(dir, 'state') };
      const run = (args: string[]) => {
        const r = cli([...args, '--db', db.url, '--tenant', 'acme', '--json'], {
          home: dir,
          cwd: repo,
          env,
        });
        assert.equal(r.code, 0, r.stderr);
        return r.json();
      };
      fs.mkdirSync(path.join(repo, 'src'));
      fs.writeFileSync(path.join(repo, 'src', 'fx.ts'), 'export const base = "EUR";\n');
      const { id } = run([
        'remember',
        '--type',
        'fact',
        '--abstract',
        'Ledger base currency is euro',
        '--source',
        'src/fx.ts',
      ]) as { id: string };
      const { project } = run(['status']) as { project: string };
      const recall = async () => {
        const r = await fetch(
          `${server.url}/api/recall?q=${encodeURIComponent('ledger base currency')}&project=${project}`,
          { headers: { authorization: `Bearer ${token}` } },
        );
        assert.equal(r.status, 200);
        return (await r.json()) as { results: Hit[] };
      };
      const cliRecallDb = () => run(['recall', 'ledger', 'base', 'currency']) as { results: Hit[] };
      assert.equal(verdicts(await recall())[id], 'fresh');
      assert.deepEqual((await recall()).results, cliRecallDb().results);
      fs.writeFileSync(path.join(repo, 'src', 'fx.ts'), 'export const base = "USD";\n');
      // The team server has no files of the caller's repository: the developer's CLI reads the
      // file and journals the verdict, which the server then serves.
      run(['check-sources']);
      const http = await recall();
      assert.equal(verdicts(http)[id], 'drifted');
      const c = cliRecallDb();
      assert.equal(verdicts(c)[id], 'drifted');
      assert.deepEqual(http.results, c.results);
    } finally {
      await server.close();
      await db.drop();
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });
});
