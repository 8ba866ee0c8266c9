// One schema per payload, seen from outside: the same write (with source, links, global) and the
// same recall (with each option) sent through the CLI, MCP over stdio (`mneme mcp`) and the HTTP
// API of a running server give the same result, and the same bad field gets the same refusal —
// what was refused, which field, why — on all three.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LIMITS } from '../src/core/limits.js';
import { BIN, cli, gitRepo, tmpDir } from './helpers.js';
import { liveServer } from './http-live.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- results are JSON */
type Json = any;

const REMOTE = 'git@github.com:acme/shop.git';
const PAY = 'export const charge = (n: number) => n * 2;\n';

/** A store and a repository (same remote, same file) for one surface. */
interface Place {
  home: string;
  repo: string;
}

function prepare(p: Place): string {
  fs.mkdirSync(path.join(p.repo, 'src'), { recursive: true });
  fs.writeFileSync(path.join(p.repo, 'src', 'pay.ts'), PAY);
  const seeded = cli(['remember', '--type', 'fact', '--abstract', 'Payments go through Stripe'], {
    home: p.home,
    cwd: p.repo,
  });
  assert.equal(seeded.code, 0, seeded.stderr);
  return /remembered (mem_\w+)/.exec(seeded.stdout)![1]!;
}

/** The CLI as an agent's session runs it. */
const agentCli = (p: Place, args: string[]) =>
  cli(['--json', ...args], { home: p.home, cwd: p.repo, env: { MNEME_AGENT: '1' } });

async function mcpStdio(p: Place) {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(CLAUDE_?CODE|CODEX_|MNEME_)/.test(k)) env[k] = v;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    cwd: p.repo,
    env: { ...env, MNEME_HOME: p.home, MNEME_DURABLE: '0' },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'parity', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    async call(name: string, args: Record<string, unknown>) {
      const r = await client.callTool({ name, arguments: args });
      const text = (r.content as { type: string; text: string }[])[0]!.text;
      return { isError: r.isError === true, body: JSON.parse(text) as Json };
    },
    close: () => client.close(),
  };
}

/** Equal, with numbers compared to 1e-5 (recency moves with the clock between calls). */
function same(a: Json, b: Json, at = '$'): void {
  if (typeof a === 'number' && typeof b === 'number') {
    assert.ok(Math.abs(a - b) < 1e-5, `${at}: ${a} vs ${b}`);
    return;
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') {
    assert.deepEqual(a, b, at);
    return;
  }
  assert.equal(Array.isArray(a), Array.isArray(b), at);
  assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort(), `${at}: keys`);
  for (const k of Object.keys(a)) same(a[k], b[k], `${at}.${k}`);
}

/**
 * A memory as read back, without what differs by store or surface: ids, the time of recording,
 * and which surface the agent used (its kind, agent, is the same).
 */
const portable = (m: Json, target: string) => {
  const { id: _id, handle: _h, recorded_at: _r, actor, ...rest } = m;
  return {
    ...JSON.parse(JSON.stringify(rest).replaceAll(target, 'TARGET').replaceAll(m.id, 'SELF')),
    actor: actor?.kind,
  };
};

let live: Awaited<ReturnType<typeof liveServer>>;
let cliPlace: Place;
let mcpPlace: Place;
let httpPlace: Place;
const targets: Record<string, string> = {};
const dirs: string[] = [];
/** A time after the seeds and before the writes (for known_at). */
let seededAt = '';

