// Holes an adversary found (issue 14 item 7), each driven through the real CLI or the MCP server
// over stdio as a child process, each "must not" paired with its "does" in the same fixture.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { FileStore } from '../src/store/files/file-store.js';
import {
  AGENT,
  BIN,
  HUMAN,
  PROJECT_A,
  engineFor,
  gitRepo,
  terminal,
  testClock,
  tmpDir,
} from './helpers.js';
import { httpFixture, jsonPost } from './http-fixture.js';

/** The environment of a person at a terminal: no variable marks an agent session. */
function humanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(CLAUDE_?CODE|CODEX_|MNEME_)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, MNEME_DURABLE: '0', ...extra };
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Set when the command had to be killed at the timeout (a hang). */
  timedOut: boolean;
  json: () => any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Runs the CLI with a hard timeout, so a hang or an unbounded read fails instead of waiting. */
function mneme(
  args: string[],
  o: {
    home: string;
    cwd: string;
    env?: Record<string, string>;
    input?: string;
    stdin?: number;
    timeoutMs?: number;
  },
): Ran {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: o.cwd,
    env: humanEnv({ MNEME_HOME: o.home, ...o.env }),
    encoding: 'utf8',
    timeout: o.timeoutMs ?? 30_000,
    killSignal: 'SIGKILL',
    maxBuffer: 16 * 1024 * 1024,
    ...(o.stdin !== undefined
      ? { stdio: [o.stdin, 'pipe', 'pipe'] as const }
      : { input: o.input ?? '' }),
  });
  return {
    code: r.status,
    stdout: r.stdout ?? '',
    stderr: r.stderr ?? '',
    timedOut: r.error !== undefined && /ETIMEDOUT/.test(String(r.error)),
    json: () => JSON.parse(r.stdout),
  };
}

/** The MCP server over stdio (`mneme mcp`, an agent surface), driven by the SDK's client. */
async function mcpClient(home: string, cwd: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    cwd,
    env: humanEnv({ MNEME_HOME: home }),
    stderr: 'pipe',
  });
  const client = new Client({ name: 'adversary', version: '1.0.0' });
  await client.connect(transport);
  return {
    async call(name: string, args: Record<string, unknown>) {
      const r = await client.callTool({ name, arguments: args });
      const text = (r.content as { type: string; text: string }[])[0]?.text ?? '';
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool results are JSON
      return { isError: r.isError === true, text, body: JSON.parse(text) as any };
    },
    close: () => client.close(),
  };
}

