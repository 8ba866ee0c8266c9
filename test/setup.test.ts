// `mneme setup` and `mneme doctor` through the real binary with a temporary HOME: setup is
// idempotent, keeps the user's other entries, backs files up, and --uninstall restores them.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { installRoot, mnemeBin } from '../src/surfaces/install-root.js';
import { hookSpecs } from '../src/surfaces/setup/hosts.js';

let tmp: string;
let home: string;
let repo: string;

function mneme(args: string[], cwd = repo) {
  const r = spawnSync(process.execPath, [mnemeBin(), ...args], {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: path.dirname(process.execPath),
      HOME: home,
      MNEME_HOME: path.join(tmp, 'store'),
      MNEME_DURABLE: '0',
    },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const json = (args: string[]) => {
  const r = mneme([...args, '--json']);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  return JSON.parse(r.stdout);
};
const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};
const read = (file: string) => fs.readFileSync(file, 'utf8');
const backups = (file: string) =>
  fs
    .readdirSync(path.dirname(file))
    .filter((n) => n.startsWith(`${path.basename(file)}.mneme-backup-`));

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-setup-'));
  home = path.join(tmp, 'home');
  repo = path.join(tmp, 'repo');
  fs.mkdirSync(home);
  fs.mkdirSync(repo);
  execFileSync('git', ['init', '-q', repo]);
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('mneme setup claude-code --user', () => {
  const settings = () => path.join(home, '.claude', 'settings.json');
  const claudeJson = () => path.join(home, '.claude.json');
  const userSettings = {
    permissions: { allow: ['Bash(npm test)'] },
    hooks: {
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo audit' }] }],
    },
  };
  const userClaude = {
    numStartups: 7,
    mcpServers: { other: { type: 'stdio', command: 'other-server', args: [] } },
  };
  let originalSettings: string;
  let originalClaude: string;

  it('merges hooks and the MCP entry, keeping the unrelated entries and a backup', () => {
    originalSettings = `${JSON.stringify(userSettings, null, 2)}\n`;
    originalClaude = `${JSON.stringify(userClaude, null, 2)}\n`;
    write(settings(), originalSettings);
    write(claudeJson(), originalClaude);

    const r = json(['setup', 'claude-code', '--user']);
    assert.deepEqual(
      r.files.map((f: { action: string }) => f.action),
      ['updated', 'updated'],
    );
    const s = JSON.parse(read(settings()));
    assert.deepEqual(s.permissions, userSettings.permissions);
    const pre = s.hooks.PreToolUse as { matcher: string; hooks: { command: string }[] }[];
    assert.ok(pre.some((g) => g.matcher === 'Bash' && g.hooks[0]!.command === 'echo audit'));
    const ours = pre.find((g) => g.matcher === 'Edit|Write|MultiEdit')!;
    // The hooks run on the same store as the MCP server (here the one MNEME_HOME named).
    assert.ok(
      ours.hooks[0]!.command.endsWith(` hook pre-tool-use --store ${path.join(tmp, 'store')}`),
      ours.hooks[0]!.command,
    );
    assert.match(ours.hooks[0]!.command, /mneme(\.js)?"? hook pre-tool-use /);
    for (const ev of ['SessionStart', 'Stop', 'SessionEnd', 'PreCompact']) assert.ok(s.hooks[ev]);
    assert.equal(s.hooks.UserPromptSubmit, undefined, 'the prompt hook is off by default');

    const c = JSON.parse(read(claudeJson()));
    assert.equal(c.numStartups, 7);
    assert.deepEqual(c.mcpServers.other, userClaude.mcpServers.other);
    assert.deepEqual(c.mcpServers.mneme.args.slice(-1), ['mcp']);
    assert.equal(c.mcpServers.mneme.env.MNEME_HOME, path.join(tmp, 'store'));

    for (const f of [settings(), claudeJson()]) {
      const b = backups(f);
      assert.equal(b.length, 1, `one backup of ${f}`);
      assert.equal(
        read(path.join(path.dirname(f), b[0]!)),
        f === settings() ? originalSettings : originalClaude,
      );
    }
  });

  it('changes nothing when run a second time', () => {
    const before = [read(settings()), read(claudeJson())];
    const r = json(['setup', 'claude-code', '--user']);
    assert.deepEqual(
      r.files.map((f: { action: string }) => f.action),
      ['unchanged', 'unchanged'],
    );
    assert.deepEqual([read(settings()), read(claudeJson())], before);
    assert.equal(backups(settings()).length, 1, 'no new backup for an unchanged file');
  });

  it('--dry-run reports the change and writes nothing', () => {
    const before = read(settings());
    const r = json(['setup', 'claude-code', '--user', '--prompt-hook', '--dry-run']);
    assert.equal(r.files[0].action, 'updated');
    assert.equal(read(settings()), before);
  });

  it('--uninstall restores the files exactly', () => {
    const r = json(['setup', 'claude-code', '--user', '--uninstall']);
    assert.deepEqual(
      r.files.map((f: { action: string }) => f.action),
      ['updated', 'updated'],
    );
    assert.equal(read(settings()), originalSettings);
    assert.equal(read(claudeJson()), originalClaude);
    const again = json(['setup', 'claude-code', '--user', '--uninstall']);
    assert.deepEqual(
      again.files.map((f: { action: string }) => f.action),
      ['unchanged', 'unchanged'],
    );
  });

  it('leaves a file it cannot parse untouched', () => {
    write(settings(), '{ "hooks": ');
    const r = mneme(['setup', 'claude-code', '--user']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /not valid JSON/);
    assert.equal(read(settings()), '{ "hooks": ');
    assert.equal(read(claudeJson()), originalClaude, 'no file changes when one cannot be parsed');
    write(settings(), originalSettings);
  });
});

describe('mneme setup claude-code --project and cursor', () => {
  it('creates .claude/settings.json and .mcp.json, and uninstall removes what it created', () => {
    const r = json(['setup', 'claude-code', '--project', '--prompt-hook']);
    assert.deepEqual(
      r.files.map((f: { action: string }) => f.action),
      ['created', 'created'],
    );
    const s = JSON.parse(read(path.join(repo, '.claude', 'settings.json')));
    assert.ok(s.hooks.UserPromptSubmit, '--prompt-hook installs UserPromptSubmit');
    assert.ok(JSON.parse(read(path.join(repo, '.mcp.json'))).mcpServers.mneme);
    json(['setup', 'claude-code', '--project', '--uninstall']);
    assert.ok(!fs.existsSync(path.join(repo, '.mcp.json')));
    assert.ok(!fs.existsSync(path.join(repo, '.claude', 'settings.json')));
  });

  it('cursor: merges into ~/.cursor/mcp.json', () => {
    const file = path.join(home, '.cursor', 'mcp.json');
    const original = `${JSON.stringify({ mcpServers: { docs: { url: 'https://example.com/mcp' } } }, null, 4)}\n`;
    write(file, original);
    json(['setup', 'cursor']);
    const doc = JSON.parse(read(file));
    assert.deepEqual(Object.keys(doc.mcpServers), ['docs', 'mneme']);
    assert.match(read(file), /^ {4}"mcpServers"/m, 'keeps the file’s indentation');
    json(['setup', 'cursor', '--uninstall']);
    assert.equal(read(file), original);
  });
});

describe('mneme setup codex', () => {
  const config = () => path.join(home, '.codex', 'config.toml');
  const hooks = () => path.join(home, '.codex', 'hooks.json');
  const original = 'model = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-server"\n';

  it('writes a managed [mcp_servers.mneme] block and hooks.json, idempotently', () => {
    write(config(), original);
    json(['setup', 'codex']);
    const text = read(config());
    assert.ok(text.startsWith(original), 'the user’s TOML is kept byte for byte');
    assert.match(text, /\[mcp_servers\.mneme\]\ncommand = ".+"\nargs = \[.*"mcp"\]/);
    const h = JSON.parse(read(hooks()));
    assert.ok(h.hooks.SessionStart && h.hooks.PreToolUse && h.hooks.Stop);
    assert.match(
      h.hooks.SessionStart[0].hooks[0].command,
      / hook session-start --host codex --store \S+$/,
    );
    const second = json(['setup', 'codex']);
    assert.deepEqual(
      second.files.map((f: { action: string }) => f.action),
      ['unchanged', 'unchanged'],
    );
    assert.equal(backups(config()).length, 1);
  });

  it('refuses to add a second [mcp_servers.mneme] table the user wrote', () => {
    const dir = path.join(tmp, 'home2');
    fs.mkdirSync(path.join(dir, '.codex'), { recursive: true });
    const file = path.join(dir, '.codex', 'config.toml');
    fs.writeFileSync(file, '[mcp_servers.mneme]\ncommand = "mine"\n');
    const r = spawnSync(process.execPath, [mnemeBin(), 'setup', 'codex'], {
      cwd: repo,
      encoding: 'utf8',
      env: { PATH: path.dirname(process.execPath), HOME: dir, MNEME_DURABLE: '0' },
    });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /already has an \[mcp_servers\.mneme\] table/);
    assert.equal(read(file), '[mcp_servers.mneme]\ncommand = "mine"\n');
  });

  it('--uninstall restores config.toml and removes the hooks file it created', () => {
    json(['setup', 'codex', '--uninstall']);
    assert.equal(read(config()), original);
    assert.ok(!fs.existsSync(hooks()));
  });
});

describe('mneme doctor', () => {
  it('reports each check and exits 0 when nothing fails', () => {
    json(['setup', 'cursor']);
    const r = mneme(['doctor', '--json']);
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      checks: { check: string; status: string; detail: string }[];
    };
    const by = new Map(report.checks.map((c) => [c.check, c]));
    assert.equal(by.get('store')?.status, 'ok');
    assert.equal(by.get('journal')?.status, 'ok');
    // The configured entry itself was started and answered with the store it uses.
    assert.equal(by.get('cursor mcp')?.status, 'ok', by.get('cursor mcp')?.detail);
    assert.match(by.get('cursor mcp')!.detail, /answered status in \d+ ms — store \//);
    assert.equal(by.get('distiller claude-code')?.status, 'warn');
    assert.equal(report.ok, true);
    assert.equal(r.code, 0);
  });

  it('shows the last run of each hook event from the hook log', () => {
    const log = path.join(tmp, 'store', '.state', 'hooks.log');
    const line = (o: object) => `${JSON.stringify(o)}\n`;
    fs.writeFileSync(
      log,
      line({
        at: '2026-01-01T00:00:00Z',
        event: 'session-start',
        host: 'claude-code',
        ms: 40,
        outcome: 'nothing',
      }) +
        'not json\n' +
        line({
          at: '2026-01-02T00:00:00Z',
          event: 'session-start',
          host: 'claude-code',
          ms: 35,
          outcome: 'injected',
        }) +
        line({
          at: '2026-01-02T00:01:00Z',
          event: 'stop',
          host: 'claude-code',
          ms: 9,
          outcome: 'error',
          error: 'transcript missing',
        }),
    );
    const report = JSON.parse(mneme(['doctor', '--json']).stdout) as {
      checks: { check: string; status: string; detail: string }[];
    };
    const by = new Map(report.checks.map((c) => [c.check, c]));
    const start = by.get('hook claude-code session-start')!;
    assert.equal(start.status, 'ok');
    assert.match(start.detail, /2026-01-02T00:00:00Z in 35 ms — injected/);
    const stop = by.get('hook claude-code stop')!;
    assert.equal(stop.status, 'warn');
    assert.match(stop.detail, /error: transcript missing/);
    fs.rmSync(log);
  });

  it('fails (exit 1) when the configured distiller command is missing', () => {
    const r = spawnSync(process.execPath, [mnemeBin(), 'doctor'], {
      cwd: repo,
      encoding: 'utf8',
      env: {
        PATH: path.dirname(process.execPath),
        HOME: home,
        MNEME_HOME: path.join(tmp, 'store'),
        MNEME_DURABLE: '0',
        MNEME_DISTILL_EXECUTOR: 'command',
        MNEME_DISTILL_COMMAND: 'no-such-distiller --json',
      },
    });
    assert.equal(r.status, 1);
    assert.match(r.stdout, /fail\s+distiller claude-code .*no-such-distiller/);
    assert.match(r.stdout, /ok\s+store/);
  });
});

describe('the Claude Code plugin directory', () => {
  it('wires the same hook events and MCP server that `mneme setup claude-code` writes', () => {
    const dir = path.join(installRoot(), 'plugin', 'claude-code');
    const plugin = JSON.parse(read(path.join(dir, 'hooks', 'hooks.json'))) as {
      hooks: Record<string, { matcher?: string; hooks: { command: string }[] }[]>;
    };
    const specs = hookSpecs('claude-code', { command: 'mneme', args: [] });
    const listed = Object.entries(plugin.hooks).flatMap(([hostEvent, groups]) =>
      groups.flatMap((g) => g.hooks.map((h) => `${hostEvent}|${g.matcher ?? ''}|${h.command}`)),
    );
    assert.deepEqual(
      listed.sort(),
      specs.map((s) => `${s.hostEvent}|${s.matcher ?? ''}|${s.command}`).sort(),
    );
    const mcp = JSON.parse(read(path.join(dir, '.mcp.json')));
    assert.deepEqual(mcp.mcpServers.mneme.args, ['mcp']);
    const manifest = JSON.parse(read(path.join(dir, '.claude-plugin', 'plugin.json')));
    assert.equal(manifest.name, 'mneme');
    const skill = read(path.join(dir, 'skills', 'mneme', 'SKILL.md'));
    assert.match(skill, /^---\nname: mneme\ndescription: /);
    assert.doesNotMatch(skill, /mneme review|dashboard|tombstone lift/);
  });
});
