// Configuration: config.toml (or --config FILE / MNEME_CONFIG) validated strictly, the
// environment as an overlay, flags over both, `mneme config` showing where each value came
// from, and a setting from the file changing what the CLI, a hook and `mneme serve` do.
// The documented table and the schema list the same settings; only config/ reads MNEME_*.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import {
  CONFIG_FILE_SETTING,
  defaultText,
  isValid,
  SETTING_LIST,
} from '../src/surfaces/config/schema.js';
import { parseFast } from '../src/surfaces/cli/fast.js';
import { zodLeaf } from '../src/surfaces/config/settings.js';
import { BIN, cli, gitRepo, ROOT, tmpDir } from './helpers.js';
import { makeWorld } from './hook-helpers.js';
import { servingUrl } from './http-live.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function store(toml?: string): string {
  const home = tmpDir('mneme-config-');
  dirs.push(home);
  if (toml !== undefined) fs.writeFileSync(path.join(home, 'config.toml'), toml);
  return home;
}

type Shown = Record<
  string,
  { value: unknown; source: { kind: string; path?: string; name?: string } }
>;
const settingsOf = (r: ReturnType<typeof cli>): Shown => {
  assert.equal(r.code, 0, r.stderr);
  return (r.json() as { settings: Shown }).settings;
};