describe('input files are read with a cap, and never a FIFO or a device', () => {
  let home: string;
  let repo: string;
  let files: string;
  const run = (args: string[], o: { input?: string; stdin?: number } = {}) =>
    mneme(['--json', ...args], { home, cwd: repo, ...o });
  const remember = (
    abstract: string,
    bodyArgs: string[],
    o: { input?: string; stdin?: number } = {},
  ) => run(['remember', '--type', 'fact', '--abstract', abstract, ...bodyArgs], o);
  const recalled = (word: string) =>
    (run(['recall', word]).json() as { results: { abstract: string }[] }).results.length;

  before(() => {
    home = tmpDir('mneme-caps-');
    repo = gitRepo('https://github.com/acme/caps.git');
    files = tmpDir('mneme-caps-files-');
  });
  after(() => {
    for (const d of [home, repo, files]) fs.rmSync(d, { recursive: true, force: true });
  });

  it('--body-file /dev/zero is refused at once with the 64 KiB limit; a file of 64 KiB is read', () => {
    const zero = remember('zero body kiwano', ['--body-file', '/dev/zero'], {});
    assert.equal(zero.timedOut, false, 'reading /dev/zero did not stop');
    assert.equal(zero.code, 1, zero.stderr);
    assert.match(zero.stderr, /--body-file \/dev\/zero is not a regular file/);
    assert.equal(recalled('kiwano'), 0);

    const big = path.join(files, 'big.md');
    fs.writeFileSync(big, 'x'.repeat(64 * 1024 + 1));
    const over = remember('oversized body rambutan', ['--body-file', big]);
    assert.equal(over.code, 1, over.stderr);
    assert.match(over.stderr, /is 65537 bytes; the limit is 64 KiB/);
    assert.equal(recalled('rambutan'), 0);

    const exact = path.join(files, 'exact.md');
    fs.writeFileSync(exact, 'y'.repeat(64 * 1024));
    const ok = remember('exactly the limit salak', ['--body-file', exact]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(recalled('salak'), 1);
  });

  it('a FIFO given as --body-file is refused without waiting for a writer', () => {
    const fifo = path.join(files, 'body.fifo');
    execFileSync('mkfifo', [fifo]);
    const r = remember('fifo body langsat', ['--body-file', fifo]);
    assert.equal(r.timedOut, false, 'the FIFO hung the command');
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /is not a regular file \(a FIFO\)/);
    assert.equal(recalled('langsat'), 0);
  });

  it('--body-file - reads stdin with the same cap: a pipe works, an endless stdin is refused', () => {
    const piped = remember('piped body mangosteen', ['--body-file', '-'], {
      input: 'Body from a pipe.\n',
    });
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(recalled('mangosteen'), 1);

    const fd = fs.openSync('/dev/zero', 'r');
    try {
      const endless = remember('endless stdin durian', ['--body-file', '-'], { stdin: fd });
      assert.equal(endless.timedOut, false, 'reading an endless stdin did not stop');
      assert.equal(endless.code, 1, endless.stderr);
      assert.match(endless.stderr, /--body-file from stdin goes past the limit of 64 KiB/);
    } finally {
      fs.closeSync(fd);
    }
    assert.equal(recalled('durian'), 0);
  });

  it('import refuses /dev/zero, a FIFO and a bundle over 256 MiB; a real bundle imports', () => {
    const exported = run(['export']);
    assert.equal(exported.code, 0, exported.stderr);
    const bundle = path.join(files, 'bundle.json');
    fs.writeFileSync(bundle, exported.stdout);

    const zero = run(['import', '/dev/zero']);
    assert.equal(zero.timedOut, false);
    assert.equal(zero.code, 1, zero.stderr);
    assert.match(zero.stderr, /the bundle \/dev\/zero is not a regular file \(a device\)/);

    const fifo = path.join(files, 'bundle.fifo');
    execFileSync('mkfifo', [fifo]);
    const f = run(['import', fifo]);
    assert.equal(f.timedOut, false, 'the FIFO hung import');
    assert.equal(f.code, 1, f.stderr);

    const huge = path.join(files, 'huge.json');
    fs.writeFileSync(huge, '');
    fs.truncateSync(huge, 256 * 1024 * 1024 + 1); // sparse: nothing is written
    const h = run(['import', huge]);
    assert.equal(h.code, 1, h.stderr);
    assert.match(h.stderr, /is 268435457 bytes; the limit is 256 MiB/);

    // The twin: the same command reads a real bundle (into a second store) and imports it.
    const other = tmpDir('mneme-caps-other-');
    try {
      const imported = mneme(['--json', 'import', bundle], { home: other, cwd: repo });
      assert.equal(imported.code, 0, imported.stderr);
      assert.equal(imported.json().imported, 2); // salak and mangosteen above
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it('serve refuses a FIFO as --token-file; a hook stops reading an endless stdin and exits 0', () => {
    const fifo = path.join(files, 'tokens.fifo');
    execFileSync('mkfifo', [fifo]);
    const s = run(['serve', '--host', '0.0.0.0', '--port', '0', '--token-file', fifo]);
    assert.equal(s.timedOut, false, 'the FIFO hung serve');
    assert.equal(s.code, 1, s.stderr);
    assert.match(s.stderr, /the token file .* is not a regular file \(a FIFO\)/);

    const fd = fs.openSync('/dev/zero', 'r');
    try {
      const hook = mneme(['hook', 'session-start'], { home, cwd: repo, stdin: fd });
      assert.equal(hook.timedOut, false, 'the hook read an endless stdin');
      assert.equal(hook.code, 0, hook.stderr);
    } finally {
      fs.closeSync(fd);
    }
    // The twin: the same hook with a real payload injects this project's memories.
    const payload = JSON.stringify({ session_id: 'caps-1', cwd: repo, source: 'startup' });
    const ok = mneme(['hook', 'session-start'], { home, cwd: repo, input: payload });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /salak/);
  });
});

describe('agent sessions are recognised by any host variable of the family', () => {
  let home: string;
  let repo: string;
  before(() => {
    home = tmpDir('mneme-agent-env-');
    repo = gitRepo('https://github.com/acme/agent-env.git');
  });
  after(() => {
    for (const d of [home, repo]) fs.rmSync(d, { recursive: true, force: true });
  });
  const run = (args: string[], env: Record<string, string>) =>
    mneme(['--json', ...args], { home, cwd: repo, env });
  /** The actor a write from this environment is journaled with. */
  const writer = (env: Record<string, string>, n: number) => {
    const w = run(['remember', '--type', 'fact', '--abstract', `actor probe ${n}`], env);
    assert.equal(w.code, 0, w.stderr);
    return (run(['log', '--limit', '1'], {}).json() as { entries: { actor: { kind: string } }[] })
      .entries[0]!.actor.kind;
  };
  let n = 0;

  for (const [name, value] of [
    ['CODEX_HOME', '/home/someone/.codex'],
    ['CODEX_MANAGED_BY_NPM', '1'],
    ['CODEX_SOMETHING_NEW', 'x'],
    ['CLAUDECODE', '1'],
    ['CLAUDE_CODE_ENTRYPOINT', 'cli'],
    ['CLAUDE_CODE_SOMETHING_NEW', '1'],
    ['MNEME_AGENT', '1'],
    ['MNEME_AGENT', 'true'],
    ['MNEME_AGENT', 'yes'],
  ] as const) {
    it(`${name}=${value} marks an agent session: review refuses and writes are the agent's`, () => {
      const r = run(['review'], { [name]: value });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`inside an agent session \\(${name} is set\\)`));
      assert.equal(writer({ [name]: value }, n++), 'agent');
    });
  }

  const people: Record<string, string>[] = [
    {},
    { MNEME_AGENT: '0' },
    { MNEME_AGENT: '' },
    { CODEX_HOME: '' },
  ];
  for (const env of people) {
    it(`${JSON.stringify(env)} is a person's terminal: writes are the person's`, () => {
      const r = run(['review'], env);
      assert.equal(r.code, 2, r.stderr);
      assert.doesNotMatch(r.stderr, /agent session/);
      assert.match(r.stderr, /needs an interactive terminal/);
      assert.equal(writer(env, n++), 'human');
    });
  }
});

