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
    const ours = pre.find((g) => g.matcher === 'Edit|Write|NotebookEdit')!;
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

  it('takes over a [mcp_servers.mneme] table the user wrote, keeping a backup', () => {
    const dir = path.join(tmp, 'home2');
    fs.mkdirSync(path.join(dir, '.codex'), { recursive: true });
    const file = path.join(dir, '.codex', 'config.toml');
    const mine =
      '# mine\n[mcp_servers.mneme]\ncommand = "mine"\n\n[mcp_servers.docs]\ncommand = "d"\n';
    fs.writeFileSync(file, mine);
    const r = spawnSync(process.execPath, [mnemeBin(), 'setup', 'codex'], {
      cwd: repo,
      encoding: 'utf8',
      env: { PATH: path.dirname(process.execPath), HOME: dir, MNEME_DURABLE: '0' },
    });
    assert.equal(r.status, 0, r.stderr);
    const text = read(file);
    assert.ok(text.startsWith('# mine\n[mcp_servers.mneme]\ncommand = '), text);
    assert.doesNotMatch(text, /"mine"/);
    assert.match(text, /\[mcp_servers\.docs\]\ncommand = "d"\n/);
    assert.equal(read(path.join(dir, '.codex', backups(file)[0]!)), mine);
  });

  it('--uninstall restores config.toml and removes the hooks file it created', () => {
    json(['setup', 'codex', '--uninstall']);
    assert.equal(read(config()), original);
    assert.ok(!fs.existsSync(hooks()));
  });
});

