// Every surface over one engine: for the same store and query, the CLI, MCP over stdio and
// `mneme serve` (files, and `--db` on Postgres) return the same recall. A memory bound to a source
// file is labelled `drifted` on each of them once the file changes, and the hooks withhold it from
// injection (session start and the pre-edit block) while an unchanged memory is still injected.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createToken } from '../src/surfaces/compose.js';
import { startDbServer, startServer } from '../src/surfaces/http/server.js';
import { isAgentVariable } from '../src/surfaces/agent-env.js';
import { cli, gitRepo, tmpDir } from './helpers.js';
import { BIN, contextOf } from './hook-helpers.js';
import { pgSkipReason, throwawayDb } from './pg-fixtures.js';

// Asked before any test runs, so a busy event loop cannot time the probe out.
const pgSkip = await pgSkipReason();

interface Hit {
  id: string;
  freshness: string;
}
interface Recall {
  results: Hit[];
}

const QUERY = 'charging amount shipping route';
const verdicts = (r: Recall) => Object.fromEntries(r.results.map((h) => [h.id, h.freshness]));

/** The surfaces of one store: each returns the recall of QUERY from the project `repo`. */
interface Surfaces {
  cli: () => Recall;
  mcp: () => Promise<Recall>;
  http: () => Promise<Recall>;
  hook: (event: 'session-start' | 'pre-tool-use', file?: string) => string;
  remember: (abstract: string, source: string) => string;
}

function surfacesOf(o: {
  home: string;
  repo: string;
  flags: string[];
  url: string;
  token: string | null;
}): Surfaces {
  const env: Record<string, string> = { XDG_STATE_HOME: path.join(o.home, 'xdg') };
  const run = (args: string[], input = '') => {
    const r = cli([...args, ...o.flags], { home: o.home, cwd: o.repo, env, input });
    assert.equal(r.code, 0, r.stderr);
    return r;
  };
  const hookEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && k !== 'MNEME_AGENT' && !isAgentVariable(k)) hookEnv[k] = v;
  return {
    cli: () => run(['recall', ...QUERY.split(' '), '--json']).json() as Recall,
    async mcp() {
      const client = new Client({ name: 'surface-parity', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [BIN, 'mcp', ...o.flags],
          cwd: o.repo,
          env: { ...hookEnv, ...env, MNEME_HOME: o.home, MNEME_DURABLE: '0' },
        }),
      );
      try {
        const r = await client.callTool({ name: 'recall', arguments: { query: QUERY } });
        return JSON.parse((r.content as { text: string }[])[0]!.text) as Recall;
      } finally {
        await client.close();
      }
    },
    async http() {
      // The local user names the project by its path; a token holder by its id (a team server
      // reads no path of its host for a caller).
      const project = o.token
        ? (JSON.parse(run(['status', '--json']).stdout) as { project: string }).project
        : o.repo;
      const r = await fetch(
        `${o.url}/api/recall?q=${encodeURIComponent(QUERY)}&project=${encodeURIComponent(project)}`,
        o.token ? { headers: { authorization: `Bearer ${o.token}` } } : {},
      );
      assert.equal(r.status, 200, await r.clone().text());
      return (await r.json()) as Recall;
    },
    hook(event, file) {
      const payload = {
        session_id: `parity-${event}`,
        transcript_path: '',
        cwd: o.repo,
        hook_event_name: event === 'session-start' ? 'SessionStart' : 'PreToolUse',
        ...(event === 'session-start'
          ? { source: 'startup' }
          : {
              tool_name: 'Edit',
              tool_input: { file_path: file, old_string: 'a', new_string: 'b' },
            }),
      };
      return contextOf(run(['hook', event], JSON.stringify(payload)).stdout);
    },
    remember(abstract, source) {
      const r = run([
        'remember',
        '--type',
        'constraint',
        '--abstract',
        abstract,
        '--source',
        source,
        '--json',
      ]);
      return (JSON.parse(r.stdout) as { id: string }).id;
    },
  };
}

async function scenario(s: Surfaces, repo: string) {
  fs.mkdirSync(path.join(repo, 'src'), { recursive: true });
  fs.writeFileSync(path.join(repo, 'src', 'pay.ts'), 'export const charge = (n) => n * 2;\n');
  fs.writeFileSync(path.join(repo, 'src', 'ship.ts'), 'export const route = "north";\n');
  const pay = s.remember('Charging must double the amount', 'src/pay.ts');
  const ship = s.remember('Shipping route must go north', 'src/ship.ts');

  // Before the change: all fresh, the same list everywhere, both injected.
  const before = s.cli();
  assert.deepEqual(verdicts(before), { [pay]: 'fresh', [ship]: 'fresh' });
  assert.deepEqual((await s.mcp()).results, before.results);
  assert.deepEqual((await s.http()).results, before.results);
  const start = s.hook('session-start');
  assert.match(start, /Charging must double the amount/);
  assert.match(start, /Shipping route must go north/);
  assert.match(s.hook('pre-tool-use', path.join(repo, 'src', 'pay.ts')), /Charging must double/);

  // The file changes. The hooks look first: nothing has journaled the drift yet.
  fs.writeFileSync(path.join(repo, 'src', 'pay.ts'), 'export const charge = (n) => n * 3;\n');
  const after = s.hook('session-start');
  assert.doesNotMatch(after, /Charging must double the amount/);
  assert.match(after, /Shipping route must go north/);
  assert.doesNotMatch(
    s.hook('pre-tool-use', path.join(repo, 'src', 'pay.ts')),
    /Charging must double/,
  );
  assert.match(s.hook('pre-tool-use', path.join(repo, 'src', 'ship.ts')), /Shipping route/);

  // Every recall surface labels it drifted, and they still agree.
  const viaMcp = await s.mcp();
  assert.deepEqual(verdicts(viaMcp), { [pay]: 'drifted', [ship]: 'fresh' });
  const viaCli = s.cli();
  assert.deepEqual(viaCli.results, viaMcp.results);
  assert.deepEqual((await s.http()).results, viaMcp.results);
}

describe('one engine behind every surface', () => {
  it('files: CLI, MCP stdio and serve agree; a changed source is drifted on all and withheld from injection', async () => {
    const dir = tmpDir('mneme-surfaces-');
    const home = path.join(dir, 'store');
    const repo = gitRepo('git@github.com:acme/shop.git');
    const server = await startServer({
      store: home,
      cwd: repo,
      env: { MNEME_DURABLE: '0' },
      host: '127.0.0.1',
      port: 0,
      log: () => {},
    });
    try {
      await scenario(surfacesOf({ home, repo, flags: [], url: server.url, token: null }), repo);
    } finally {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });

  it(
    'Postgres: CLI, MCP stdio and serve --db agree; a changed source is drifted on all and withheld from injection',
    {
      skip: pgSkip ?? false,
    },
    async () => {
      const db = await throwawayDb(['acme']);
      const dir = tmpDir('mneme-surfaces-pg-');
      const repo = gitRepo('git@github.com:acme/ledger.git');
      const server = await startDbServer({ db: db.url, port: 0, poolSize: 2, log: () => {} });
      try {
        const token = await createToken(db.url, { tenant: 'acme', projects: null });
        const flags = ['--db', db.url, '--tenant', 'acme'];
        await scenario(surfacesOf({ home: dir, repo, flags, url: server.url, token }), repo);
      } finally {
        await server.close();
        await db.drop();
        fs.rmSync(dir, { recursive: true, force: true });
        fs.rmSync(repo, { recursive: true, force: true });
      }
    },
  );
});