describe('config.toml is validated', () => {
  it('refuses an unknown key by name and file, and accepts the known key beside it once fixed', () => {
    const home = store('[store]\nlock_timeout_ms = 2500\n\n[inject]\nmax_byte = 5\n');
    const file = path.join(home, 'config.toml');
    const bad = cli(['recall', 'anything'], { home });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /unknown key "inject\.max_byte"/);
    assert.ok(bad.stderr.includes(file), 'the refusal names the file');
    assert.match(bad.stderr, /known in \[inject\]: max_bytes/);
    // An unknown table too.
    fs.writeFileSync(file, '[store]\nlock_timeout_ms = 2500\n\n[injekt]\nmax_bytes = 5\n');
    assert.match(cli(['config'], { home }).stderr, /unknown key "injekt"/);
    // Does: the same file without the unknown key is used.
    fs.writeFileSync(file, '[store]\nlock_timeout_ms = 2500\n');
    const s = settingsOf(cli(['config', '--json'], { home }));
    assert.equal(s['store.lock_timeout_ms']!.value, 2500);
    assert.deepEqual(s['store.lock_timeout_ms']!.source, { kind: 'file', path: file });
    assert.equal(cli(['recall', 'anything'], { home }).code, 0);
  });

  it('refuses a bad value in the file or the environment with the key, the value and what is expected', () => {
    const home = store('[store]\nlock_timeout_ms = "soon"\n');
    const r = cli(['recall', 'x'], { home });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /store\.lock_timeout_ms = "soon" is not valid: expected an integer from 1 to 2147483647 \(milliseconds\)/,
    );
    fs.writeFileSync(path.join(home, 'config.toml'), '[inject]\nmax_bytes = 4096\n');
    const env = cli(['recall', 'x'], { home, env: { MNEME_INJECT_MAX_BYTES: 'lots' } });
    assert.equal(env.code, 1);
    assert.match(
      env.stderr,
      /MNEME_INJECT_MAX_BYTES="lots" is not a valid inject\.max_bytes: expected an integer ≥ 0/,
    );
    const boolEnv = cli(['config'], { home, env: { MNEME_DURABLE: 'maybe' } });
    assert.match(boolEnv.stderr, /MNEME_DURABLE="maybe" is not a valid store\.durable/);
    // Does: good values in both places are taken.
    const s = settingsOf(cli(['config', '--json'], { home, env: { MNEME_DURABLE: 'off' } }));
    assert.equal(s['inject.max_bytes']!.value, 4096);
    assert.equal(s['store.durable']!.value, false);
  });

  it("keeps secrets out of files and the store's own config.toml from choosing the store", () => {
    const home = store('[store]\nhome = "/elsewhere"\n\n[embed]\napi_key = "sk-1"\n');
    const r = cli(['config'], { home });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /store\.home cannot be set in the store's own config\.toml/);
    assert.match(
      r.stderr,
      /embed\.api_key cannot be set in a config file: set MNEME_EMBED_API_KEY/,
    );
    assert.doesNotMatch(r.stderr, /sk-1/);
    // Does: a --config file may choose the store (relative to the file), and the store is used.
    const dir = tmpDir('mneme-config-file-');
    dirs.push(dir);
    const file = path.join(dir, 'mneme.toml');
    fs.writeFileSync(file, '[store]\nhome = "chosen"\n');
    const env = { MNEME_HOME: '' };
    const s = settingsOf(cli(['--config', file, 'config', '--json'], { home: dir, env }));
    assert.equal(s['store.home']!.value, path.join(dir, 'chosen'));
    assert.deepEqual(s['store.home']!.source, { kind: 'file', path: file });
    const w = cli(
      ['--config', file, 'remember', '--type', 'fact', '--abstract', 'Kept in chosen'],
      {
        home: dir,
        env,
      },
    );
    assert.equal(w.code, 0, w.stderr);
    assert.ok(fs.existsSync(path.join(dir, 'chosen', 'journal')), 'the write went to that store');
    // `recall` takes the fast dispatch, which honours --config the same way.
    assert.deepEqual(parseFast(['--config', file, 'recall', 'chosen'])?.config, file);
    const found = cli(['--config', file, 'recall', 'Kept', 'chosen', '--json'], { home: dir, env });
    assert.equal(found.code, 0, found.stderr);
    assert.match(found.stdout, /Kept in chosen/);
    // MNEME_CONFIG names the same file.
    const viaEnv = settingsOf(
      cli(['config', '--json'], { home: dir, env: { MNEME_HOME: '', MNEME_CONFIG: file } }),
    );
    assert.equal(viaEnv['store.home']!.value, path.join(dir, 'chosen'));
  });

  it('validates again after an edit (the checked copy of a valid file never masks a bad one)', () => {
    const home = store('[inject]\nmax_lines = 40\n');
    const first = settingsOf(cli(['config', '--json'], { home }));
    assert.equal(first['inject.max_lines']!.value, 40);
    assert.ok(fs.existsSync(path.join(home, '.state', 'config.checked.json')));
    assert.equal(settingsOf(cli(['config', '--json'], { home }))['inject.max_lines']!.value, 40);
    fs.writeFileSync(path.join(home, 'config.toml'), '[inject]\nmax_lines = -40\n');
    const bad = cli(['config'], { home });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /inject\.max_lines = -40 is not valid/);
    fs.writeFileSync(path.join(home, 'config.toml'), '[inject]\nmax_lines = 41\n');
    assert.equal(settingsOf(cli(['config', '--json'], { home }))['inject.max_lines']!.value, 41);
  });

  it('a --config file may name a Postgres store and its tenant (the environment still wins)', () => {
    const dir = store();
    const file = path.join(dir, 'team.toml');
    fs.writeFileSync(
      file,
      '[store]\ndatabase_url = "postgres://u:pw@db.example/m"\ntenant = "acme"\n',
    );
    const env = { MNEME_HOME: '', MNEME_DATABASE_URL: '', MNEME_TENANT: '' };
    const s = settingsOf(cli(['--config', file, 'config', '--json'], { home: dir, env }));
    assert.equal(s['store.database_url']!.value, 'postgres://u:***@db.example/m');
    assert.deepEqual(s['store.tenant']!.source, { kind: 'file', path: file });
    const over = settingsOf(
      cli(['--config', file, 'config', '--json'], {
        home: dir,
        env: { ...env, MNEME_TENANT: 'beta' },
      }),
    );
    assert.equal(over['store.tenant']!.value, 'beta');
    // The flag for another store wins over the file's database.
    const local = settingsOf(
      cli(['--config', file, '--store', dir, 'config', '--json'], { home: dir, env }),
    );
    assert.equal(local['store.home']!.value, dir);
    assert.deepEqual(local['store.home']!.source, { kind: 'flag', name: '--store' });
  });

  it('config --check validates a file without using it', () => {
    const dir = store();
    const good = path.join(dir, 'good.toml');
    fs.writeFileSync(good, '[hooks]\nprompt = true\nprompt_score_floor = 0.5\n');
    const ok = cli(['config', '--check', good, '--json'], { home: dir });
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(ok.json().keys, ['hooks.prompt', 'hooks.prompt_score_floor']);
    const broken = path.join(dir, 'broken.toml');
    fs.writeFileSync(broken, '[hooks\nprompt = true\n');
    const bad = cli(['config', '--check', broken], { home: dir });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /is not valid TOML/);
  });
});

