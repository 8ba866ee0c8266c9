// Issue 16 items 1 and 3: `mneme doctor` says only true things, because it runs what the hosts
// run. It starts the MCP entry written in the host's config (command, arguments, environment —
// Codex's short list of passed variables included) and runs each configured hook command through
// the shell as a probe, then says which store each uses and fails, naming both, when they differ.
// It reports Codex hooks as skipped until Codex's config records their trust, a SessionEnd with
// no transcript (each `claude mcp list` fires one) is not a hook error, and the executor it shows
// is the one the distiller runs. Everything through the real CLI in a scratch HOME.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as TOML from 'smol-toml';
import { BIN } from './hook-helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- host config files are edited as JSON/TOML data */

interface Check {
  check: string;
  status: string;
  detail: string;
  fix?: string;
}

describe('mneme doctor runs what the hosts run', () => {
  let tmp: string;
  let home: string;
  let repo: string;
  let storeA: string;
  let bin: string;

  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-doctor-'));
    home = path.join(tmp, 'home');
    repo = path.join(tmp, 'repo');
    storeA = path.join(tmp, 'store-a');
    bin = path.join(tmp, 'bin');
    fs.mkdirSync(home);
    fs.mkdirSync(bin);
    fs.mkdirSync(path.join(repo, '.git'), { recursive: true });
    fs.writeFileSync(
      path.join(repo, '.git', 'config'),
      '[remote "origin"]\n\turl = git@github.com:acme/doctor.git\n',
    );
    // A stand-in `claude` on PATH: the default executor of Claude Code sessions is there.
    fs.writeFileSync(path.join(bin, 'claude'), '#!/bin/sh\necho \'{"op":"skip"}\'\n');
    fs.chmodSync(path.join(bin, 'claude'), 0o755);
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  /** The host's environment: no MNEME_HOME of its own (a host started from a desktop icon). */
  const hostEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    PATH: `${bin}${path.delimiter}${path.dirname(process.execPath)}${path.delimiter}/usr/bin:/bin`,
    HOME: home,
    MNEME_DURABLE: '0',
    ...extra,
  });
  const mneme = (args: string[], env: NodeJS.ProcessEnv = hostEnv()) =>
    spawnSync(process.execPath, [BIN, ...args], {
      cwd: repo,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
  const doctor = (args: string[] = [], env?: NodeJS.ProcessEnv) => {
    const r = mneme([...args, '--json', 'doctor'], env);
    const report = JSON.parse(r.stdout) as { ok: boolean; checks: Check[] };
    return { code: r.status, report, by: new Map(report.checks.map((c) => [c.check, c])) };
  };
  const settingsFile = () => path.join(home, '.claude', 'settings.json');
  const claudeJson = () => path.join(home, '.claude.json');
  const editJson = (file: string, fn: (doc: any) => void) => {
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    fn(doc);
    fs.writeFileSync(file, JSON.stringify(doc, null, 2));
  };

  it('passes when the configured hooks and MCP entry use one store, and names it', () => {
    const s = mneme(['--store', storeA, 'setup', 'claude-code']);
    assert.equal(s.status, 0, s.stderr);
    const { code, by, report } = doctor(['--store', storeA]);
    assert.equal(code, 0, JSON.stringify(report.checks, null, 1));
    assert.equal(by.get('claude-code mcp')!.status, 'ok');
    assert.match(
      by.get('claude-code mcp')!.detail,
      new RegExp(`— store ${storeA}, project acme-doctor`),
    );
    assert.equal(by.get('claude-code hooks')!.status, 'ok');
    assert.equal(by.get('claude-code stores')!.status, 'ok');
    assert.equal(by.get('claude-code stores')!.detail, `hooks and MCP server both use ${storeA}`);
    // The executor the distiller runs for Claude Code sessions, found: no "no executor" warning.
    assert.equal(by.get('distiller claude-code')!.status, 'ok');
    assert.match(
      by.get('distiller claude-code')!.detail,
      /^claude-code: claude \(distill\.claude_code_executor = claude \(default\)\), `claude` found$/,
    );
    assert.match(by.get('distiller spend')!.detail, /^0 of 20 executor runs in the last hour/);
  });

  it('fails naming both stores when the hook commands lost the store (MCP env only)', () => {
    // What setup wrote before: MNEME_HOME in the MCP entry's env, nothing on the hook commands.
    editJson(settingsFile(), (doc) => {
      for (const groups of Object.values(doc.hooks) as any[])
        for (const g of groups)
          for (const h of g.hooks) h.command = h.command.replace(/ --store \S+$/, '');
    });
    const { code, by } = doctor(['--store', storeA]);
    assert.equal(code, 1);
    const st = by.get('claude-code stores')!;
    assert.equal(st.status, 'fail');
    const defaultStore = path.join(home, '.mneme');
    assert.match(
      st.detail,
      new RegExp(
        `^the hooks and the MCP server use different stores: ${defaultStore} ← hooks session-start, pre-tool-use, stop, session-end, pre-compact \\(store from default\\) \\| ${storeA} ← the MCP server in ${claudeJson()}\\. `,
      ),
    );
    assert.match(st.detail, new RegExp(`${storeA} ← the MCP server in ${claudeJson()}`));
    assert.match(st.fix!, /mneme --store DIR setup claude-code/);
    // Set up again: both agree once more.
    mneme(['--store', storeA, 'setup', 'claude-code']);
    assert.equal(doctor(['--store', storeA]).by.get('claude-code stores')!.status, 'ok');
  });

  it('fails when the MCP entry’s own environment names another store (the entry is what runs)', () => {
    const storeB = path.join(tmp, 'store-b');
    editJson(claudeJson(), (doc) => (doc.mcpServers.mneme.env = { MNEME_HOME: storeB }));
    try {
      const { code, by } = doctor(['--store', storeA]);
      assert.equal(code, 1);
      assert.match(by.get('claude-code mcp')!.detail, new RegExp(`— store ${storeB},`));
      assert.match(
        by.get('claude-code stores')!.detail,
        new RegExp(
          `${storeA} ← hooks session-start, .* \\(store from flag --store\\) \\| ${storeB} ← the MCP server`,
        ),
      );
      // An entry whose command cannot start is a failure that names the command.
      editJson(
        claudeJson(),
        (doc) => (doc.mcpServers.mneme.command = path.join(tmp, 'no-such-node')),
      );
      const broken = doctor(['--store', storeA]);
      assert.equal(broken.by.get('claude-code mcp')!.status, 'fail');
      assert.match(broken.by.get('claude-code mcp')!.detail, /no-such-node .* did not answer/);
    } finally {
      mneme(['--store', storeA, 'setup', 'claude-code']);
    }
    assert.equal(doctor(['--store', storeA]).code, 0);
  });

  it('a hook command that does not run is a failure naming the file and the command', () => {
    editJson(settingsFile(), (doc) => {
      doc.hooks.Stop[0].hooks[0].command = `${path.join(tmp, 'gone', 'mneme')} hook stop`;
    });
    try {
      const { code, by } = doctor(['--store', storeA]);
      assert.equal(code, 1);
      const c = by.get('claude-code hook stop')!;
      assert.equal(c.status, 'fail');
      assert.match(
        c.detail,
        new RegExp(`${settingsFile()} runs \`.*gone/mneme hook stop\`, which exits with 127`),
      );
    } finally {
      mneme(['--store', storeA, 'setup', 'claude-code']);
    }
  });

  it('a SessionEnd without a transcript (as `claude mcp list` fires it) is not a hook error', () => {
    const payload = JSON.stringify({
      session_id: '6b6f3fce-5c2e-4e8d-a9f6-3005de2c78c9',
      transcript_path: path.join(home, '.claude', 'projects', 'x', 'never-written.jsonl'),
      cwd: repo,
      hook_event_name: 'SessionEnd',
      reason: 'other',
    });
    const r = spawnSync(process.execPath, [BIN, '--store', storeA, 'hook', 'session-end'], {
      cwd: repo,
      env: hostEnv(),
      input: payload,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0);
    const { by } = doctor(['--store', storeA]);
    const c = by.get('hook claude-code session-end')!;
    assert.equal(c.status, 'ok', c.detail);
    assert.match(c.detail, /— nothing$/);
    const log = fs
      .readFileSync(path.join(storeA, '.state', 'hooks.log'), 'utf8')
      .trim()
      .split('\n');
    assert.match(
      log.at(-1)!,
      /"transcript":"the transcript file does not exist: nothing to archive"/,
    );
    // The twin: a transcript path that names something that is not a transcript is an error.
    fs.writeFileSync(path.join(tmp, 'not-jsonl.txt'), 'secret=1\n');
    spawnSync(process.execPath, [BIN, '--store', storeA, 'hook', 'session-end'], {
      cwd: repo,
      env: hostEnv(),
      input: payload.replace(
        /"transcript_path":"[^"]*"/,
        `"transcript_path":"${path.join(tmp, 'not-jsonl.txt')}"`,
      ),
      encoding: 'utf8',
    });
    const after = doctor(['--store', storeA]).by;
    const bad = after.get('hook claude-code session-end')!;
    assert.equal(bad.status, 'warn');
    assert.match(bad.detail, /error: transcript file is not JSONL/);
    // A Stop comes after a turn, which always writes a transcript: there a missing one is an error.
    spawnSync(process.execPath, [BIN, '--store', storeA, 'hook', 'stop'], {
      cwd: repo,
      env: hostEnv(),
      input: payload,
      encoding: 'utf8',
    });
    const stop = doctor(['--store', storeA]).by.get('hook claude-code stop')!;
    assert.equal(stop.status, 'warn');
    assert.match(stop.detail, /error: transcript file does not exist/);
  });

  it('reports Codex hooks as skipped until Codex records their trust, and wired once it does', () => {
    const s = mneme(['--store', storeA, 'setup', 'codex']);
    assert.equal(s.status, 0, s.stderr);
    const hooksJson = path.join(home, '.codex', 'hooks.json');
    const first = doctor(['--store', storeA]);
    const trust = first.by.get('codex hook trust')!;
    assert.equal(trust.status, 'warn');
    assert.match(
      trust.detail,
      /^Codex skips session-start, pre-tool-use, stop, session-end, pre-compact \(not trusted yet\)$/,
    );
    assert.match(trust.fix!, /trust mneme’s hooks/);
    assert.equal(first.by.get('codex hooks')!.status, 'warn');
    assert.match(first.by.get('codex hooks')!.detail, /^none will run; missing: session-start/);
    assert.equal(
      first.by.get('codex hooks')!.fix,
      'trust them in Codex (see codex hook trust above)',
    );
    // Codex's MCP entry, run with the variables Codex passes (not this shell's MNEME_HOME).
    assert.match(first.by.get('codex mcp')!.detail, new RegExp(`— store ${storeA},`));
    // Trust as Codex records it: [hooks.state."<hooks.json>:<event>:<group>:<handler>"].
    const doc = JSON.parse(fs.readFileSync(hooksJson, 'utf8'));
    const snake = (e: string) => e.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
    let state = '';
    for (const [event, groups] of Object.entries(doc.hooks) as [string, any[]][])
      groups.forEach((g, gi) =>
        g.hooks.forEach((_: unknown, hi: number) => {
          state += `\n[hooks.state."${hooksJson}:${snake(event)}:${gi}:${hi}"]\ntrusted_hash = "sha256:00"\n`;
        }),
      );
    fs.appendFileSync(path.join(home, '.codex', 'config.toml'), state);
    const trusted = doctor(['--store', storeA]);
    assert.equal(trusted.by.get('codex hook trust')!.status, 'ok');
    assert.equal(trusted.by.get('codex hooks')!.status, 'ok');
    assert.match(
      trusted.by.get('codex hooks')!.detail,
      /^wired: session-start, pre-tool-use, stop, session-end, pre-compact/,
    );
    assert.equal(trusted.by.get('codex stores')!.detail, `hooks and MCP server both use ${storeA}`);
    // The executor of Codex sessions is `codex exec`; not installed here, and not chosen: a warning.
    const dx = trusted.by.get('distiller codex')!;
    assert.equal(dx.status, 'warn');
    assert.match(
      dx.detail,
      /^codex: codex \(distill\.codex_executor = codex \(default\)\), `codex` not on PATH/,
    );
  });

  it('Codex passes only its own short list of variables to the MCP server it starts', () => {
    // An entry without env relies on the host's environment; Codex does not pass MNEME_HOME on.
    // The file is rewritten as Codex rewrites it (as data: no markers, its own layout).
    const file = path.join(home, '.codex', 'config.toml');
    const before = fs.readFileSync(file, 'utf8');
    const doc = TOML.parse(before) as any;
    delete doc.mcp_servers.mneme.env;
    fs.writeFileSync(file, TOML.stringify(doc));
    try {
      const { by } = doctor([], hostEnv({ MNEME_HOME: storeA }));
      assert.match(
        by.get('codex mcp')!.detail,
        new RegExp(`— store ${path.join(home, '.mneme')},`),
      );
      assert.equal(by.get('codex stores')!.status, 'fail');
      // The twin: Claude Code passes its whole environment, so its entry follows MNEME_HOME.
      assert.match(by.get('claude-code mcp')!.detail, new RegExp(`— store ${storeA},`));
    } finally {
      fs.writeFileSync(file, before);
    }
  });
});