describe('a date that does not exist is refused on every surface, never rolled over', () => {
  let home: string;
  let repo: string;
  before(() => {
    home = tmpDir('mneme-dates-');
    repo = gitRepo('https://github.com/acme/dates.git');
  });
  after(() => {
    for (const d of [home, repo]) fs.rmSync(d, { recursive: true, force: true });
  });
  const run = (args: string[]) => mneme(['--json', ...args], { home, cwd: repo });
  const remember = (abstract: string, ...flags: string[]) =>
    run(['remember', '--type', 'fact', '--abstract', abstract, ...flags]);

  it('CLI: --valid-from/--valid-to/--as-of/--known-at name the flag and the date; real dates pass', () => {
    for (const [flag, date] of [
      ['--valid-from', '2026-02-30'],
      ['--valid-from', '2026-02-29'],
      ['--valid-to', '2026-04-31'],
      ['--valid-from', '2026-13-01'],
      ['--valid-from', '2026-03-01T24:00Z'],
    ] as const) {
      const r = remember('impossible feijoa', flag, date);
      assert.equal(r.code, 1, `${flag} ${date}: ${r.stderr}`);
      assert.ok(r.stderr.includes(`${flag} "${date}" is not a real date`), r.stderr);
    }
    assert.equal(run(['recall', 'feijoa']).json().results.length, 0);

    // The twins: real dates, a leap day in a leap year, are stored as given.
    const ok = remember(
      'possible feijoa',
      '--valid-from',
      '2026-02-28',
      '--valid-to',
      '2028-02-29',
    );
    assert.equal(ok.code, 0, ok.stderr);
    const read = run(['read', ok.json().id]).json();
    assert.equal(read.valid_from, '2026-02-28T00:00:00.000Z');
    assert.equal(read.valid_to, '2028-02-29T00:00:00.000Z');

    for (const flag of ['--as-of', '--known-at']) {
      const bad = run(['recall', 'feijoa', flag, '2026-02-31']);
      assert.equal(bad.code, 1, bad.stderr);
      assert.ok(bad.stderr.includes(`${flag} "2026-02-31" is not a real date`), bad.stderr);
    }
    const asOf = run(['recall', 'feijoa', '--as-of', '2026-03-01']);
    assert.equal(asOf.code, 0, asOf.stderr);
    assert.equal(asOf.json().results.length, 1);

    const sup = run([
      'supersede',
      ok.json().id,
      '--abstract',
      'later feijoa',
      '--valid-from',
      '2027-02-29',
    ]);
    assert.equal(sup.code, 1, sup.stderr);
    assert.match(sup.stderr, /--valid-from "2027-02-29" is not a real date/);
  });

  it('MCP over stdio: valid_from and as_of that do not exist are refused; real ones pass', async () => {
    const mcp = await mcpClient(home, repo);
    try {
      const bad = await mcp.call('remember', {
        type: 'fact',
        abstract: 'impossible pitaya',
        valid_from: '2026-02-30',
      });
      assert.equal(bad.isError, true);
      assert.equal(bad.body.code, 'invalid');
      assert.match(bad.body.message, /valid_from "2026-02-30" is not a real date/);
      const badRecall = await mcp.call('recall', { query: 'pitaya', as_of: '2026-02-31' });
      assert.equal(badRecall.isError, true);
      assert.match(badRecall.body.message, /"2026-02-31" is not a real date/);

      const ok = await mcp.call('remember', {
        type: 'fact',
        abstract: 'possible pitaya',
        valid_from: '2026-03-02',
      });
      assert.equal(ok.isError, false, ok.text);
      const found = await mcp.call('recall', { query: 'pitaya', as_of: '2026-03-03' });
      assert.deepEqual(
        found.body.results.map((x: { abstract: string }) => x.abstract),
        ['possible pitaya'],
      );
    } finally {
      await mcp.close();
    }
  });

  it('HTTP: a valid_from or as_of that does not exist is a 400; real ones pass', async () => {
    const f = await httpFixture();
    try {
      const bad = await f.app.request(
        '/api/memories',
        jsonPost({ type: 'fact', abstract: 'impossible jabuticaba', valid_from: '2026-02-30' }),
      );
      assert.equal(bad.status, 400);
      assert.match(
        JSON.stringify(await bad.json()),
        /valid_from \\"2026-02-30\\" is not a real date/,
      );
      const badRecall = await f.app.request('/api/recall?q=jabuticaba&as_of=2026-02-31');
      assert.equal(badRecall.status, 400);

      const ok = await f.app.request(
        '/api/memories',
        jsonPost({ type: 'fact', abstract: 'possible jabuticaba', valid_from: '2026-02-28' }),
      );
      assert.equal(ok.status, 201);
      const found = await f.app.request('/api/recall?q=jabuticaba&as_of=2026-03-01');
      assert.equal(found.status, 200);
      assert.equal(((await found.json()) as { results: unknown[] }).results.length, 1);
    } finally {
      await f.close();
    }
  });
});

