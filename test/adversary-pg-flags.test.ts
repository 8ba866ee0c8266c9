// The global store flags reach every command the same way (issue 14): with `--db URL --tenant T`
// the hook, sleep, the MCP server over stdio and the fast path all work on that Postgres
// tenant. Each case pairs the "does" (the memory written with the same flags is found, the
// report is written) with the "must not": nothing is written to an embedded store in
// $HOME/.mneme, which the flags did not name.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import pg from 'pg';
import { BIN, gitRepo, tmpDir } from './helpers.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const skip = await pgSkipReason();
if (skip) console.log(`# skipping the Postgres flag tests: ${skip}`);

/** A clean environment: HOME is a temp dir, and no variable names a store or an agent. */
function cleanEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue;
    if (/^(MNEME_|CLAUDE_?CODE|CODEX_|XDG_STATE_HOME$)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, HOME: home, MNEME_DURABLE: '0' };
}

describe('--db/--tenant reach every command (Postgres)', { skip: skip ?? false }, () => {
  let db: ThrowawayDb;
  const home = tmpDir('mneme-pg-home-');
  const repo = gitRepo('git@github.com:acme/flags.git');
  const embedded = path.join(home, '.mneme');
  const env = cleanEnv(home);
  const run = (args: string[], input = '') => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      cwd: repo,
      env,
      input,
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  let flags: string[];
  let id: string;

  before(async () => {
    db = await throwawayDb(['acme']);
    flags = ['--db', db.url, '--tenant', 'acme'];
    const w = run([
      '--json',
      ...flags,
      'remember',
      '--type',
      'fact',
      '--abstract',
      'The flags reach every command through tamarind',
    ]);
    assert.equal(w.code, 0, w.stderr);
    id = (JSON.parse(w.stdout) as { id: string }).id;
    assert.equal(fs.existsSync(embedded), false, 'remember with --db wrote to ~/.mneme');
  });
  after(async () => {
    await db?.drop();
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(repo, { recursive: true, force: true });
  });

  it('a hook with --db/--tenant injects the tenant’s memory and writes nothing to ~/.mneme', async () => {
    const payload = JSON.stringify({ session_id: 'pg-s1', cwd: repo, source: 'startup' });
    // The full CLI (--embedder, which the fast path does not know, sends it there) and the fast
    // path.
    for (const args of [
      ['--embedder', 'off', ...flags, 'hook', 'session-start'],
      [...flags, 'hook', 'session-start'],
    ]) {
      const r = run(args, payload);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout.includes(id), `the hook did not inject ${id}: ${r.stdout}`);
      assert.equal(fs.existsSync(embedded), false, `${args.join(' ')} wrote to ~/.mneme`);
    }
    // A stop hook archives the transcript: into the tenant's session rows in the database.
    const transcript = path.join(home, 't.jsonl');
    fs.writeFileSync(
      transcript,
      `${JSON.stringify({ type: 'user', message: { role: 'user', content: 'hello' } })}\n`,
    );
    const stop = run(
      [...flags, 'hook', 'stop'],
      JSON.stringify({ session_id: 'pg-s1', cwd: repo, transcript_path: transcript }),
    );
    assert.equal(stop.code, 0, stop.stderr);
    assert.equal(fs.existsSync(embedded), false, 'the stop hook wrote to ~/.mneme');
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ tenant_id: string; n: number }>(
        "SELECT tenant_id, count(*)::int AS n FROM session_archive WHERE session = 'pg-s1' GROUP BY tenant_id",
      );
      assert.deepEqual(rows, [{ tenant_id: 'acme', n: 1 }], 'the stop hook archived nothing');
    } finally {
      await client.end();
    }
  });

  it('sleep with --db writes its report beside the tenant’s state, not into ~/.mneme', () => {
    const r = run(['--json', ...flags, 'sleep']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { ran: boolean; report: string };
    assert.equal(out.ran, true);
    const state = path.join(home, '.local', 'state', 'mneme');
    const reports = fs
      .readdirSync(state)
      .flatMap((d) =>
        fs.existsSync(path.join(state, d, out.report)) ? [path.join(state, d, out.report)] : [],
      );
    assert.equal(reports.length, 1, `no report ${out.report} under ${state}`);
    assert.equal(fs.existsSync(embedded), false, 'sleep wrote to ~/.mneme');
  });

  it('the fast-path recall with --db/--tenant finds the tenant’s memory', () => {
    const r = run(['--json', ...flags, 'recall', 'tamarind']);
    assert.equal(r.code, 0, r.stderr);
    const results = (JSON.parse(r.stdout) as { results: { id: string }[] }).results;
    assert.deepEqual(
      results.map((x) => x.id),
      [id],
    );
    assert.equal(fs.existsSync(embedded), false, 'recall wrote to ~/.mneme');
  });

  it('ui with --db refuses instead of serving an embedded store the flags did not name', () => {
    const r = run([...flags, 'ui', '--port', '0']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /the dashboard runs on the embedded store, not with --db/);
    assert.equal(fs.existsSync(embedded), false, 'ui wrote to ~/.mneme');
  });

  it('mneme --db --tenant mcp reads the memory written with the same flags', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, ...flags, 'mcp'],
      cwd: repo,
      env,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'pg-flags', version: '1.0.0' });
    try {
      await client.connect(transport);
      const r = await client.callTool({ name: 'read', arguments: { id } });
      assert.notEqual(r.isError, true, JSON.stringify(r.content));
      assert.match(JSON.stringify(r.structuredContent), /tamarind/);
      const q = await client.callTool({ name: 'recall', arguments: { query: 'tamarind' } });
      const results = (q.structuredContent as { results: { id: string }[] }).results;
      assert.deepEqual(
        results.map((x) => x.id),
        [id],
      );
    } finally {
      await client.close();
    }
    assert.equal(fs.existsSync(embedded), false, 'the MCP server wrote to ~/.mneme');
  });
});
