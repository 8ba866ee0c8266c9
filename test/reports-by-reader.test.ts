// Maintenance reports over the real server (`mneme serve` with a token file, embedded store: the
// only store with a reports directory): a token bound to project A lists and opens A's sleep and
// fsck reports and never B's (an unknown name and B's report get the same 404), a report without
// its scopes line counts as store-wide; a line of a report restating a value forgotten after the
// report was written is withheld when served, to every caller, while the rest of it is served.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type RunningServer } from '../src/surfaces/http/server.js';
import { writeReport } from '../src/surfaces/reports.js';
import { cli, gitRepo, tmpDir } from './helpers.js';

const TOKEN_A = 'token-alpha-0123456789abcdef';
const TOKEN_ALL = 'token-every-0123456789abcdef';
const VALUE = 'The heron gateway listens on port 8443 for deploys';

describe('reports are served by reader and scope (files)', () => {
  let home: string;
  let repoA: string;
  let repoB: string;
  let projectA: string;
  let projectB: string;
  let server: RunningServer;
  let quoting: string;

  const get = async (p: string, token?: string) => {
    const r = await fetch(`${server.url}${p}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    return { status: r.status, text: await r.text() };
  };
  const names = async (token?: string): Promise<string[]> =>
    (
      JSON.parse((await get('/api/reports', token)).text) as { reports: { name: string }[] }
    ).reports.map((r) => r.name);

  before(async () => {
    home = tmpDir();
    repoA = gitRepo('git@example.com:acme/alpha.git');
    repoB = gitRepo('git@example.com:acme/bravo.git');
    const run = (cwd: string, ...args: string[]) => {
      const r = cli(args, { home, cwd });
      assert.equal(r.code, 0, r.stderr);
      return r;
    };
    projectA = run(repoA, 'status', '--json').json().project;
    projectB = run(repoB, 'status', '--json').json().project;
    for (const [cwd, what] of [
      [repoA, 'Invoices are rendered by the wombat service'],
      [repoB, VALUE],
    ] as const) {
      run(cwd, 'remember', '--type', 'fact', '--abstract', what);
      run(cwd, 'sleep');
      run(cwd, 'fsck');
    }
    // A report of B quoting B's value (as an fsck or sleep report quotes abstracts), and one
    // written before reports carried their scopes.
    quoting = writeReport(
      home,
      'fsck',
      '2026-01-02T00:00:00.000Z',
      `# fsck\n\nduplicate: ${VALUE}\nchecked 1 memory\n`,
      [projectB, 'global'],
    );
    fs.writeFileSync(path.join(home, 'reports', 'sleep-legacy.md'), '# Sleep pass\n\nold\n');
    const tokens = path.join(home, 'tokens');
    fs.writeFileSync(tokens, `${TOKEN_A} ${projectA}\n${TOKEN_ALL}\n`);
    server = await startServer({
      store: home,
      cwd: repoA,
      env: { ...process.env, MNEME_HOME: home, MNEME_DURABLE: '0' },
      port: 0,
      tokenFile: tokens,
      log: () => {},
    });
  });
  after(async () => {
    await server?.close();
  });

  it("a token bound to A lists and opens A's reports, never B's or a store-wide one", async () => {
    const all = await names(TOKEN_ALL);
    const mine = await names(TOKEN_A);
    assert.equal(all.length, 6, all.join(' '));
    assert.equal(mine.length, 2, mine.join(' '));
    for (const n of mine) {
      const r = await get(`/api/reports/${n}`, TOKEN_A);
      assert.equal(r.status, 200);
      assert.match(r.text, new RegExp(`scopes: .*${projectA}`));
      assert.doesNotMatch(r.text, new RegExp(projectB));
    }
    const theirs = all.filter((n) => !mine.includes(n));
    assert.ok(theirs.includes('sleep-legacy.md'));
    for (const n of theirs) {
      const r = await get(`/api/reports/${n}`, TOKEN_A);
      assert.equal(r.status, 404, n);
      assert.doesNotMatch(r.text, /heron|bravo/);
      // The same answer as a report that does not exist.
      const none = await get('/api/reports/fsck-nothing.md', TOKEN_A);
      assert.equal(none.status, 404);
    }
    assert.equal(
      (await get(`/api/reports/${quoting.slice('reports/'.length)}`, TOKEN_ALL)).status,
      200,
    );
  });

  it('a line restating a value forgotten after the report was written is withheld; the rest is served', async () => {
    const name = quoting.slice('reports/'.length);
    const before = await get(`/api/reports/${name}`);
    assert.match(before.text, /heron gateway/);
    const id = cli(['recall', 'heron', 'gateway', '--json'], { home, cwd: repoB }).json().results[0]
      .id;
    const f = cli(['forget', id, '--reason', 'wrong port'], { home, cwd: repoB });
    assert.equal(f.code, 0, f.stderr);
    for (const token of [undefined, TOKEN_ALL]) {
      const r = await get(`/api/reports/${name}`, token);
      assert.equal(r.status, 200);
      assert.doesNotMatch(r.text, /heron gateway/);
      assert.match(r.text, /\[withheld: this line restates a value forgotten or purged/);
      assert.match(r.text, /checked 1 memory/);
    }
  });
});