describe('mneme setup codex on a config.toml that Codex rewrote', () => {
  // test/fixtures/codex: the file `codex mcp add other -- node /tmp/other.js` (Codex 0.171) left
  // from one an older setup had written: the begin marker gone, env moved into the sub-table
  // [mcp_servers.mneme.env], the other server's table inside the old block, the end marker after
  // it. The e2e test (hosts-e2e) makes the same rewrite with the real Codex.
  const rewritten = fs.readFileSync(
    path.join(installRoot(), 'test', 'fixtures', 'codex', 'config-rewritten-by-codex-0.171.toml'),
    'utf8',
  );
  let dir: string;
  let file: string;
  /** The `mneme` the entry names, on PATH: doctor starts the entry exactly as configured. */
  let binDir: string;
  const run = (args: string[]) =>
    spawnSync(process.execPath, [mnemeBin(), ...args], {
      cwd: repo,
      encoding: 'utf8',
      env: {
        PATH: [binDir, path.dirname(process.execPath)].join(path.delimiter),
        HOME: dir,
        MNEME_HOME: path.join(dir, 'store'),
        MNEME_DURABLE: '0',
      },
    });
  const codexCheck = () => {
    const r = run(['doctor', '--json']);
    const checks = JSON.parse(r.stdout).checks as { check: string; status: string }[];
    return checks.find((c) => c.check === 'codex mcp')?.status;
  };

  before(() => {
    dir = path.join(tmp, 'home-rewritten');
    file = path.join(dir, '.codex', 'config.toml');
    write(file, rewritten);
    binDir = path.join(tmp, 'bin-rewritten');
    fs.mkdirSync(binDir, { recursive: true });
    fs.symlinkSync(mnemeBin(), path.join(binDir, 'mneme'));
  });

  it('doctor finds the entry, setup repoints it in place, and leaves every other table', () => {
    // Doctor finds the entry Codex rewrote and starts it exactly as configured.
    assert.equal(codexCheck(), 'ok', 'the entry Codex rewrote is still mneme’s');
    const r = run(['setup', 'codex', '--json']);
    assert.equal(r.status, 0, r.stderr);
    const text = read(file);
    assert.match(text, /^# my settings\nmodel = "o3"\n/);
    assert.match(text, /\[mcp_servers\.mneme\.env\]\nMNEME_HOME = "[^"]*home-rewritten\/store"\n/);
    assert.doesNotMatch(text, /\/tmp\/store"/, 'the old store is replaced');
    assert.match(text, /\[mcp_servers\.other\]\ncommand = "node"\nargs = \["\/tmp\/other\.js"\]\n/);
    assert.match(text, /\[profiles\.x\]\nmodel = "gpt-5"/);
    assert.doesNotMatch(text, /# <<< mneme <<<|# >>> mneme/, 'the old markers go');
    assert.equal(text.match(/\[mcp_servers\.mneme\]/g)?.length, 1);
    const again = run(['setup', 'codex', '--json']);
    assert.equal(JSON.parse(again.stdout).files[0].action, 'unchanged');
    assert.equal(codexCheck(), 'ok', 'the repointed entry starts and answers');
  });

  it('--uninstall removes the table and its env sub-table, and doctor then reports it missing', () => {
    const r = run(['setup', 'codex', '--uninstall', '--json']);
    assert.equal(r.status, 0, r.stderr);
    const text = read(file);
    assert.doesNotMatch(text, /mcp_servers\.mneme|MNEME_HOME/);
    assert.match(text, /\[mcp_servers\.other\]\ncommand = "node"/);
    assert.match(text, /^# my settings\nmodel = "o3"\n/);
    assert.notEqual(codexCheck(), 'ok');
  });
});

describe('mneme setup codex on other layouts of config.toml', () => {
  const runIn = (dir: string, args: string[]) =>
    spawnSync(process.execPath, [mnemeBin(), ...args], {
      cwd: repo,
      encoding: 'utf8',
      env: { PATH: path.dirname(process.execPath), HOME: dir, MNEME_DURABLE: '0' },
    });
  const layouts: Record<string, string> = {
    'servers as one inline table': 'mcp_servers = { docs = { command = "d" } }\n',
    'a dotted-key entry': 'mcp_servers.mneme.command = "old"\nmcp_servers.mneme.args = ["x"]\n',
    'env inline, before another server': `# c\n[mcp_servers.mneme]\ncommand = "old"\nargs = []\nenv = { MNEME_HOME = "/x" }\n\n[mcp_servers.docs]\ncommand = "d" # keep\n`,
  };
  for (const [name, text] of Object.entries(layouts))
    it(`${name}: setup sets the entry, uninstall leaves only the rest`, () => {
      const dir = fs.mkdtempSync(path.join(tmp, 'layout-'));
      const file = path.join(dir, '.codex', 'config.toml');
      write(file, text);
      const r = runIn(dir, ['setup', 'codex', '--json']);
      assert.equal(r.status, 0, r.stderr);
      const set = read(file);
      assert.match(set, /mneme/);
      assert.doesNotMatch(set, /"old"|\/x"/);
      if (text.includes('docs')) assert.match(set, /docs/);
      if (text.includes('# keep')) assert.match(set, /command = "d" # keep/, 'comments stay');
      assert.equal(runIn(dir, ['setup', 'codex', '--json']).status, 0);
      assert.equal(
        JSON.parse(runIn(dir, ['setup', 'codex', '--json']).stdout).files[0].action,
        'unchanged',
      );
      const u = runIn(dir, ['setup', 'codex', '--uninstall', '--json']);
      assert.equal(u.status, 0, u.stderr);
      // A file left with nothing in it is removed, as for JSON.
      const rest = fs.existsSync(file) ? read(file) : '';
      assert.doesNotMatch(rest, /mneme/);
      if (text.includes('docs')) assert.match(rest, /docs/);
      else assert.equal(rest, '');
    });

  it('a file that is not TOML is refused, named, and left as it was', () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'layout-'));
    const file = path.join(dir, '.codex', 'config.toml');
    write(file, 'model = \n[[[');
    const r = runIn(dir, ['setup', 'codex']);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /config\.toml is not valid TOML/);
    assert.match(r.stderr, /nothing was changed/);
    assert.equal(read(file), 'model = \n[[[');
    assert.ok(!fs.existsSync(path.join(dir, '.codex', 'hooks.json')), 'no other file either');
  });
});

describe('mneme setup --project writes files that can be committed', () => {
  it('names no path of this machine (node, checkout, store) in .mcp.json, .claude/settings.json and .codex/', () => {
    const proj = path.join(tmp, 'proj-portable');
    fs.mkdirSync(proj);
    execFileSync('git', ['init', '-q', proj]);
    const store = path.join(tmp, 'store-portable');
    for (const host of ['claude-code', 'codex']) {
      const r = spawnSync(
        process.execPath,
        [mnemeBin(), '--store', store, 'setup', host, '--project', '--json'],
        {
          cwd: proj,
          encoding: 'utf8',
          env: { PATH: path.dirname(process.execPath), HOME: home, MNEME_DURABLE: '0' },
        },
      );
      assert.equal(r.status, 0, r.stderr);
      const notes = (JSON.parse(r.stdout) as { notes: string[] }).notes.join('\n');
      assert.match(notes, /project files name no store/);
      assert.match(notes, /not on yours: `npm install -g mneme`/);
    }
    const files = ['.mcp.json', '.claude/settings.json', '.codex/config.toml', '.codex/hooks.json'];
    for (const f of files) {
      const text = read(path.join(proj, f));
      assert.ok(!text.includes(process.execPath), `${f} names no node binary`);
      assert.ok(!text.includes(installRoot()), `${f} names no checkout`);
      assert.ok(!text.includes(store), `${f} names no store`);
      assert.ok(!text.includes(tmp), `${f} names no path under the test folder`);
    }
    const s = JSON.parse(read(path.join(proj, '.claude', 'settings.json')));
    assert.equal(s.hooks.SessionStart[0].hooks[0].command, 'mneme hook session-start');
    assert.equal(s.hooks.PreToolUse[0].matcher, 'Edit|Write|NotebookEdit');
    assert.deepEqual(JSON.parse(read(path.join(proj, '.mcp.json'))).mcpServers.mneme, {
      type: 'stdio',
      command: 'mneme',
      args: ['mcp'],
    });
    assert.match(
      read(path.join(proj, '.codex', 'config.toml')),
      /^\[mcp_servers\.mneme\]\ncommand = "mneme"\nargs = \["mcp"\]\n$/,
    );
    // The user scope, by contrast, names the store this machine chose (its files stay local).
    const u = spawnSync(process.execPath, [mnemeBin(), '--store', store, 'setup', 'claude-code'], {
      cwd: proj,
      encoding: 'utf8',
      env: {
        PATH: path.dirname(process.execPath),
        HOME: path.join(tmp, 'home-u'),
        MNEME_DURABLE: '0',
      },
    });
    assert.equal(u.status, 0, u.stderr);
    assert.ok(read(path.join(tmp, 'home-u', '.claude', 'settings.json')).includes(store));
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