describe("a binding never learns anything about another project's memories", () => {
  let home: string;
  let repoA: string;
  let repoB: string;
  let mineA: string;
  let goneA: string;
  let theirs: string;
  let scopeB: string;
  before(() => {
    home = tmpDir('mneme-scopes-');
    repoA = gitRepo('https://github.com/acme/alpha.git');
    repoB = gitRepo('https://github.com/acme/bravo.git');
    const write = (cwd: string, abstract: string) => {
      const r = mneme(['--json', 'remember', '--type', 'fact', '--abstract', abstract], {
        home,
        cwd,
      });
      assert.equal(r.code, 0, r.stderr);
      return r.json() as { id: string };
    };
    mineA = write(repoA, 'The okapi service deploys from main').id;
    goneA = write(repoA, 'The okapi service deploys by hand').id;
    assert.equal(mneme(['retract', goneA], { home, cwd: repoA }).code, 0);
    for (let i = 0; i < 3; i++) write(repoB, `Okapi secret number ${i} of the other team`);
    theirs = write(repoB, 'The okapi service of bravo keeps its keys in vault').id;
    scopeB = (mneme(['--json', 'status'], { home, cwd: repoB }).json() as { project: string })
      .project;
  });
  after(() => {
    for (const d of [home, repoA, repoB]) fs.rmSync(d, { recursive: true, force: true });
  });

  it('CLI recall --explain traces only what the binding can read', () => {
    const r = mneme(['--json', 'recall', 'okapi', 'service', '--explain'], { home, cwd: repoA });
    assert.equal(r.code, 0, r.stderr);
    const out = r.json() as {
      results: { id: string }[];
      excluded: { id: string; reason: string }[];
    };
    assert.deepEqual(
      out.results.map((x) => x.id),
      [mineA],
    );
    // Does: the binding's own retracted memory is traced. Must not: any trace of project B.
    assert.ok(out.excluded.some((x) => x.id === goneA && x.reason === 'retracted'));
    assert.ok(!out.excluded.some((x) => x.reason === 'other_scope'), r.stdout);
    assert.ok(!r.stdout.includes(theirs) && !r.stdout.includes(scopeB), r.stdout);
  });

  it('CLI status counts only this project and global', () => {
    const a = mneme(['--json', 'status'], { home, cwd: repoA });
    assert.equal(a.code, 0, a.stderr);
    const s = a.json() as {
      project: string;
      memories: number;
      activeMemories: number;
      revisions: number;
      byScope: Record<string, number>;
      byType: Record<string, number>;
    };
    assert.equal(s.activeMemories, 1); // does: mineA (goneA is retracted)
    assert.equal(s.memories, 2);
    assert.equal(s.revisions, 3);
    assert.deepEqual(s.byScope, { [s.project]: 1 });
    assert.deepEqual(s.byType, { fact: 1 });
    assert.ok(!a.stdout.includes(scopeB), a.stdout); // must not: B's name or counts
    const b = mneme(['--json', 'status'], { home, cwd: repoB }).json() as {
      activeMemories: number;
    };
    assert.equal(b.activeMemories, 4); // B sees its own four
  });

  it('MCP status and recall explain over stdio show nothing of project B', async () => {
    const mcp = await mcpClient(home, repoA);
    try {
      const st = await mcp.call('status', {});
      assert.equal(st.isError, false, st.text);
      assert.equal(st.body.activeMemories, 1);
      assert.equal(st.body.revisions, 3);
      assert.equal(st.body.journalHead, undefined, 'the journal head counts every project');
      assert.ok(!st.text.includes(scopeB), st.text);
      const r = await mcp.call('recall', { query: 'okapi service', explain: true });
      assert.deepEqual(
        r.body.results.map((x: { id: string }) => x.id),
        [mineA],
      );
      assert.ok(r.body.excluded.some((x: { id: string }) => x.id === goneA));
      assert.ok(!r.text.includes(theirs) && !r.text.includes(scopeB), r.text);
    } finally {
      await mcp.close();
    }
  });

  it('HTTP: a token for project A sees only A in recall --explain and health', async () => {
    const f = await httpFixture({
      requireToken: true,
      resolveToken: (t) =>
        t === 'token-a-0123456789ab' ? { tenant: null, projects: ['alpha-0000000a'] } : null,
    });
    try {
      const a = f.engine('alpha-0000000a');
      const b = f.engine('bravo-0000000b');
      const [own] = await a.apply([{ op: 'remember', type: 'fact', abstract: 'Tapir runs' }], {
        kind: 'human',
        surface: 'test',
      });
      const [other] = await b.apply(
        [{ op: 'remember', type: 'fact', abstract: 'Tapir secret of bravo' }],
        { kind: 'human', surface: 'test' },
      );
      const headers = { Authorization: 'Bearer token-a-0123456789ab' };
      const r = await f.app.request(
        'http://10.0.0.5/api/recall?q=tapir&explain=1&project=alpha-0000000a',
        { headers },
      );
      assert.equal(r.status, 200);
      const text = await r.text();
      assert.ok(text.includes(own!.id), text);
      assert.ok(!text.includes(other!.id) && !text.includes('bravo-0000000b'), text);
      const h = await f.app.request('http://10.0.0.5/api/health?project=alpha-0000000a', {
        headers,
      });
      assert.equal(h.status, 200);
      assert.equal(((await h.json()) as { journal: unknown }).journal, null);
    } finally {
      await f.close();
    }
  });
});

