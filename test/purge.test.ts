// `mneme purge` through the real entry points, on both stores: after a purge the value is found
// by no recall, read, history, trace, MCP tool or HTTP route, and a raw scan of every byte the
// store keeps (every file under the store — SQLite database, WAL and free pages included — or
// every row of every table in the database) finds it nowhere, while a neighbouring memory is
// untouched and served; the journal verifies; the value cannot be written again (CLI, MCP,
// HTTP, the distiller restating it, an older bundle); rebuild, sleep and fsck do not bring it
// back; an agent surface cannot purge. Each "not" is paired with its "does" before the purge.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { openStore } from '../src/surfaces/compose.js';
import { startServer } from '../src/surfaces/http/server.js';
import { BIN, terminal } from './helpers.js';
import { makeWorld, type World } from './hook-helpers.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';
import { servingUrl } from './http-live.js';

const pgSkip = await pgSkipReason();

const SECRET = 'Zq7vorbplex4417kQ';
const ABSTRACT = `The staging database password is ${SECRET}`;
const BODY = `Log in as admin with ${SECRET} from the bastion only.`;
const NEIGHBOUR = 'The staging database lives in eu-west-3';

interface Fixture {
  w: World;
  repo: string;
  db: ThrowawayDb | null;
  env: Record<string, string>;
  cli: (args: string[], env?: Record<string, string>) => ReturnType<World['cli']>;
  json: <T = Record<string, unknown>>(args: string[]) => T;
  /** Every place the raw bytes of the store hold the secret (case-insensitive). */
  rawScan: () => Promise<string[]>;
  drive: (
    answers: string[],
    args: string[],
    env?: Record<string, string>,
  ) => {
    code: number;
    out: string;
  };
  mcp: () => Promise<Client>;
}