describe('precedence: flag > environment > config file > default', () => {
  it('shows each setting with the layer it came from (mneme config --json and the table)', () => {
    const home = store('[embed]\nembedder = "hash"\n\n[store]\nlock_timeout_ms = 2000\n');
    const file = path.join(home, 'config.toml');
    const fileOnly = settingsOf(cli(['config', '--json'], { home, env: { MNEME_EMBEDDER: '' } }));
    assert.equal(fileOnly['embed.embedder']!.value, 'hash');
    assert.deepEqual(fileOnly['embed.embedder']!.source, { kind: 'file', path: file });
    assert.deepEqual(fileOnly['inject.max_lines'], {
      value: 80,
      source: { kind: 'default' },
      env: 'MNEME_INJECT_MAX_LINES',
    });
    const env = { MNEME_EMBEDDER: 'ollama', MNEME_LOCK_TIMEOUT_MS: '3000' };
    const envOver = settingsOf(cli(['config', '--json'], { home, env }));
    assert.equal(envOver['embed.embedder']!.value, 'ollama');
    assert.deepEqual(envOver['embed.embedder']!.source, { kind: 'env', name: 'MNEME_EMBEDDER' });
    assert.equal(envOver['store.lock_timeout_ms']!.value, 3000);
    const flagOver = settingsOf(cli(['--embedder', 'off', 'config', '--json'], { home, env }));
    assert.equal(flagOver['embed.embedder']!.value, 'off');
    assert.deepEqual(flagOver['embed.embedder']!.source, { kind: 'flag', name: '--embedder' });
    assert.equal(flagOver['store.lock_timeout_ms']!.value, 3000, 'the other settings stay');
    const table = cli(['--embedder', 'off', 'config'], { home, env });
    assert.equal(table.code, 0, table.stderr);
    assert.ok(table.stdout.includes(`config file: ${file}`));
    assert.match(table.stdout, /embed\.embedder\s+off\s+flag --embedder/);
    assert.match(table.stdout, /store\.lock_timeout_ms\s+3000\s+env MNEME_LOCK_TIMEOUT_MS/);
    assert.match(table.stdout, /inject\.max_lines\s+80\s+default/);
  });

  it('hides secrets in what it shows', () => {
    const home = store();
    const r = cli(['config', '--json'], {
      home,
      env: {
        MNEME_OPENAI_API_KEY: 'sk-secret',
        MNEME_DATABASE_URL: 'postgres://u:pw@db.example/x',
        MNEME_TENANT: 't',
      },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /sk-secret|:pw@/);
    assert.equal(r.json().settings['openai.api_key'].value, '(hidden)');
    assert.equal(r.json().settings['store.database_url'].value, 'postgres://u:***@db.example/x');
  });
});

/** A lock another process holds (as the store writes it: pid and host). */
function holdLock(home: string): () => void {
  fs.mkdirSync(path.join(home, '.state'), { recursive: true });
  const file = path.join(home, '.state', 'lock');
  fs.writeFileSync(file, `${process.pid}\n${os.hostname()}\n`);
  return () => fs.rmSync(file, { force: true });
}

describe('a setting from config.toml changes behaviour', () => {
  it('CLI: store.lock_timeout_ms bounds the wait for a held lock (and the environment wins)', () => {
    const home = store('[store]\nlock_timeout_ms = 300\n');
    const write = (abstract: string, env: Record<string, string> = {}) =>
      cli(['remember', '--type', 'fact', '--abstract', abstract], { home, env });
    assert.equal(write('First write opens the store').code, 0);
    const release = holdLock(home);
    const held = write('Blocked by the held lock');
    assert.equal(held.code, 2);
    assert.match(held.stderr, /locked by process \d+ and did not free up within 300 ms/);
    const envWins = write('Blocked again', { MNEME_LOCK_TIMEOUT_MS: '450' });
    assert.match(envWins.stderr, /did not free up within 450 ms/);
    release();
    assert.equal(write('Written once the lock is free').code, 0);
  });

  it('hooks: inject.max_bytes bounds the session-start block', () => {
    const w = makeWorld();
    try {
      const repo = w.project('app', 'git@github.com:acme/budget.git');
      for (const n of [1, 2, 3, 4, 5, 6])
        w.json(
          [
            'remember',
            '--type',
            'constraint',
            '--abstract',
            `Rule ${n}: deploys need the ${n} checklist signed off first`,
          ],
          repo,
        );
      const payload = w.payload('session-start.json', { SESSION: 's1', TRANSCRIPT: '', CWD: repo });
      const bytes = () => {
        const r = w.hook('session-start', payload, repo);
        assert.equal(r.code, 0, r.stderr);
        const last = w.hookLog().at(-1)!;
        return { ids: (last.detail as { ids?: number })?.ids ?? 0, out: r.stdout };
      };
      const full = bytes();
      assert.equal(full.ids, 6, 'the default budget holds all six');
      fs.writeFileSync(path.join(w.home, 'config.toml'), '[inject]\nmax_bytes = 700\n');
      const bounded = bytes();
      assert.ok(
        bounded.ids > 0 && bounded.ids < 6,
        `a 700-byte block holds fewer (${bounded.ids})`,
      );
      // A refused setting: the hook says so in its log and answers nothing (exit 0).
      fs.writeFileSync(path.join(w.home, 'config.toml'), '[inject]\nmax_bytes = "big"\n');
      const refused = w.hook('session-start', payload, repo);
      assert.equal(refused.code, 0);
      assert.equal(refused.stdout, '');
      const last = w.hookLog().at(-1)!;
      assert.equal(last.outcome, 'error');
      assert.match(String(last.error), /inject\.max_bytes = "big" is not valid/);
    } finally {
      w.cleanup();
    }
  });

  it('a hook reads a checked config.toml without loading the TOML parser or zod; an edit loads them', () => {
    const home = store('[inject]\nmax_bytes = 4000\n');
    const trace = path.join(home, 'imports.txt');
    const imported = () => {
      fs.rmSync(trace, { force: true });
      const r = spawnSync(
        process.execPath,
        [
          '--import',
          path.join(ROOT, 'test', 'fixtures', 'trace-imports.mjs'),
          BIN,
          'hook',
          'session-start',
        ],
        {
          cwd: home,
          input: '{}',
          env: {
            ...process.env,
            MNEME_HOME: home,
            MNEME_DURABLE: '0',
            MNEME_SLEEP_AUTO: '0',
            MNEME_TRACE_IMPORTS: trace,
          },
          encoding: 'utf8',
        },
      );
      assert.equal(r.status, 0, r.stderr);
      return fs.readFileSync(trace, 'utf8');
    };
    const first = imported(); // validates and keeps the checked copy
    assert.ok(first.includes('/node_modules/smol-toml/') && first.includes('/node_modules/zod/'));
    const again = imported();
    assert.ok(again.includes('/bin/mneme.js'), 'the trace sees imports');
    assert.ok(!again.includes('/node_modules/smol-toml/') && !again.includes('/node_modules/zod/'));
    fs.writeFileSync(path.join(home, 'config.toml'), '[inject]\nmax_bytes = 4001\n');
    assert.ok(imported().includes('/node_modules/zod/'), 'an edited file is validated again');
  });

  it('mneme serve: store.lock_timeout_ms from config.toml bounds an API write', async () => {
    const home = store('[store]\nlock_timeout_ms = 350\n');
    const repo = gitRepo('git@github.com:acme/served.git');
    dirs.push(repo);
    const env: NodeJS.ProcessEnv = { ...process.env, MNEME_DURABLE: '0' };
    delete env.MNEME_LOCK_TIMEOUT_MS;
    const child = spawn(process.execPath, [BIN, '--store', home, 'serve', '--port', '0'], {
      cwd: repo,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await servingUrl(child);
      const post = (abstract: string) =>
        fetch(`${url}/api/memories`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'fact', abstract }),
        });
      assert.equal((await post('Served write before the lock')).status, 201);
      const release = holdLock(home);
      const held = await post('Served write under a held lock');
      const body = (await held.json()) as { error: { code: string; message: string } };
      release();
      assert.equal(held.status, 503);
      assert.equal(body.error.code, 'locked');
      assert.match(body.error.message, /did not free up within 350 ms/);
      assert.equal((await post('Served write after the lock')).status, 201);
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('one list of settings', () => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
  const cells = (line: string) =>
    line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim().replace(/^`|`$/g, ''));

  it('docs/configuration.md has one row per setting: key, variable, flag and default as the schema', () => {
    const rows = doc
      .split('\n')
      .filter((l) => /^\| `[a-z_]+\.[a-z_]+` +\|/.test(l))
      .map(cells);
    const documented = rows.map(([key, env, flag, def]) => ({ key, env, flag, def }));
    const schema = SETTING_LIST.map((d) => ({
      key: d.key,
      env: d.env,
      flag: d.flag ?? '—',
      def: defaultText(d),
    }));
    assert.deepEqual(documented, schema);
    assert.ok(
      doc.includes(`\`${CONFIG_FILE_SETTING.env}\``) && doc.includes(CONFIG_FILE_SETTING.flag),
    );
  });

  it('every MNEME_ variable the docs name is a setting or a listed non-setting; no other page has a table of them', () => {
    const settings = new Set([...SETTING_LIST.map((d) => d.env), CONFIG_FILE_SETTING.env]);
    const notSettings =
      /^MNEME_(AGENT|DISTILLER_SESSION|HOOK_PROBE|FSCK_FAULT_AFTER|SCREENSHOTS|TEST_[A-Z_]+)$/;
    const pages = [
      'README.md',
      ...fs
        .readdirSync(path.join(ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const unknown: string[] = [];
    const tables: string[] = [];
    for (const page of pages) {
      const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
      for (const m of text.matchAll(/\bMNEME_[A-Z_]*[A-Z]\b/g))
        if (!settings.has(m[0]) && !notSettings.test(m[0])) unknown.push(`${page}: ${m[0]}`);
      if (page !== 'docs/configuration.md')
        for (const line of text.split('\n'))
          if (/^\|.*`MNEME_[A-Z_]+/.test(line)) tables.push(`${page}: ${line.slice(0, 80)}`);
    }
    assert.deepEqual(unknown, []);
    assert.deepEqual(tables, []);
    // The non-settings are named in the reference page too.
    for (const v of [
      'MNEME_AGENT',
      'MNEME_DISTILLER_SESSION',
      'MNEME_FSCK_FAULT_AFTER',
      'MNEME_SCREENSHOTS',
      'MNEME_TEST_',
    ])
      assert.ok(doc.includes(v), `docs/configuration.md names ${v}`);
  });

  it("the file's zod schema and the environment's check agree on every setting's values", () => {
    const samples: unknown[] = [
      0,
      1,
      -1,
      1.5,
      8,
      4096,
      5000,
      -2,
      2,
      0.5,
      '',
      'x',
      'hash',
      'claude',
      true,
      false,
      null,
    ];
    for (const d of SETTING_LIST)
      for (const v of samples)
        assert.equal(
          zodLeaf(d.kind.spec).safeParse(v).success,
          isValid(d.kind.spec, v),
          `${d.key} on ${JSON.stringify(v)}`,
        );
  });

  it('only the settings module reads MNEME_ variables (agent detection and fault hooks aside)', () => {
    const allowed: Record<string, RegExp> = {
      'surfaces/agent-env.ts': /MNEME_AGENT/, // agent detection, not a setting
      'surfaces/cli/maintenance.ts': /MNEME_FSCK_FAULT_AFTER/, // a fault hook (tooling)
    };
    const src = path.join(ROOT, 'src');
    const walk = (dir: string): string[] =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) =>
          e.isDirectory()
            ? walk(path.join(dir, e.name))
            : e.name.endsWith('.ts')
              ? [path.join(dir, e.name)]
              : [],
        );
    const reads: string[] = [];
    let scanned = 0;
    for (const f of walk(src)) {
      const rel = path.relative(src, f).split(path.sep).join('/');
      if (rel.startsWith('surfaces/config/') || rel.startsWith('bench/')) continue;
      scanned++;
      fs.readFileSync(f, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const m = /\benv\??\.(MNEME_[A-Z_]+)|\benv\[['"](MNEME_[A-Z_]+)/.exec(line);
          if (m && !allowed[rel]?.test(m[0])) reads.push(`${rel}:${i + 1}: ${line.trim()}`);
        });
    }
    assert.ok(scanned > 100, 'the rule looked at the source tree');
    assert.deepEqual(reads, []);
    // And the rule sees a read where there is one (it is not vacuous).
    assert.match('const v = io.env.MNEME_INJECT_MAX_BYTES;', /\benv\??\.(MNEME_[A-Z_]+)/);
  });
});
