// Holes found by attacking what issue 15 merged (configuration, one schema per payload, the
// session archive on Postgres, the complete store port, the closed engine) through the real
// entry points. Each case pairs the "must not" with the "does" in the same fixture.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { BIN, cli, gitRepo, tmpDir } from './helpers.js';
import { pgSkipReason, throwawayDb } from './pg-fixtures.js';
import { servingUrl } from './http-live.js';

const pgSkip = await pgSkipReason();
const dirs: string[] = [];
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
const home = () => {
  const d = tmpDir('mneme-audit15-');
  dirs.push(d);
  return d;
};

describe('a database password given as a URL parameter is never shown', () => {
  it('mneme config masks ?password= and ?sslpassword= and shows the rest of the URL', () => {
    const r = cli(['config', '--json'], {
      home: home(),
      env: {
        MNEME_DATABASE_URL:
          'postgres://u@db.example/x?password=s3cret&sslpassword=k3y&sslmode=require',
        MNEME_TENANT: 't',
      },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /s3cret|k3y/);
    const shown = r.json().settings['store.database_url'].value as string;
    assert.match(shown, /^postgres:\/\/u@db\.example\/x\?/);
    assert.match(shown, /sslmode=require/);
  });

  it('mneme config masks a password or key in an endpoint URL and shows the endpoint', () => {
    const r = cli(['config', '--json'], {
      home: home(),
      env: {
        MNEME_EMBED_URL: 'https://me:t0ken@embed.example/v1?api-key=k3y',
        MNEME_OPENAI_BASE_URL: 'https://llm.example/v1?sig=s1g&deployment=d1',
      },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /t0ken|k3y|s1g/);
    const s = r.json().settings;
    assert.match(s['embed.url'].value, /^https:\/\/me:\*\*\*@embed\.example\/v1\?/);
    assert.match(s['openai.base_url'].value, /deployment=d1/);
  });

  it(
    'status and a missing tenant over the real --db store mask it too',
    { skip: pgSkip ?? false },
    async () => {
      const db = await throwawayDb(['acme']);
      try {
        const url = `${db.url}${db.url.includes('?') ? '&' : '?'}password=s3cret`;
        const h = home();
        const status = cli(['--db', url, '--tenant', 'acme', 'status'], { home: h });
        assert.equal(status.code, 0, status.stderr);
        assert.match(status.stdout, /tenant acme/, 'the URL with the parameter connects');
        assert.doesNotMatch(status.stdout, /s3cret/);
        const missing = cli(['--db', url, '--tenant', 'nope', 'status'], { home: h });
        assert.notEqual(missing.code, 0);
        assert.match(missing.stderr, /no tenant "nope"/);
        assert.doesNotMatch(missing.stderr, /s3cret/);
      } finally {
        await db.drop();
      }
    },
  );
});

describe('store.lock_timeout_ms holds on Postgres as on files', () => {
  it(
    'a --db write waits the configured time for a held tenant lock, then writes once it is free',
    { skip: pgSkip ?? false },
    async () => {
      const db = await throwawayDb(['acme']);
      const holder = new pg.Client({ connectionString: db.url });
      await holder.connect();
      try {
        // The tenant's write lock, held as another writer would hold it.
        const key = createHash('sha256').update('acme').digest().readInt32BE(0);
        await holder.query('SELECT pg_advisory_lock($1, $2)', [0x6d6e6d77, key]);
        const h = home();
        const write = (abstract: string) =>
          cli(
            [
              '--db',
              db.url,
              '--tenant',
              'acme',
              'remember',
              '--type',
              'fact',
              '--abstract',
              abstract,
            ],
            {
              home: h,
              env: { MNEME_LOCK_TIMEOUT_MS: '400' },
            },
          );
        const started = Date.now();
        const held = write('Blocked by the held tenant lock');
        const waited = Date.now() - started;
        assert.notEqual(held.code, 0, held.stdout);
        assert.match(held.stderr, /timed out waiting for the tenant write lock/);
        assert.ok(waited < 8000, `waited ${waited} ms for a 400 ms lock timeout`);
        await holder.query('SELECT pg_advisory_unlock($1, $2)', [0x6d6e6d77, key]);
        const free = write('Written once the tenant lock is free');
        assert.equal(free.code, 0, free.stderr);
      } finally {
        await holder.end();
        await db.drop();
      }
    },
  );
});

describe('store.lock_timeout_ms holds on mneme serve --db', () => {
  it(
    'an API write waits the configured time for a held tenant lock, then writes once it is free',
    { skip: pgSkip ?? false },
    async () => {
      const db = await throwawayDb(['acme']);
      const h = home();
      const token = cli(['--db', db.url, '--tenant', 'acme', 'token', 'create'], { home: h });
      assert.equal(token.code, 0, token.stderr);
      const server = spawn(process.execPath, [BIN, '--db', db.url, 'serve', '--port', '0'], {
        env: { ...process.env, MNEME_HOME: h, MNEME_LOCK_TIMEOUT_MS: '400' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const holder = new pg.Client({ connectionString: db.url });
      try {
        const url = await servingUrl(server);
        await holder.connect();
        const key = createHash('sha256').update('acme').digest().readInt32BE(0);
        await holder.query('SELECT pg_advisory_lock($1, $2)', [0x6d6e6d77, key]);
        const write = (abstract: string) =>
          fetch(`${url}/api/memories`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${token.stdout.trim()}`,
            },
            body: JSON.stringify({ type: 'fact', abstract }),
          });
        const started = Date.now();
        const held = await write('Blocked by the held tenant lock');
        const waited = Date.now() - started;
        assert.notEqual(held.status, 201, await held.text());
        assert.ok(waited < 8000, `waited ${waited} ms for a 400 ms lock timeout`);
        await holder.query('SELECT pg_advisory_unlock($1, $2)', [0x6d6e6d77, key]);
        const free = await write('Written once the tenant lock is free');
        assert.equal(free.status, 201, await free.text());
      } finally {
        server.kill();
        await holder.end().catch(() => {});
        await db.drop();
      }
    },
  );
});

describe('a config file that is not valid TOML is refused without its text', () => {
  it('names the line and column, never the value on it (CLI, a hook); the fixed file is used', () => {
    const h = home();
    const file = path.join(h, 'team.toml');
    fs.writeFileSync(
      file,
      '[store]\ndatabase_url = "postgres://u:hunter2@db.example/x\ntenant = "t"\n',
    );
    for (const args of [['config'], ['recall', 'anything']]) {
      const r = cli(['--config', file, ...args], { home: h });
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stderr, /is not valid TOML at line 2, column \d+: control characters/);
      assert.doesNotMatch(r.stderr, /hunter2/);
    }
    const hook = cli(['--config', file, 'hook', 'session-start'], {
      home: h,
      input: JSON.stringify({ session_id: 's1', cwd: h }),
    });
    assert.equal(hook.code, 0);
    assert.match(hook.stderr, /not valid TOML at line 2/);
    assert.doesNotMatch(hook.stderr, /hunter2/);
    // Does: the same file, fixed, is read (its tenant shows, its password does not).
    fs.writeFileSync(
      file,
      '[store]\ndatabase_url = "postgres://u:hunter2@db.example/x"\ntenant = "t"\n',
    );
    const ok = cli(['--config', file, 'config', '--json'], { home: h });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.json().settings['store.tenant'].value, 't');
    assert.doesNotMatch(ok.stdout, /hunter2/);
  });

  it("the store's own config.toml: the hook log gets the line number, not the line", () => {
    const h = home();
    fs.writeFileSync(
      path.join(h, 'config.toml'),
      '[embed]\nurl = "https://embed.example/?key=sk-l3aked\n',
    );
    const hook = cli(['hook', 'session-start'], {
      home: h,
      input: JSON.stringify({ session_id: 's1', cwd: h }),
    });
    assert.equal(hook.code, 0);
    const log = fs.readFileSync(path.join(h, '.state', 'hooks.log'), 'utf8');
    assert.match(log, /config\.toml is not valid TOML at line 2/);
    assert.doesNotMatch(log, /sk-l3aked/);
  });
});

describe("mneme config --check agrees with loading the store's own config.toml", () => {
  it('refuses a store key in the store file (as loading does); accepts it in another file', () => {
    const h = home();
    const own = path.join(h, 'config.toml');
    fs.writeFileSync(own, '[store]\ntenant = "acme"\n');
    const load = cli(['recall', 'anything'], { home: h });
    assert.equal(load.code, 1);
    assert.match(load.stderr, /store\.tenant cannot be set in the store's own config\.toml/);
    // The hint's command, run as given, gives the same refusal.
    const hinted = /`mneme (config --check [^`]+)`/.exec(load.stderr)![1]!.split(' ');
    const check = cli(hinted, { home: h });
    assert.equal(check.code, 1, check.stdout);
    assert.match(check.stderr, /store\.tenant cannot be set in the store's own config\.toml/);
    assert.equal(cli(['config', '--check', own], { home: h }).code, 1);
    // Does: the same content in a file given by --config may choose the tenant.
    const team = path.join(h, 'team.toml');
    fs.writeFileSync(team, '[store]\ntenant = "acme"\n');
    const ok = cli(['config', '--check', team], { home: h });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /ok \(1 settings: store\.tenant\)/);
  });
});

describe('a duration past what a timer holds is refused, not turned into "at once"', () => {
  it(
    'hooks.timeout_ms of 3e9 ms is refused with its range (env, file, --db hook); 30 s is used',
    { skip: pgSkip ?? false },
    async () => {
      const db = await throwawayDb(['acme']);
      try {
        const h = home();
        const flags = ['--db', db.url, '--tenant', 'acme'];
        const w = cli(
          [...flags, 'remember', '--type', 'fact', '--abstract', 'Deploys happen on Tuesdays'],
          { home: h },
        );
        assert.equal(w.code, 0, w.stderr);
        const hook = (timeout: string) =>
          cli([...flags, 'hook', 'session-start'], {
            home: h,
            env: { MNEME_HOOK_TIMEOUT_MS: timeout, XDG_STATE_HOME: h },
            input: JSON.stringify({ session_id: 's1', cwd: h }),
          });
        const long = hook('3000000000');
        assert.equal(long.code, 0);
        assert.doesNotMatch(long.stdout, /Tuesdays/);
        const logFile = fs
          .readdirSync(path.join(h, 'mneme'))
          .map((d) => path.join(h, 'mneme', d, '.state', 'hooks.log'))[0]!;
        const last = () => JSON.parse(fs.readFileSync(logFile, 'utf8').trim().split('\n').at(-1)!);
        assert.equal(last().outcome, 'error', JSON.stringify(last()));
        assert.match(
          last().error,
          /MNEME_HOOK_TIMEOUT_MS="3000000000" is not a valid hooks\.timeout_ms: expected an integer from 1 to 2147483647/,
        );
        fs.writeFileSync(path.join(h, 'config.toml'), '[distill]\ntimeout_ms = 99999999999\n');
        const bad = cli(['config'], { home: h });
        assert.equal(bad.code, 1);
        assert.match(
          bad.stderr,
          /distill\.timeout_ms = 99999999999 is not valid: expected an integer from 1 to 2147483647/,
        );
        fs.rmSync(path.join(h, 'config.toml'));
        // Does: a long but representable timeout is used, and the hook injects.
        const ok = hook('30000');
        assert.equal(ok.code, 0);
        assert.match(ok.stdout, /Tuesdays/);
      } finally {
        await db.drop();
      }
    },
  );
});

describe('mneme setup points the hooks at the store the MCP server uses, and writes no password', () => {
  // User scope: project-scope files name no store at all (test/setup.test.ts), so this is where
  // a chosen store is written.
  /** The installed SessionStart command, run as the host runs it: a shell, no store variables. */
  const runInstalled = (repo: string, h: string) => {
    const settings = JSON.parse(fs.readFileSync(path.join(h, '.claude', 'settings.json'), 'utf8'));
    const command = settings.hooks.SessionStart[0].hooks[0].command as string;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: h,
      MNEME_DURABLE: '0',
    };
    const r = spawnSync('sh', ['-c', command], {
      cwd: repo,
      env,
      input: JSON.stringify({ session_id: 's1', cwd: repo, source: 'startup' }),
      encoding: 'utf8',
    });
    return { command, stdout: r.stdout };
  };
  const noStoreEnv = (h: string) => ({
    MNEME_HOME: '',
    HOME: h,
    XDG_STATE_HOME: path.join(h, 'state'),
  });

  it('--store DIR: the installed hook injects from DIR, not ~/.mneme', () => {
    const h = home();
    const repo = gitRepo('git@github.com:acme/setup-files.git');
    dirs.push(repo);
    const store = path.join(h, 'team-store');
    const w = cli(
      ['--store', store, 'remember', '--type', 'fact', '--abstract', 'Releases are cut on Mondays'],
      { home: h, cwd: repo, env: noStoreEnv(h) },
    );
    assert.equal(w.code, 0, w.stderr);
    const setup = cli(['--store', store, 'setup', 'claude-code', '--user'], {
      home: h,
      cwd: repo,
      env: noStoreEnv(h),
    });
    assert.equal(setup.code, 0, setup.stderr);
    const mcp = JSON.parse(fs.readFileSync(path.join(h, '.claude.json'), 'utf8'));
    assert.equal(mcp.mcpServers.mneme.env.MNEME_HOME, store);
    const hook = runInstalled(repo, h);
    assert.match(hook.stdout, /Releases are cut on Mondays/, hook.command);
    assert.equal(fs.existsSync(path.join(h, '.mneme')), false, 'the hook opened ~/.mneme');
  });

  it(
    '--db: a URL with a password is refused; without one (or from --config) the hook reaches the tenant',
    { skip: pgSkip ?? false },
    async () => {
      const db = await throwawayDb(['acme']);
      try {
        const h = home();
        const repo = gitRepo('git@github.com:acme/setup-pg.git');
        dirs.push(repo);
        const withPw = `${db.url}${db.url.includes('?') ? '&' : '?'}password=hunter2`;
        const w = cli(
          [
            '--db',
            db.url,
            '--tenant',
            'acme',
            'remember',
            '--type',
            'fact',
            '--abstract',
            'The tenant deploys on Wednesdays',
          ],
          { home: h, cwd: repo, env: noStoreEnv(h) },
        );
        assert.equal(w.code, 0, w.stderr);
        const refused = cli(
          ['--db', withPw, '--tenant', 'acme', 'setup', 'claude-code', '--user'],
          { home: h, cwd: repo, env: noStoreEnv(h) },
        );
        assert.notEqual(refused.code, 0, refused.stdout);
        assert.match(refused.stderr, /would write the database password/);
        assert.match(refused.stderr, /--config FILE/);
        assert.equal(fs.existsSync(path.join(h, '.claude.json')), false);
        // Does: a URL without a password.
        const ok = cli(['--db', db.url, '--tenant', 'acme', 'setup', 'claude-code', '--user'], {
          home: h,
          cwd: repo,
          env: noStoreEnv(h),
        });
        assert.equal(ok.code, 0, ok.stderr);
        assert.equal(
          JSON.parse(fs.readFileSync(path.join(h, '.claude.json'), 'utf8')).mcpServers.mneme.env
            .MNEME_TENANT,
          'acme',
        );
        const hook = runInstalled(repo, h);
        assert.match(hook.stdout, /The tenant deploys on Wednesdays/, hook.command);
        // Does: the password in a --config file, which the host files only name.
        const file = path.join(h, 'team.toml');
        fs.writeFileSync(file, `[store]\ndatabase_url = "${withPw}"\ntenant = "acme"\n`);
        const viaFile = cli(['--config', file, 'setup', 'claude-code', '--user'], {
          home: h,
          cwd: repo,
          env: noStoreEnv(h),
        });
        assert.equal(viaFile.code, 0, viaFile.stderr);
        for (const f of ['.claude.json', path.join('.claude', 'settings.json')])
          assert.doesNotMatch(fs.readFileSync(path.join(h, f), 'utf8'), /hunter2/, f);
        const viaHook = runInstalled(repo, h);
        assert.match(viaHook.command, /--config /);
        assert.match(viaHook.stdout, /The tenant deploys on Wednesdays/, viaHook.command);
        assert.equal(fs.existsSync(path.join(h, '.mneme')), false, 'a hook opened ~/.mneme');
        // Uninstalling writes no URL, so the password is no reason to refuse it.
        const off = cli(
          ['--db', withPw, '--tenant', 'acme', 'setup', 'claude-code', '--user', '--uninstall'],
          { home: h, cwd: repo, env: noStoreEnv(h) },
        );
        assert.equal(off.code, 0, off.stderr);
        assert.equal(fs.existsSync(path.join(h, '.claude.json')), false);
      } finally {
        await db.drop();
      }
    },
  );
});

describe('a config file is read with a cap, never a FIFO or a device', () => {
  it('a FIFO as config.toml or --config /dev/zero is refused at once; a regular file is read', () => {
    const h = home();
    const own = path.join(h, 'config.toml');
    assert.equal(spawnSync('mkfifo', [own]).status, 0);
    const run = (args: string[], input = '') =>
      spawnSync(process.execPath, [BIN, ...args], {
        env: { ...process.env, MNEME_HOME: h, MNEME_DURABLE: '0' },
        input,
        encoding: 'utf8',
        timeout: 20_000,
      });
    const hook = run(['hook', 'session-start'], JSON.stringify({ session_id: 's1', cwd: h }));
    assert.equal(hook.error, undefined, 'the hook hung on the FIFO');
    assert.equal(hook.status, 0);
    const log = fs.readFileSync(path.join(h, '.state', 'hooks.log'), 'utf8');
    assert.match(log, /config\.toml is not a regular file \(a FIFO\)/);
    const recall = run(['recall', 'anything']);
    assert.equal(recall.error, undefined, 'recall hung on the FIFO');
    assert.equal(recall.status, 1);
    assert.match(recall.stderr, /not a regular file \(a FIFO\)/);
    const zero = run(['--config', '/dev/zero', 'recall', 'anything']);
    assert.equal(zero.error, undefined, 'reading /dev/zero did not stop');
    assert.equal(zero.status, 1);
    assert.match(zero.stderr, /the config file \/dev\/zero is not a regular file \(a device\)/);
    // Does: the same path as a regular file is read.
    fs.rmSync(own);
    fs.writeFileSync(own, '[inject]\nmax_lines = 7\n');
    const ok = run(['config', '--json']);
    assert.equal(ok.status, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).settings['inject.max_lines'].value, 7);
    // The hook's checked copy of config.toml is read the same way: a FIFO there is passed over.
    const checked = path.join(h, '.state', 'config.checked.json');
    fs.rmSync(checked, { force: true });
    assert.equal(spawnSync('mkfifo', [checked]).status, 0);
    const again = run(['hook', 'session-start'], JSON.stringify({ session_id: 's2', cwd: h }));
    assert.equal(again.error, undefined, 'the hook hung on the FIFO');
    assert.ok(fs.statSync(checked).isFile(), 'the checked copy was written again');
  });
});