describe('an agent may propose a change to a confirmed value, never apply it', () => {
  let home: string;
  let repo: string;
  let id: string;
  const confirmedValue = 'The release branch is cut on Tuesdays';
  before(() => {
    home = tmpDir('mneme-confirmed-');
    repo = gitRepo('https://github.com/acme/confirmed.git');
    const w = mneme(['--json', 'remember', '--type', 'fact', '--abstract', confirmedValue], {
      home,
      cwd: repo,
    });
    assert.equal(w.code, 0, w.stderr);
    id = w.json().id;
    // A person confirms it in a terminal (a real pty answers the typed confirmation).
    const c = terminal(['confirm'], ['confirm', id], {
      cwd: repo,
      env: humanEnv({ MNEME_HOME: home }),
    });
    assert.equal(c.code, 0, c.out);
    assert.equal(read().trust, 'confirmed');
  });
  after(() => {
    for (const d of [home, repo]) fs.rmSync(d, { recursive: true, force: true });
  });
  const read = () =>
    mneme(['--json', 'read', id], { home, cwd: repo }).json() as {
      rev: number;
      abstract: string;
      trust: string;
    };
  const tombstones = () =>
    (
      mneme(['--json', 'tombstone', 'list'], { home, cwd: repo }).json() as {
        tombstones: unknown[];
      }
    ).tombstones.length;
  const proposals = () =>
    mneme(['--json', 'proposals'], { home, cwd: repo }).json() as {
      proposals: { kind: string; targets: string[]; created_by: { kind: string } }[];
    };

  it('over MCP: correct and supersede become proposals, retract is refused; nothing applied', async () => {
    const before = read();
    const mcp = await mcpClient(home, repo);
    try {
      for (const verb of ['correct', 'supersede']) {
        const r = await mcp.call(verb, { id, abstract: `The release branch is cut by ${verb}` });
        assert.equal(r.isError, true, r.text);
        assert.equal(r.body.code, 'conflict');
        assert.match(r.body.message, /confirmed by a person; your \w+ was not applied/);
        assert.doesNotMatch(r.text, /mneme (review|confirm)|to accept/i);
      }
      for (const args of [{ id }, { id, reject: true }]) {
        const r = await mcp.call('retract', args);
        assert.equal(r.isError, true, r.text);
        assert.equal(r.body.code, 'refused');
        assert.match(r.body.message, /only a person can retract or forget it, on a human surface/);
      }
    } finally {
      await mcp.close();
    }
    assert.deepEqual(read(), before, 'the confirmed value stands, as it was');
    assert.equal(tombstones(), 0, 'no tombstone was armed by an agent');
    const held = proposals().proposals;
    assert.equal(held.length, 2);
    assert.ok(held.every((p) => p.kind === 'conflict' && p.targets[0] === id));
    assert.ok(held.every((p) => p.created_by.kind === 'agent'));
  });

  it('in an agent session the CLI cannot correct or forget it either', () => {
    const env = { CODEX_HOME: '/home/someone/.codex' };
    const c = mneme(['correct', id, '--abstract', 'Cut on Mondays'], { home, cwd: repo, env });
    assert.equal(c.code, 2, c.stderr);
    const f = mneme(['forget', id], { home, cwd: repo, env });
    assert.equal(f.code, 2, f.stderr);
    assert.match(f.stderr, /only a person can retract or forget it/);
    assert.equal(read().abstract, confirmedValue);
    assert.equal(tombstones(), 0);
  });

  it('a person at the CLI corrects it: a new revision, and the old value tombstoned', () => {
    const confirmed = read();
    const c = mneme(
      ['--json', 'correct', id, '--abstract', 'The release branch is cut on Mondays'],
      {
        home,
        cwd: repo,
      },
    );
    assert.equal(c.code, 0, c.stderr);
    const now = read();
    assert.equal(now.rev, confirmed.rev + 1);
    assert.equal(now.abstract, 'The release branch is cut on Mondays');
    assert.equal(tombstones(), 1);
  });
});