async function fixture(kind: 'files' | 'postgres'): Promise<Fixture> {
  const w = makeWorld();
  const repo = w.project('shop', 'git@github.com:acme/shop.git');
  const db = kind === 'postgres' ? await throwawayDb(['acme']) : null;
  const env: Record<string, string> = db
    ? { MNEME_DATABASE_URL: db.url, MNEME_TENANT: 'acme' }
    : {};
  const cli = (args: string[], extra: Record<string, string> = {}) =>
    w.cli(args, { cwd: repo, env: { ...env, ...extra } });
  const needle = SECRET.toLowerCase();
  const rawScan = async (): Promise<string[]> => {
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const n of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
        const f = path.join(dir, n);
        if (fs.statSync(f).isDirectory()) walk(f);
        else if (fs.readFileSync(f).toString('latin1').toLowerCase().includes(needle))
          found.push(path.relative(w.home, f));
      }
    };
    walk(w.home);
    if (db) {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        const { rows } = await c.query<{ t: string }>(
          "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public'",
        );
        for (const { t } of rows) {
          const r = await c.query(
            `SELECT count(*)::int AS n FROM ${t} x WHERE lower(x::text) LIKE $1`,
            [`%${needle}%`],
          );
          if ((r.rows[0] as { n: number }).n > 0) found.push(`table:${t}`);
        }
      } finally {
        await c.end();
      }
    }
    return found;
  };
  return {
    w,
    repo,
    db,
    env,
    cli,
    json: <T>(args: string[]) => {
      const r = cli(['--json', ...args]);
      if (r.code !== 0) throw new Error(`mneme ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
      return JSON.parse(r.stdout) as T;
    },
    rawScan,
    drive: (answers, args, extra = {}) => {
      const e: NodeJS.ProcessEnv = { ...w.env, ...env, ...extra };
      for (const k of ['CLAUDECODE', 'CLAUDE_CODE_ENTRYPOINT', 'MNEME_AGENT', 'CODEX_SANDBOX'])
        if (!(k in extra)) delete e[k];
      return terminal(answers, args, { cwd: repo, env: e });
    },
    mcp: async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp'],
        cwd: repo,
        env: { ...(w.env as Record<string, string>), ...env, CLAUDECODE: '1' },
        stderr: 'pipe',
      });
      const client = new Client({ name: 'purge-test', version: '1.0.0' });
      await client.connect(transport);
      return client;
    },
  };
}

const text = (r: unknown) => JSON.stringify(r).toLowerCase();

/** A transcript line archived in the store's session archive (files or the tenant's rows). */
async function archive(f: Fixture, session: string, content: string): Promise<void> {
  const store = await openStore({ env: { ...f.w.env, ...f.env }, cwd: f.repo });
  try {
    await store.sessions.appendArchive({ host: 'claude-code', session }, [
      JSON.stringify({ type: 'user', message: { role: 'user', content } }),
    ]);
  } finally {
    await store.close();
  }
}

function suite(kind: 'files' | 'postgres') {
  describe(
    `mneme purge (${kind} store)`,
    { skip: kind === 'postgres' ? (pgSkip ?? false) : false },
    () => {
      let f: Fixture;
      let id = '';
      let neighbour = '';
      let bundle = '';
      before(async () => {
        f = await fixture(kind);
        id = f.json<{ id: string }>([
          'remember',
          '--type',
          'fact',
          '--abstract',
          ABSTRACT,
          '--body',
          BODY,
        ]).id;
        neighbour = f.json<{ id: string }>([
          'remember',
          '--type',
          'fact',
          '--abstract',
          NEIGHBOUR,
        ]).id;
        // The value leaks into the journal (a correction's reason, the tombstone it arms) and the
        // usage log (a recall's query), and a session transcript quotes it.
        assert.equal(
          f.cli([
            'correct',
            id,
            '--abstract',
            'The staging database password is in the vault',
            '--reason',
            `leaked ${SECRET}`,
          ]).code,
          0,
        );
        f.cli(['recall', SECRET]);
        await archive(f, 'leak', `the password is ${SECRET}, keep it`);
        const exported = f.cli(['export']);
        assert.equal(exported.code, 0, exported.stderr);
        bundle = path.join(f.w.dir, 'old-bundle.json');
        fs.writeFileSync(bundle, exported.stdout);
      });
      after(async () => {
        f.w.cleanup();
        await f.db?.drop();
      });

      it('before the purge: the value is served and the raw bytes hold it (the positive control)', async () => {
        const places = await f.rawScan();
        assert.ok(places.length > 0, 'the store holds the value before the purge');
        assert.match(text(f.json(['history', id])), new RegExp(SECRET.toLowerCase()));
        const found = f.drive([], ['purge', '--find', SECRET]);
        assert.equal(found.code, 0, found.out);
        assert.match(found.out, new RegExp(id));
        assert.match(found.out, /archive|session_archive/);
      });

      it('an agent surface, a pipe and MCP cannot purge', async () => {
        const agent = f.drive(['purge'], ['purge', id, '--reason', 'leak'], { CLAUDECODE: '1' });
        assert.notEqual(agent.code, 0);
        assert.match(agent.out, /refuses to run inside an agent session/);
        const piped = f.cli(['purge', id, '--reason', 'leak']);
        assert.equal(piped.code, 2);
        assert.match(piped.stderr, /needs an interactive terminal/);
        const client = await f.mcp();
        try {
          const tools = (await client.listTools()).tools.map((t) => t.name);
          assert.ok(tools.includes('recall') && !tools.some((t) => /purge/.test(t)), tools.join());
        } finally {
          await client.close();
        }
        assert.ok((await f.rawScan()).length > 0, 'nothing was erased by a refused purge');
      });

      it('a reason that repeats the value is refused, and a wrong confirmation changes nothing', () => {
        const r = f.drive(['purge'], ['purge', id, '--reason', `leaked ${SECRET}`]);
        assert.notEqual(r.code, 0);
        assert.match(r.out, /the reason repeats the value/);
        const no = f.drive(['nope'], ['purge', id, '--reason', 'leaked credential']);
        assert.notEqual(no.code, 0);
        assert.match(no.out, /not confirmed; nothing changed/);
      });

      it('a person purges it: no byte of the store holds it, the neighbour is served, the journal verifies', async () => {
        const r = f.drive(['purge'], ['purge', id, '--reason', 'leaked credential']);
        assert.equal(r.code, 0, r.out);
        assert.match(r.out, /purged .* rev 1, 2/);
        assert.match(r.out, /no file or row of the store holds the purged text/);
        assert.match(r.out, /cannot reach/);
        assert.deepEqual(await f.rawScan(), []);
        const verified = f.json<{ ok: boolean }>(['journal', 'verify']);
        assert.equal(verified.ok, true);
        const hist = f.json<{ revisions: { status: string; abstract: string }[] }>(['history', id]);
        assert.deepEqual(
          hist.revisions.map((x) => [x.status, x.abstract]),
          [
            ['purged', '[purged]'],
            ['purged', '[purged]'],
          ],
        );
        assert.doesNotMatch(text(f.json(['trace', id])), new RegExp(SECRET.toLowerCase()));
        const served = f.json<{ results: { id: string }[] }>(['recall', 'staging', 'password']);
        assert.ok(!served.results.some((x) => x.id === id), 'the purged memory is not served');
        const n = f.json<{ results: { id: string }[] }>([
          'recall',
          'staging',
          'database',
          'eu-west-3',
        ]);
        assert.deepEqual(
          n.results.map((x) => x.id),
          [neighbour],
        );
        assert.equal(f.json<{ abstract: string }>(['read', neighbour]).abstract, NEIGHBOUR);
        const v = f.drive([], ['purge', '--verify', id]);
        assert.equal(v.code, 0, v.out);
        assert.match(v.out, /no file or row of the store holds the purged text/);
        assert.match(v.out, /leaked credential/);
        const fsck = f.json<{ issues: unknown[] }>(['fsck']);
        assert.deepEqual(fsck.issues, []);
      });

      it('MCP tools serve the neighbour and nothing of the purged value', async () => {
        const client = await f.mcp();
        try {
          const call = async (name: string, args: Record<string, unknown>) =>
            client.callTool({ name, arguments: args });
          const hit = await call('recall', { query: 'staging database eu-west-3' });
          assert.match(text(hit), new RegExp(neighbour.toLowerCase()));
          const bySecret = (await call('recall', { query: SECRET })) as {
            structuredContent?: { results: unknown[] };
          };
          assert.deepEqual(bySecret.structuredContent?.results, []);
          for (const [name, args] of [
            ['recall', { query: 'staging database password' }],
            ['history', { id }],
            ['trace', { id }],
            ['read', { id }],
          ] as const)
            assert.doesNotMatch(
              text(await call(name, args)),
              new RegExp(SECRET.toLowerCase()),
              name,
            );
          const again = await call('remember', { type: 'fact', abstract: ABSTRACT });
          assert.equal(again.isError, true);
          assert.match(text(again), /purged/);
        } finally {
          await client.close();
        }
      });

      it('the value cannot be written again: CLI (respelled too), the distiller restating it, an older bundle', async () => {
        for (const abstract of [
          ABSTRACT,
          ABSTRACT.toUpperCase(),
          `  the staging DATABASE password is ${SECRET}!`,
        ]) {
          const r = f.cli(['remember', '--type', 'fact', '--abstract', abstract]);
          assert.equal(r.code, 2, abstract);
          assert.match(r.stderr, /a value a person purged/);
          assert.doesNotMatch(r.stderr, new RegExp(SECRET, 'i'));
        }
        const inBody = f.cli([
          'remember',
          '--type',
          'fact',
          '--abstract',
          'Bastion notes',
          '--body',
          `First.\n\n${ABSTRACT}.\n\nLast.`,
        ]);
        assert.equal(inBody.code, 2);
        const ok = f.cli([
          'remember',
          '--type',
          'fact',
          '--abstract',
          'The staging database password is rotated monthly',
        ]);
        assert.equal(ok.code, 0, 'a different value passes');
        // The distiller restating it from the (erased) transcript.
        await archive(f, 'again', 'note the password');
        fs.writeFileSync(
          path.join(f.w.fake, '1.txt'),
          `${JSON.stringify({ op: 'new', type: 'fact', abstract: ABSTRACT, evidence: [[1, 1]] })}\n`,
        );
        const d = f.cli(['--json', 'distill', '--session', 'again']);
        assert.equal(d.code === 0 || d.code === 1, true, d.stderr);
        assert.match(d.stdout + d.stderr, /purged|rejected before/);
        const imported = f.cli(['import', bundle]);
        assert.notEqual(imported.code, -1, imported.stderr);
        assert.doesNotMatch(imported.stderr, /internal/);
        assert.deepEqual(await f.rawScan(), [], 'an older bundle brings nothing back');
        assert.equal(f.json<{ results: unknown[] }>(['recall', SECRET]).results.length, 0);
      });

      it('rebuild, sleep and fsck do not bring it back', async () => {
        for (const args of [['rebuild'], ['sleep'], ['fsck']]) {
          const r = f.cli(args);
          assert.ok(r.code === 0 || r.code === 1, `${args[0]}: ${r.stderr}`);
        }
        assert.deepEqual(await f.rawScan(), []);
        assert.equal(f.json<{ ok: boolean }>(['journal', 'verify']).ok, true);
        assert.equal(
          f.json<{ results: unknown[] }>(['recall', 'staging', 'password']).results.length > 0,
          true,
          'the new different value is served',
        );
        assert.deepEqual(f.json<{ issues: unknown[] }>(['fsck']).issues, []);
      });

      if (kind === 'files')
        it('HTTP routes serve nothing of it and refuse it again', async () => {
          const server = await startServer({
            store: f.w.home,
            cwd: f.repo,
            env: { MNEME_DURABLE: '0' },
            host: '127.0.0.1',
            port: 0,
            log: () => {},
          });
          try {
            const status = f.json<{ project: string }>(['status']);
            const q = `project=${status.project}`;
            const get = async (p: string) =>
              (await fetch(`${server.url}${p}${p.includes('?') ? '&' : '?'}${q}`)).text();
            assert.match(await get('/api/recall?q=eu-west-3'), new RegExp(neighbour));
            assert.deepEqual(JSON.parse(await get(`/api/recall?q=${SECRET}`)).results, []);
            for (const p of [
              `/api/recall?q=staging%20database%20password`,
              `/api/memories/${id}`,
              `/api/memories/${id}/history`,
              `/api/memories/${id}/trace`,
              '/api/journal',
              '/api/tombstones',
              '/api/memories',
            ])
              assert.doesNotMatch(
                (await get(p)).toLowerCase(),
                new RegExp(SECRET.toLowerCase()),
                p,
              );
            const post = await fetch(`${server.url}/api/memories?${q}`, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json' },
              body: JSON.stringify({ type: 'fact', abstract: ABSTRACT }),
            });
            assert.equal(post.status >= 400, true);
            assert.match(await post.text(), /purged/);
            // Purge is not an API call: refused, saying where to do it.
            const purge = await fetch(`${server.url}/api/memories/${neighbour}/purge?${q}`, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json' },
              body: JSON.stringify({ reason: 'x' }),
            });
            assert.equal(purge.status, 403);
            // The dashboard (a person logged in): its pages show the neighbour, not the value.
            const login = await fetch(`${server.url}/login?t=${server.sessions.issueTicket()}`, {
              redirect: 'manual',
            });
            const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
            const page = async (p: string) =>
              (await fetch(`${server.url}${p}`, { headers: { Cookie: cookie } })).text();
            assert.match(await page(`/m/${neighbour}`), /eu-west-3/);
            for (const p of [
              '/',
              `/m/${id}`,
              `/m/${id}/trace`,
              '/journal',
              '/tombstones',
              '/review',
              '/reports',
            ])
              assert.doesNotMatch(
                (await page(p)).toLowerCase(),
                new RegExp(SECRET.toLowerCase()),
                p,
              );
            assert.match(await purge.text(), /mneme purge ID --reason TEXT/);
            assert.equal(f.json<{ abstract: string }>(['read', neighbour]).abstract, NEIGHBOUR);
          } finally {
            await server.close();
          }
        });

      if (kind === 'postgres')
        it('mneme serve --db (a token, the tenant): every memory route and MCP over HTTP serve nothing of it', async () => {
          const status = f.json<{ project: string }>(['status']);
          const project = status.project;
          const token = f.cli(['token', 'create', '--project', project]);
          assert.equal(token.code, 0, token.stderr);
          const bearer = { authorization: `Bearer ${token.stdout.trim()}` };
          const server = spawn(
            process.execPath,
            [BIN, '--db', f.db!.url, 'serve', '--host', '127.0.0.1', '--port', '0'],
            { env: { ...f.w.env, ...f.env }, stdio: ['ignore', 'pipe', 'pipe'] },
          );
          try {
            const url = await servingUrl(server);
            const get = async (p: string) => {
              const r = await fetch(`${url}${p}${p.includes('?') ? '&' : '?'}project=${project}`, {
                headers: bearer,
              });
              return { status: r.status, body: await r.text() };
            };
            // Does: the token reads the tenant, and the neighbour is served by recall and read.
            const hit = await get('/api/recall?q=staging%20database%20eu-west-3');
            assert.equal(hit.status, 200, hit.body);
            assert.match(hit.body, new RegExp(neighbour));
            assert.match((await get(`/api/memories/${neighbour}`)).body, /eu-west-3/);
            assert.deepEqual(JSON.parse((await get(`/api/recall?q=${SECRET}`)).body).results, []);
            // Does not: no memory route serves any of the value (the purged memory's own included).
            for (const p of [
              '/api/recall?q=staging%20database%20password',
              `/api/memories/${id}`,
              `/api/memories/${id}/history`,
              `/api/memories/${id}/trace`,
              `/api/memories/${neighbour}/trace`,
              '/api/memories',
              '/api/journal?limit=1000',
              '/api/tombstones',
              '/api/proposals',
              '/api/projects',
            ]) {
              const r = await get(p);
              assert.ok(r.status < 500, `${p}: ${r.status} ${r.body}`);
              assert.doesNotMatch(r.body.toLowerCase(), new RegExp(SECRET.toLowerCase()), p);
            }
            const hist = JSON.parse((await get(`/api/memories/${id}/history`)).body) as {
              revisions: { status: string }[];
            };
            assert.deepEqual(
              hist.revisions.map((x) => x.status),
              ['purged', 'purged'],
            );
            // Writing the value again is refused by the purge tombstone.
            const post = await fetch(`${url}/api/memories?project=${project}`, {
              method: 'POST',
              headers: { ...bearer, 'content-type': 'application/json' },
              body: JSON.stringify({ type: 'fact', abstract: ABSTRACT }),
            });
            assert.ok(post.status >= 400 && post.status < 500, String(post.status));
            assert.match(await post.text(), /purged/);
            // Purge is not an API call: 403, saying where to do it.
            const purge = await fetch(`${url}/api/memories/${neighbour}/purge?project=${project}`, {
              method: 'POST',
              headers: { ...bearer, 'content-type': 'application/json' },
              body: JSON.stringify({ reason: 'x' }),
            });
            assert.equal(purge.status, 403);
            assert.match(await purge.text(), /mneme purge ID --reason TEXT/);

            // MCP over HTTP, the same token: every read-only tool.
            const client = new Client({ name: 'purge-http', version: '1.0.0' });
            await client.connect(
              new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
                requestInit: { headers: bearer },
              }),
            );
            try {
              const served = await client.callTool({
                name: 'recall',
                arguments: { query: 'staging database eu-west-3' },
              });
              assert.match(text(served), new RegExp(neighbour.toLowerCase()));
              const { tools } = await client.listTools();
              const called: string[] = [];
              for (const t of tools) {
                if (!t.annotations?.readOnlyHint) continue;
                const props = (t.inputSchema.properties ?? {}) as Record<string, unknown>;
                const required = t.inputSchema.required ?? [];
                const args: Record<string, unknown> = {};
                if ('id' in props) args.id = id;
                if ('query' in props) args.query = 'staging database password';
                if (required.some((k) => !(k in args))) continue;
                const r = await client.callTool({ name: t.name, arguments: args });
                assert.doesNotMatch(text(r), new RegExp(SECRET.toLowerCase()), t.name);
                called.push(t.name);
              }
              for (const name of ['recall', 'read', 'history', 'trace'])
                assert.ok(called.includes(name), `${name} was called: ${called.join(', ')}`);
              const again = await client.callTool({
                name: 'remember',
                arguments: { type: 'fact', abstract: ABSTRACT },
              });
              assert.equal(again.isError, true);
              assert.match(text(again), /purged/);
            } finally {
              await client.close();
            }
            assert.deepEqual(await f.rawScan(), []);
          } finally {
            server.kill();
          }
        });
    },
  );
}

suite('files');
suite('postgres');