before(async () => {
  live = await liveServer();
  httpPlace = { home: live.home, repo: live.repo };
  const place = (): Place => {
    const p = { home: path.join(tmpDir('mneme-parity-'), 'store'), repo: gitRepo(REMOTE) };
    dirs.push(path.dirname(p.home), p.repo);
    return p;
  };
  cliPlace = place();
  mcpPlace = place();
  targets.cli = prepare(cliPlace);
  targets.mcp = prepare(mcpPlace);
  targets.http = prepare(httpPlace);
  seededAt = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 20));
});
after(async () => {
  await live.stop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const post = async (url: string, body: unknown) => {
  const r = await fetch(`${live.url}${url}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as Json };
};

describe('the same payload through the CLI, MCP stdio and the HTTP API', () => {
  it('a write with source, links and global gives the same result and the same memory', async () => {
    const write = (target: string) => ({
      type: 'decision',
      abstract: 'Charging doubles the amount before tax',
      body: 'See the charge function.',
      fields: { subject: 'charging' },
      tags: ['billing', 'tax'],
      links: [{ rel: 'relates_to', target }],
      source: 'src/pay.ts',
      applies_to: ['src/**'],
      valid_from: '2026-01-15T00:00:00.000Z',
      reason: 'parity',
    });
    const global = {
      type: 'preference',
      abstract: 'The user prefers short commit subjects',
      valid_from: '2026-01-15T00:00:00.000Z',
      global: true,
    };

    const viaCli = (p: Place, w: Json, g: Json) => {
      const args = (o: Json) => [
        '--type',
        o.type,
        '--abstract',
        o.abstract,
        ...(o.body ? ['--body', o.body] : []),
        ...Object.entries((o.fields ?? {}) as Record<string, string>).flatMap(([k, v]) => [
          '--field',
          `${k}=${v}`,
        ]),
        ...((o.tags ?? []) as string[]).flatMap((t) => ['--tag', t]),
        ...((o.links ?? []) as Json[]).flatMap((l) => ['--link', `${l.rel}:${l.target}`]),
        ...(o.source ? ['--source', o.source] : []),
        ...((o.applies_to ?? []) as string[]).flatMap((a) => ['--applies-to', a]),
        ...(o.valid_from ? ['--valid-from', o.valid_from] : []),
        ...(o.reason ? ['--reason', o.reason] : []),
        ...(o.global ? ['--global'] : []),
      ];
      const a = agentCli(p, ['remember', ...args(w)]);
      const b = agentCli(p, ['remember', ...args(g)]);
      assert.equal(a.code, 0, a.stderr);
      assert.equal(b.code, 0, b.stderr);
      return [a.json(), b.json()];
    };
    const mcp = await mcpStdio(mcpPlace);
    let viaMcp: Json[];
    try {
      const a = await mcp.call('remember', write(targets.mcp!));
      const b = await mcp.call('remember', global);
      assert.equal(a.isError, false, JSON.stringify(a.body));
      assert.equal(b.isError, false, JSON.stringify(b.body));
      viaMcp = [a.body, b.body];
    } finally {
      await mcp.close();
    }
    const project = `?project=${encodeURIComponent(httpPlace.repo)}`;
    const ha = await post(`/api/memories${project}`, write(targets.http!));
    const hb = await post(`/api/memories${project}`, global);
    assert.equal(ha.status, 201, JSON.stringify(ha.body));
    assert.equal(hb.status, 201, JSON.stringify(hb.body));
    const viaHttp = [ha.body, hb.body];
    const viaCliResults = viaCli(cliPlace, write(targets.cli!), global);

    // The results: the same op, revision, sequence and trust (the agent's, verified by the file).
    const result = ({ id: _id, handle: _h, ...r }: Json) => r;
    for (const i of [0, 1]) {
      same(result(viaMcp[i]), result(viaHttp[i]));
      same(result(viaCliResults[i]), result(viaHttp[i]));
    }
    assert.equal(viaHttp[0].trust, 'verified', 'the source was bound and hashed');

    // The memories as stored: links, source, scope and every field the same on all three.
    const read = (p: Place, id: string) => {
      const r = cli(['--json', 'read', id], { home: p.home, cwd: p.repo });
      assert.equal(r.code, 0, r.stderr);
      return r.json();
    };
    const stored = (p: Place, ids: Json[], target: string) =>
      ids.map((r) => portable(read(p, r.id), target));
    const http = stored(httpPlace, viaHttp, targets.http!);
    same(stored(mcpPlace, viaMcp, targets.mcp!), http);
    same(stored(cliPlace, viaCliResults, targets.cli!), http);
    assert.deepEqual(http[0].links, [{ rel: 'relates_to', target: 'TARGET' }]);
    assert.equal(http[0].source?.path, 'src/pay.ts');
    assert.equal(http[1].scope, 'global');
    assert.notEqual(http[0].scope, 'global', 'the other write stays in the project');
  });

  it('a recall with each option gives the same results on all three', async () => {
    const p = httpPlace;
    const cliRecall = (o: Json) => {
      const r = agentCli(p, [
        'recall',
        ...String(o.query).split(' '),
        ...(o.limit ? ['--limit', String(o.limit)] : []),
        ...(o.as_of ? ['--as-of', o.as_of] : []),
        ...(o.known_at ? ['--known-at', o.known_at] : []),
        ...(o.explain ? ['--explain'] : []),
        ...(o.min_trust ? ['--min-trust', o.min_trust] : []),
      ]);
      assert.equal(r.code, 0, r.stderr);
      return r.json();
    };
    const httpRecall = async (o: Json) => {
      const q = new URLSearchParams({ project: p.repo });
      for (const [k, v] of Object.entries(o)) q.set(k === 'query' ? 'q' : k, String(v));
      const r = await fetch(`${live.url}/api/recall?${q}`);
      assert.equal(r.status, 200);
      return (await r.json()) as Json;
    };
    const cases: Json[] = [
      { query: 'charging amount' },
      { query: 'charging payments stripe', limit: 1 },
      { query: 'charging amount', as_of: '2026-02-01T00:00:00.000Z' },
      { query: 'charging amount', as_of: '2025-12-01T00:00:00.000Z' },
      { query: 'charging payments stripe', known_at: seededAt },
      { query: 'charging payments stripe', explain: true },
      { query: 'charging payments stripe', min_trust: 'verified' },
    ];
    const mcp = await mcpStdio(p);
    try {
      const seen: number[] = [];
      for (const o of cases) {
        const viaHttp = await httpRecall(o);
        const viaMcp = await mcp.call('recall', o);
        assert.equal(viaMcp.isError, false, JSON.stringify(viaMcp.body));
        same(viaMcp.body, viaHttp, JSON.stringify(o));
        same(cliRecall(o), viaHttp, JSON.stringify(o));
        seen.push(viaHttp.results.length);
      }
      // Each option does something (results differ by option) and the same on every surface.
      assert.deepEqual(seen, [1, 1, 1, 0, 1, 2, 1]);
    } finally {
      await mcp.close();
    }
  });

  it('a bad field gets the same refusal on all three: what, which field, why', async () => {
    const p = httpPlace;
    const mcp = await mcpStdio(p);
    const project = `?project=${encodeURIComponent(p.repo)}`;
    try {
      const expectations: {
        name: string;
        field: string;
        message: RegExp;
        cli: string[];
        mcp: [string, Json];
        http: () => Promise<{ status: number; body: Json }>;
      }[] = [
        {
          name: 'an unknown link relation',
          field: 'links.0.rel',
          message: /^invalid remember: links\.0\.rel is refused: invalid enum value/,
          cli: ['remember', '--type', 'fact', '--abstract', 'x', '--link', 'loves:mem_x'],
          mcp: [
            'remember',
            { type: 'fact', abstract: 'x', links: [{ rel: 'loves', target: 'mem_x' }] },
          ],
          http: () =>
            post(`/api/memories${project}`, {
              type: 'fact',
              abstract: 'x',
              links: [{ rel: 'loves', target: 'mem_x' }],
            }),
        },
        {
          name: 'a recall limit past the one bound',
          field: 'limit',
          message: new RegExp(
            `^invalid recall: limit is refused: number must be less than or equal to ${LIMITS.recallLimit}`,
          ),
          cli: ['recall', 'charging', '--limit', String(LIMITS.recallLimit + 1)],
          mcp: ['recall', { query: 'charging', limit: LIMITS.recallLimit + 1 }],
          http: async () => {
            const r = await fetch(
              `${live.url}/api/recall${project}&q=charging&limit=${LIMITS.recallLimit + 1}`,
            );
            return { status: r.status, body: await r.json() };
          },
        },
        {
          name: 'a missing required field',
          field: 'type',
          message: /^invalid remember: type is required$/,
          cli: ['remember', '--abstract', 'x'],
          mcp: ['remember', { abstract: 'x' }],
          http: () => post(`/api/memories${project}`, { abstract: 'x' }),
        },
      ];
      for (const e of expectations) {
        const c = agentCli(p, e.cli);
        assert.equal(c.code, 1, `${e.name} (CLI): ${c.stderr}`);
        const viaCli = c.json().error;
        const m = await mcp.call(e.mcp[0], e.mcp[1]);
        assert.equal(m.isError, true, e.name);
        const h = await e.http();
        assert.equal(h.status, 400, e.name);
        const viaHttp = h.body.error;
        for (const [surface, err] of [
          ['cli', viaCli],
          ['mcp', m.body],
          ['http', viaHttp],
        ] as const) {
          assert.equal(err.code, 'invalid', `${e.name} (${surface})`);
          assert.equal(err.field, e.field, `${e.name} (${surface})`);
          assert.match(err.message, e.message, `${e.name} (${surface})`);
          assert.ok(err.hint, `${e.name} (${surface}) says what to do`);
        }
        assert.equal(m.body.message, viaHttp.message, e.name);
        assert.equal(viaCli.message, viaHttp.message, e.name);
        assert.equal(viaCli.hint, viaHttp.hint, e.name);
        // The person at a terminal reads it too, with the hint.
        assert.ok(c.stderr.includes(viaCli.message) && c.stderr.includes('hint:'), c.stderr);
      }
      // Nothing refused was written; the same write without the bad field is taken (the twin).
      const ok = await post(`/api/memories${project}`, { type: 'fact', abstract: 'x is fine' });
      assert.equal(ok.status, 201, JSON.stringify(ok.body));
    } finally {
      await mcp.close();
    }
  });
});