it('a correction an agent proposed over a confirmed value, accepted by a person, is applied as a correction', async () => {
  const dir = tmpDir('mneme-confirmed-accept-');
  const store = await FileStore.open(dir, { durable: false });
  try {
    const clock = testClock();
    const e = engineFor(store, PROJECT_A, clock);
    const [m] = await e.apply(
      [{ op: 'remember', type: 'fact', abstract: 'Builds run on Node 18' }],
      HUMAN,
    );
    await e.apply([{ op: 'confirm', id: m!.id }], HUMAN);
    clock.advance(1000);
    const agent = engineFor(store, PROJECT_A, clock, 'agent');
    await assert.rejects(
      agent.apply([{ op: 'correct', id: m!.id, abstract: 'Builds run on Node 20' }], AGENT),
      /confirmed by a person/,
    );
    assert.equal((await e.read(m!.id)).abstract, 'Builds run on Node 18');
    assert.deepEqual(await e.tombstones(), []);
    const [p] = await e.proposals({ state: 'pending' });
    assert.equal(p!.kind, 'conflict');
    clock.advance(1000);
    await e.apply([{ op: 'decide', proposal: p!.id, decision: 'accept' }], HUMAN);
    assert.equal((await e.read(m!.id)).abstract, 'Builds run on Node 20');
    // Accepted as what it was proposed as: a correction, so the wrong value is tombstoned.
    assert.equal((await e.tombstones()).length, 1);
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
