// End to end with the real hosts: the pinned `claude` (Claude Code) and `codex` CLIs, installed
// by scripts/e2e-hosts.sh outside the product's dependencies (MNEME_E2E_HOSTS names the folder),
// talk to a fake model API on 127.0.0.1 (test/fake-model-api.ts) and run mneme as a user would
// have it: packed into a tarball, installed from it into a scratch prefix, and wired with
// `npx mneme setup` into a scratch HOME and a scratch git repository. Nothing here leaves the
// machine: the hosts' telemetry and update checks are off and their model is the fake.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  distillerRequest,
  requestSession,
  startFakeModel,
  type Brain,
  type FakeModel,
  type Recorded,
} from './fake-model-api.js';
import { REPO } from './hook-helpers.js';

const HOSTS = process.env.MNEME_E2E_HOSTS ?? '';
const bin = (name: string) => path.join(HOSTS, 'node_modules', '.bin', name);
const PREFIX = path.join(HOSTS, 'mneme-prefix');
const INSTALLED = path.join(PREFIX, 'lib', 'node_modules', 'mneme');
const missing =
  HOSTS === ''
    ? 'MNEME_E2E_HOSTS is not set'
    : [bin('claude'), bin('codex'), path.join(PREFIX, 'bin', 'mneme')].find(
        (f) => !fs.existsSync(f),
      );
// In CI (.ci/run installs them) a missing host is a failure, not a skip.
if (missing && process.env.CI === 'true')
  throw new Error(`hosts-e2e: ${missing}; .ci/run should have run scripts/e2e-hosts.sh`);
const skip = missing
  ? `real hosts not installed (${missing === 'MNEME_E2E_HOSTS is not set' ? missing : `no ${missing}`}): run \`bash scripts/e2e-hosts.sh\` and export the MNEME_E2E_HOSTS it prints`
  : false;

const DECISION = 'Invoices are rounded half-even to the cent';
/** File-bound: a constraint whose applies_to covers the files edited below. */
const CONSTRAINT = 'Billing amounts are integer cents, never floats';
const LEDGER = 'Ledger entries are append-only';
const REMOTE = 'https://example.com/acme/alpha.git';

let tmp: string;
let home: string;
let repo: string;
let otherRepo: string;
let model: FakeModel;
let env: NodeJS.ProcessEnv;
let memId = '';
let constraintId = '';
/** The user's sessions whose distillation is checked: the Codex patch, the Claude Code Write. */
let codexSession = '';
let claudeSession = '';

/** What the distiller learns from each user session (one lesson), found by its prompt. */
const LESSONS = [
  { prompt: 'add an invoice total', lesson: 'The invoice total lives in src/billing/invoice.ts' },
  {
    prompt: 'write the billing total',
    lesson: 'The billing total in cents lives in src/billing/total.ts',
  },
];
/** Codex defers MCP tools behind tool_search: the model's call to find them. */
const toolSearch = (query: string) => ({
  item: {
    type: 'tool_search_call',
    execution: 'client',
    status: 'completed',
    arguments: { query },
  },
});
/**
 * The model as the test scripts it: a distiller's request (either wire) is answered with
 * operation lines — one lesson for a session whose excerpt holds its user's prompt, else a skip —
 * whatever the current test's brain says to the user's sessions. The distiller runs detached,
 * so its request can arrive while a later test is talking to the hosts.
 */
function think(brain: Brain): void {
  model.brain = (body, wire) => {
    const text = distillerRequest(body);
    if (text === null) return brain(body, wire);
    // On Codex the distiller's model first looks for tools, as the user's did: it must find
    // none of mneme's (the executor switches mneme's MCP entry off for its run).
    if (wire === 'responses' && !JSON.stringify(body.input).includes('tool_search_output'))
      return toolSearch('mneme remember memory');
    const hit = LESSONS.find((l) => text.includes(`user: ${l.prompt}`));
    return {
      text: hit
        ? `${JSON.stringify({ op: 'new', type: 'lesson', abstract: hit.lesson, evidence: [[1, 1]] })}\n`
        : '{"op":"skip","reason":"nothing durable"}\n',
    };
  };
}

interface HookLine {
  event: string;
  host: string;
  session: string;
  outcome: string;
  detail?: Record<string, unknown>;
}
/** The pids of the distillers the user's hooks started ("distiller": "started pid N"). */
const startedDistillers = () =>
  hookLog().flatMap((l) => /started pid (\d+)/.exec(String(l.detail?.distiller ?? ''))?.[1] ?? []);
const hookLog = (): HookLine[] => {
  const file = path.join(home, '.mneme', '.state', 'hooks.log');
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as HookLine);
};

function run(cmd: string, args: string[], cwd: string, extra: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(cmd, args, {
    cwd,
    env: { ...env, ...extra },
    encoding: 'utf8',
    timeout: 90_000,
    input: '',
  });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}
const mneme = (args: string[], cwd = repo) => run(path.join(PREFIX, 'bin', 'mneme'), args, cwd);

/** A host run, asynchronous: the fake model answers from this same process meanwhile. */
function host(cmd: string, args: string[], cwd: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
const claude = (prompt: string, cwd: string) =>
  host(
    bin('claude'),
    [
      '-p',
      prompt,
      '--output-format',
      'json',
      '--permission-mode',
      'acceptEdits',
      '--allowedTools',
      'Write,Edit,Read',
    ],
    cwd,
  );
const codex = (prompt: string, cwd: string) =>
  host(bin('codex'), ['exec', '--json', '--sandbox', 'danger-full-access', prompt], cwd);

/**
 * Every request of the user's sessions the fake model got since `from` (not the detached
 * distiller's, which may arrive meanwhile), for "does the model see it".
 */
const seen = (from: number, wire: Recorded['wire']) =>
  model.requests.slice(from).filter((r) => r.wire === wire && distillerRequest(r.body) === null);

function gitRepo(dir: string, remote: string) {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('git', ['init', '-q', dir]);
  execFileSync('git', ['-C', dir, 'remote', 'add', 'origin', remote]);
}

/** Trust Codex's hooks the way its own review does: the key and hash Codex reports, in config. */
async function trustCodexHooks(): Promise<number> {
  const server = spawn(bin('codex'), ['app-server'], {
    cwd: repo,
    env,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const lines: string[] = [];
  let buf = '';
  const answer = (id: number) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('codex app-server did not answer')), 20_000);
      server.stdout.on('data', (d: Buffer) => {
        buf += d.toString('utf8');
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          lines.push(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
        for (const l of lines) {
          const m = JSON.parse(l) as { id?: number; result?: Record<string, unknown> };
          if (m.id === id && m.result) {
            clearTimeout(timer);
            resolve(m.result);
          }
        }
      });
    });
  const send = (m: Record<string, unknown>) =>
    server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
  try {
    send({ id: 1, method: 'initialize', params: { clientInfo: { name: 'e2e', version: '1' } } });
    await answer(1);
    send({ method: 'initialized' });
    send({ id: 2, method: 'hooks/list', params: { cwds: [repo] } });
    const listed = (await answer(2)) as {
      data: { hooks: { key: string; currentHash: string; command: string }[] }[];
    };
    const hooks = listed.data[0]!.hooks.filter((h) => h.command.startsWith('mneme hook '));
    const config = path.join(home, '.codex', 'config.toml');
    fs.appendFileSync(
      config,
      hooks
        .map(
          (h) =>
            `\n[hooks.state.${JSON.stringify(h.key)}]\ntrusted_hash = ${JSON.stringify(h.currentHash)}\n`,
        )
        .join(''),
    );
    return hooks.length;
  } finally {
    server.kill();
  }
}

describe('the real Claude Code and Codex with mneme from its tarball', { skip }, () => {
  before(async () => {
    const built = fs.readFileSync(path.join(REPO, 'dist', 'mneme.cjs'));
    assert.ok(
      built.equals(fs.readFileSync(path.join(INSTALLED, 'dist', 'mneme.cjs'))),
      `${INSTALLED} holds another build than this checkout: run \`bash scripts/e2e-hosts.sh\` again`,
    );
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-hosts-e2e-'));
    home = path.join(tmp, 'home');
    repo = path.join(tmp, 'alpha');
    otherRepo = path.join(tmp, 'beta');
    fs.mkdirSync(path.join(home, '.codex'), { recursive: true });
    gitRepo(repo, REMOTE);
    gitRepo(otherRepo, 'https://example.com/acme/beta.git');
    model = await startFakeModel();
    env = {
      // The hosts' own bin folder too: the distiller runs `claude -p` and `codex exec` by name.
      PATH: [
        path.join(PREFIX, 'bin'),
        path.join(HOSTS, 'node_modules', '.bin'),
        path.dirname(process.execPath),
        '/usr/bin',
        '/bin',
      ].join(path.delimiter),
      HOME: home,
      LANG: 'C.UTF-8',
      // npx finds the global install here, as it does for a user's `npm install -g`.
      npm_config_prefix: PREFIX,
      npm_config_update_notifier: 'false',
      // Claude Code: the fake model, and no traffic of its own.
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: 'sk-fake',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      // Codex: the provider below reads its key from here.
      FAKE_MODEL_KEY: 'fake',
    };
    // Codex's model is the fake, spoken to over the Responses API. The model name is one Codex
    // knows, so it offers the tools it gives that model (apply_patch among them).
    fs.writeFileSync(
      path.join(home, '.codex', 'config.toml'),
      [
        '# the e2e test’s own settings, which setup must keep',
        'model = "gpt-5.5"',
        'model_provider = "fake"',
        'check_for_update_on_startup = false',
        '',
        '[analytics]',
        'enabled = false',
        '',
        '[model_providers.fake]',
        'name = "fake model"',
        `base_url = "${model.url}/v1"`,
        'wire_api = "responses"',
        'env_key = "FAKE_MODEL_KEY"',
        '',
      ].join('\n'),
    );
    // No [distill] settings: the distiller uses its default, the session's own host.
  });
  after(async () => {
    // The detached distillers the hooks started talk to the fake model: let them finish first
    // (bounded), or a `claude -p` would go on retrying a closed port after the test.
    const pids = home ? startedDistillers() : [];
    const alive = (pid: string) => {
      try {
        process.kill(Number(pid), 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 300 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
    // Each was started detached, as its own process group: end the group, executor included.
    for (const pid of pids.filter(alive))
      try {
        process.kill(-Number(pid), 'SIGKILL');
      } catch {
        /* gone meanwhile */
      }
    await model?.close();
    if (tmp && !process.env.MNEME_E2E_KEEP) fs.rmSync(tmp, { recursive: true, force: true });
    else if (tmp) process.stderr.write(`hosts-e2e: kept ${tmp}\n`);
  });

  it('`npx mneme setup` wires both hosts to the installed command', () => {
    for (const host of ['codex', 'claude-code']) {
      const r = run('npx', ['--no-install', 'mneme', 'setup', host], repo);
      assert.equal(r.code, 0, r.stderr + r.stdout);
    }
    const settings = fs.readFileSync(path.join(home, '.claude', 'settings.json'), 'utf8');
    const claudeJson = JSON.parse(fs.readFileSync(path.join(home, '.claude.json'), 'utf8'));
    const codexHooks = fs.readFileSync(path.join(home, '.codex', 'hooks.json'), 'utf8');
    const codexToml = fs.readFileSync(path.join(home, '.codex', 'config.toml'), 'utf8');
    assert.match(settings, /"command": "mneme hook session-start"/);
    assert.match(codexHooks, /"command": "mneme hook pre-tool-use --host codex"/);
    assert.deepEqual(claudeJson.mcpServers.mneme, {
      type: 'stdio',
      command: 'mneme',
      args: ['mcp'],
    });
    assert.match(codexToml, /\[mcp_servers\.mneme\]\ncommand = "mneme"\nargs = \["mcp"\]\n/);
    assert.match(codexToml, /^# the e2e test’s own settings/);
    for (const text of [settings, codexHooks, codexToml, JSON.stringify(claudeJson)])
      assert.ok(!text.includes(REPO), 'no file names the checkout');
    // The PreToolUse matcher names tools this Claude Code has (checked against its requests below).
    const list = run(bin('claude'), ['mcp', 'list'], repo);
    assert.match(list.stdout, /mneme: mneme mcp - .*Connected/, list.stdout + list.stderr);
  });

  it('Codex runs no untrusted hook, and runs them once trusted the way its review records it', async () => {
    const from = model.requests.length;
    think(() => ({ text: 'nothing to do' }));
    const r = await codex('say hello', repo);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(seen(from, 'responses').length, 1, 'Codex asked the fake model');
    assert.deepEqual(
      hookLog().filter((l) => l.host === 'codex'),
      [],
      'an untrusted hook does not run',
    );
    assert.equal(await trustCodexHooks(), 5);
    const again = await codex('say hello', repo);
    assert.equal(again.code, 0, again.stderr);
    assert.ok(
      hookLog().some((l) => l.host === 'codex' && l.event === 'session-start'),
      'a trusted hook runs',
    );
  });

  it('Codex remembers a decision through mneme’s MCP tool, and apply_patch gets the file-bound block', async () => {
    const from = model.requests.length;
    const patch =
      '*** Begin Patch\n*** Add File: src/billing/invoice.ts\n+export const total = 1;\n*** End Patch\n';
    // The model: find mneme's tools (Codex defers MCP tools behind tool_search), remember the
    // decision and a constraint for src/billing/**, patch a file there, then answer citing the
    // decision.
    think((body) => {
      const input = body.input as { type: string; output?: string }[];
      const has = (t: string) => input.some((i) => i.type === t);
      if (!has('tool_search_output')) return toolSearch('mneme remember decision');
      const outputs = input.filter((i) => i.type === 'function_call_output').length;
      if (outputs < 2)
        return {
          item: {
            type: 'function_call',
            namespace: 'mcp__mneme',
            name: 'remember',
            arguments: JSON.stringify(
              outputs === 0
                ? { type: 'decision', abstract: DECISION }
                : { type: 'constraint', abstract: CONSTRAINT, applies_to: ['src/billing/**'] },
            ),
          },
        };
      if (!has('custom_tool_call_output'))
        return { item: { type: 'custom_tool_call', name: 'apply_patch', input: patch } };
      const out = input.find((i) => i.type === 'function_call_output')!.output ?? '';
      return { text: `Patched, as ${/\[mem:[^\]]+\]/.exec(out)?.[0]} says.` };
    });
    const r = await codex('add an invoice total', repo);
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout
      .split('\n')
      .filter(Boolean)
      .map(
        (l) =>
          JSON.parse(l) as { type: string; thread_id?: string; item?: Record<string, unknown> },
      );
    codexSession = events.find((e) => e.type === 'thread.started')?.thread_id ?? '';
    assert.ok(codexSession, 'codex exec --json names its thread');
    const calls = events
      .filter((e) => e.item?.type === 'mcp_tool_call' && e.item.status === 'completed')
      .map((e) => e.item) as {
      server: string;
      tool: string;
      result: { structured_content: { id: string } };
    }[];
    assert.deepEqual(
      calls.map((c) => `${c.server}/${c.tool}`),
      ['mneme/remember', 'mneme/remember'],
    );
    memId = calls[0]!.result.structured_content.id;
    constraintId = calls[1]!.result.structured_content.id;
    const read = mneme(['read', memId, '--json']);
    assert.equal(read.code, 0, read.stderr);
    assert.match(read.stdout, new RegExp(DECISION));
    // PreToolUse: the request after the apply_patch call carries the block for that file.
    const afterPatch = seen(from, 'responses').find((q) =>
      q.text.includes('custom_tool_call_output'),
    );
    assert.ok(afterPatch, 'the model was asked again after the patch');
    assert.ok(afterPatch.text.includes('(for src/billing/invoice.ts)'), 'the block names the file');
    assert.ok(afterPatch.text.includes(constraintId), 'the constraint bound to src/billing/**');
    assert.equal(
      fs.readFileSync(path.join(repo, 'src/billing/invoice.ts'), 'utf8'),
      'export const total = 1;\n',
    );
    const pre = hookLog().filter((l) => l.host === 'codex' && l.event === 'pre-tool-use');
    assert.equal(pre.at(-1)?.outcome, 'injected');
  });

  it('a later Claude Code session in that repository gets it at SessionStart, before a Write and before an Edit', async () => {
    // An existing file under another constraint, for the Edit (Claude Code edits only a file
    // it has read in the session, so the model reads it first).
    const ledger = path.join(repo, 'src', 'ledger', 'book.ts');
    fs.mkdirSync(path.dirname(ledger), { recursive: true });
    fs.writeFileSync(ledger, 'export const entries = [];\n');
    const bound = mneme([
      'remember',
      '--type',
      'constraint',
      '--abstract',
      LEDGER,
      '--applies-to',
      'src/ledger/**',
      '--json',
    ]);
    assert.equal(bound.code, 0, bound.stderr);
    const ledgerId = (JSON.parse(bound.stdout) as { id: string }).id;
    const from = model.requests.length;
    const target = path.join(repo, 'src', 'billing', 'total.ts');
    let tools: string[] = [];
    think((body) => {
      const messages = body.messages as { content: unknown }[];
      tools = ((body.tools as { name: string }[] | undefined) ?? []).map((t) => t.name);
      const results = JSON.stringify(messages).split('"tool_result"').length - 1;
      if (results === 0)
        return {
          tool: 'Write',
          input: { file_path: target, content: 'export const cents = 0;\n' },
        };
      if (results === 1) return { tool: 'Read', input: { file_path: ledger } };
      if (results === 2)
        return {
          tool: 'Edit',
          input: { file_path: ledger, old_string: '[]', new_string: '[] as number[]' },
        };
      return { text: `Written; rounding per [mem:${memId}].` };
    });
    const r = await claude('write the billing total', repo);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    claudeSession = (JSON.parse(r.stdout) as { session_id: string }).session_id;
    const asked = seen(from, 'anthropic').filter((q) => Array.isArray(q.body.tools));
    assert.equal(asked.length, 4, 'Write, Read, Edit and the answer after them');
    assert.ok(asked[0]!.text.includes(DECISION), 'the first request holds the SessionStart block');
    assert.ok(
      !asked[0]!.text.includes('(for src/'),
      'no file-bound block before a file is touched',
    );
    assert.ok(asked[1]!.text.includes('(for src/billing/total.ts)'), 'PreToolUse on Write');
    assert.ok(asked[1]!.text.includes(CONSTRAINT));
    assert.ok(!asked[2]!.text.includes('(for src/ledger/book.ts)'), 'Read is not a file edit');
    assert.ok(asked[3]!.text.includes('(for src/ledger/book.ts)'), 'PreToolUse on Edit');
    assert.ok(asked[3]!.text.includes(ledgerId) && asked[3]!.text.includes(LEDGER));
    assert.equal(fs.readFileSync(target, 'utf8'), 'export const cents = 0;\n');
    assert.equal(fs.readFileSync(ledger, 'utf8'), 'export const entries = [] as number[];\n');
    const pre = hookLog().filter((l) => l.session === claudeSession && l.event === 'pre-tool-use');
    assert.deepEqual(
      pre.map((l) => [l.detail?.tool, l.outcome]),
      [
        ['Write', 'injected'],
        ['Edit', 'injected'],
      ],
    );
    for (const t of ['Edit', 'Write', 'NotebookEdit'])
      assert.ok(tools.includes(t), `Claude Code has the tool the matcher names: ${t}`);
    assert.ok(!tools.includes('MultiEdit'), 'and no longer has MultiEdit');
  });

  it('a session in a repository with another remote does not get it', async () => {
    const from = model.requests.length;
    think(() => ({ text: 'nothing here' }));
    const r = await claude('hello', otherRepo);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const asked = seen(from, 'anthropic');
    assert.ok(asked.length >= 1);
    assert.ok(asked.every((q) => !q.text.includes(DECISION)));
    assert.ok(!asked.some((q) => q.text.includes(memId)));
  });

  it('Stop and SessionEnd archive each host’s session, count the citation and start the distiller', async () => {
    const log = hookLog();
    for (const host of ['codex', 'claude-code']) {
      for (const event of ['stop', 'session-end']) {
        const lines = log.filter((l) => l.host === host && l.event === event);
        assert.ok(lines.length > 0, `${host} ${event} ran`);
        assert.ok(
          lines.some((l) => l.outcome === 'archived'),
          `${host} ${event}: ${JSON.stringify(lines)}`,
        );
      }
      // Claude Code 2.1.197 may fire Stop before its transcript holds the final answer; the
      // answer (and its citation) is then archived by SessionEnd. Either counts it, once.
      const cited = log
        .filter((l) => l.host === host && (l.event === 'stop' || l.event === 'session-end'))
        .reduce((n, l) => n + Number(l.detail?.cited ?? 0), 0);
      assert.ok(cited >= 1, `${host}: the [mem:ID] in the answer is counted`);
      assert.ok(
        log.some((l) => l.host === host && /started/.test(String(l.detail?.distiller ?? ''))),
        `${host}: the distiller was started`,
      );
    }
    // The citations are usage of the memory, in the store's usage log.
    const usage = fs
      .readdirSync(path.join(home, '.mneme', 'usage'))
      .flatMap((f) => fs.readFileSync(path.join(home, '.mneme', 'usage', f), 'utf8').split('\n'))
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { kind: string; ids: string[] });
    const cites = usage.filter((u) => u.kind === 'cite' && u.ids.includes(memId));
    assert.equal(cites.length, 2, 'one cite per host session that cited it');
    assert.ok(!usage.some((u) => u.kind === 'cite' && u.ids.includes(constraintId)), 'not cited');
  });

  it('the distiller follows the host: `codex exec` for the Codex session, `claude -p` for Claude Code; their lessons land and their own sessions leave no trace', async () => {
    // The distiller is detached: wait (bounded) until each user session's lesson is applied.
    const applied = () =>
      hookLog().filter((l) => l.event === 'distill' && Number(l.detail?.applied ?? 0) > 0);
    for (let i = 0; i < 600 && applied().length < 2; i++)
      await new Promise((r) => setTimeout(r, 100));
    const distillerAsks = model.requests.filter((q) => distillerRequest(q.body) !== null);
    const userAsks = model.requests.filter((q) => distillerRequest(q.body) === null);
    const askedFor = (prompt: string) =>
      distillerAsks.filter((q) => distillerRequest(q.body)!.includes(`user: ${prompt}`));
    // Codex's session went to `codex exec` (the Responses wire), Claude Code's to `claude -p`
    // (the Anthropic wire), each prompt holding its own session's text and not the other's.
    const codexAsk = askedFor('add an invoice total');
    const claudeAsk = askedFor('write the billing total');
    assert.deepEqual(
      codexAsk.map((q) => q.wire),
      ['responses', 'responses'],
      'the Codex session was distilled by codex exec (a tool search, then the answer)',
    );
    // mneme's MCP tools: found by the user's Codex session, not by the distiller's.
    const remembers = (q: Recorded) => q.text.includes('"name":"remember"');
    assert.ok(
      userAsks.some((q) => requestSession(q) === codexSession && remembers(q)),
      'the user’s Codex session found mneme’s remember',
    );
    assert.ok(codexAsk[1]!.text.includes('tool_search_output'));
    assert.ok(!codexAsk.some(remembers), 'the distiller’s codex exec has no mneme MCP server');
    assert.deepEqual(
      claudeAsk.map((q) => q.wire),
      ['anthropic'],
      'the Claude Code session was distilled by claude -p',
    );
    assert.ok(!distillerRequest(codexAsk[0]!.body)!.includes('write the billing total'));
    assert.ok(!distillerRequest(claudeAsk[0]!.body)!.includes('add an invoice total'));
    // claude -p as the executor runs it: no tools, none of the user's MCP servers.
    assert.deepEqual(claudeAsk[0]!.body.tools ?? [], [], 'claude -p --tools "" offers no tools');
    assert.ok(
      !claudeAsk[0]!.text.includes('mcp__mneme'),
      'and no MCP server (--strict-mcp-config)',
    );
    // The lessons landed through the write path, as the distiller of each host's session.
    const byHost = { codex: codexSession, 'claude-code': claudeSession };
    for (const [i, host] of (['codex', 'claude-code'] as const).entries()) {
      const found = mneme(['recall', LESSONS[i]!.lesson, '--json']);
      assert.equal(found.code, 0, found.stderr);
      const hits = (JSON.parse(found.stdout) as { results: { id: string; abstract: string }[] })
        .results;
      const hit = hits.find((h) => h.abstract === LESSONS[i]!.lesson);
      assert.ok(hit, `${host}'s lesson is recalled: ${found.stdout.slice(0, 500)}`);
      const read = mneme(['read', hit.id, '--json']);
      assert.equal(read.code, 0, read.stderr);
      const m = JSON.parse(read.stdout) as {
        type: string;
        trust: string;
        provenance: string[];
        actor: Record<string, unknown>;
      };
      assert.equal(m.type, 'lesson');
      assert.equal(m.trust, 'claimed', 'the write path caps a distilled memory at claimed');
      assert.deepEqual(m.actor, { kind: 'distiller', host, session: byHost[host] });
      assert.ok(
        m.provenance.some((p) => p.startsWith(`session:${host}/${byHost[host]}#`)),
        `provenance names the archived lines: ${m.provenance}`,
      );
    }
    // The distiller's own host sessions ran no hooks of their own: their ids (as the fake model
    // saw them) are nowhere in the hook log, the session archive or the state doctor reads,
    // while the user's sessions, found the same way, are in all of them.
    const userIds = [codexSession, claudeSession];
    for (const [id, wire] of [
      [codexSession, 'responses'],
      [claudeSession, 'anthropic'],
    ] as const)
      assert.ok(
        userAsks.some((q) => q.wire === wire && requestSession(q) === id),
        `the fake model names the user's ${wire} session ${id}`,
      );
    const distillerIds = [...new Set(distillerAsks.map(requestSession))];
    assert.ok(distillerIds.length >= 2 && distillerIds.every((id) => typeof id === 'string'));
    assert.ok(
      distillerIds.every((id) => !userIds.includes(id!)),
      'the distiller ran sessions of its own',
    );
    const store = path.join(home, '.mneme');
    const traces = (id: string) => {
      const where: string[] = [];
      if (hookLog().some((l) => l.session === id)) where.push('hooks.log');
      for (const dir of [
        path.join(store, 'archive', 'sessions'),
        path.join(store, '.state', 'sessions'),
        path.join(store, '.state', 'injected'),
        path.join(store, '.state', 'watermarks'),
        path.join(store, '.state', 'distilled'),
      ])
        for (const f of fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }) : [])
          if (String(f).includes(id)) where.push(path.relative(store, path.join(dir, String(f))));
      return where;
    };
    for (const id of userIds) {
      const t = traces(id);
      assert.ok(t.includes('hooks.log'), `${id}: ${t}`);
      assert.ok(
        t.some((w) => w.startsWith('archive')),
        `${id} archived: ${t}`,
      );
    }
    for (const id of distillerIds) assert.deepEqual(traces(id!), [], `distiller session ${id}`);
    // Nor does Claude Code keep a transcript of the distiller's run (--no-session-persistence),
    // while it keeps the user's.
    const projects = path.join(home, '.claude', 'projects');
    const transcripts = fs.readdirSync(projects, { recursive: true }).map(String);
    assert.ok(
      transcripts.some((f) => f.endsWith(`${claudeSession}.jsonl`)),
      `${transcripts}`,
    );
    const claudeDistillers = claudeAsk.map(requestSession);
    assert.equal(claudeDistillers.length, 1);
    assert.ok(!transcripts.some((f) => f.includes(claudeDistillers[0]!)), `${transcripts}`);
    // No second distiller: every distiller that ran was started by a user session's hook.
    const log = hookLog();
    const started = new Set(startedDistillers());
    const ran = log.filter((l) => l.event === 'distill');
    assert.ok(ran.length >= 2);
    for (const l of ran) {
      assert.ok(started.has(String((l as { pid?: number }).pid)), `distiller ${JSON.stringify(l)}`);
      assert.ok(!distillerIds.includes(l.session), 'a distiller session is never distilled');
    }
  });

  it('mneme doctor passes on this setup', () => {
    const r = mneme(['doctor', '--json']);
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      checks: { check: string; status: string; detail: string }[];
    };
    const failed = report.checks.filter((c) => c.status === 'fail');
    assert.deepEqual(failed, []);
    assert.equal(r.code, 0);
  });

  it('mneme doctor fails, naming both stores, when the MCP entry’s store differs from the hooks’', () => {
    const file = path.join(home, '.claude.json');
    const original = fs.readFileSync(file, 'utf8');
    const other = path.join(tmp, 'other-store');
    try {
      const doc = JSON.parse(original);
      doc.mcpServers.mneme.env = { MNEME_HOME: other };
      fs.writeFileSync(file, JSON.stringify(doc, null, 2));
      const r = mneme(['doctor', '--json']);
      assert.notEqual(r.code, 0);
      const report = JSON.parse(r.stdout) as {
        checks: { check: string; status: string; detail: string }[];
      };
      const fail = report.checks.find((c) => c.status === 'fail' && c.detail.includes(other));
      assert.ok(fail, JSON.stringify(report.checks));
      assert.equal(fail.check, 'claude-code stores');
      assert.ok(fail.detail.includes(path.join(home, '.mneme')), fail.detail);
      // The MCP entry really ran with that environment: it answered status from the other store.
      const mcp = report.checks.find((c) => c.check === 'claude-code mcp');
      assert.equal(mcp?.status, 'ok', JSON.stringify(mcp));
      assert.ok(mcp.detail.includes(`store ${other}`), mcp.detail);
      // In the same run Codex, whose entry was not touched, still agrees with its hooks.
      const codexStores = report.checks.find((c) => c.check === 'codex stores');
      assert.equal(codexStores?.status, 'ok', JSON.stringify(codexStores));
    } finally {
      fs.writeFileSync(file, original);
    }
  });

  it('after the real `codex mcp add` rewrites config.toml, setup repoints and uninstall removes mneme’s entry', () => {
    const toml = path.join(home, '.codex', 'config.toml');
    // An entry with env, as `mneme --store DIR setup codex` writes it: Codex moves env into a
    // sub-table when it rewrites the file.
    const store = path.join(tmp, 'store-b');
    assert.equal(mneme(['--store', store, 'setup', 'codex']).code, 0);
    const add = run(bin('codex'), ['mcp', 'add', 'other', '--', 'node', '/opt/other.js'], repo);
    assert.equal(add.code, 0, add.stderr);
    const rewritten = fs.readFileSync(toml, 'utf8');
    assert.match(rewritten, /\[mcp_servers\.mneme\.env\]/, 'Codex rewrote env as a sub-table');
    assert.match(rewritten, /\[mcp_servers\.other\]/);
    const again = mneme(['setup', 'codex', '--json']);
    assert.equal(again.code, 0, again.stderr);
    const repointed = fs.readFileSync(toml, 'utf8');
    assert.doesNotMatch(repointed, /store-b/, 'the entry points at the default store again');
    const list = run(bin('codex'), ['mcp', 'list', '--json'], repo);
    const names = (JSON.parse(list.stdout) as { name: string }[]).map((s) => s.name).sort();
    assert.deepEqual(names, ['mneme', 'other']);
    const off = mneme(['setup', 'codex', '--uninstall', '--json']);
    assert.equal(off.code, 0, off.stderr);
    const after = JSON.parse(run(bin('codex'), ['mcp', 'list', '--json'], repo).stdout) as {
      name: string;
    }[];
    assert.deepEqual(
      after.map((s) => s.name),
      ['other'],
    );
    assert.match(fs.readFileSync(toml, 'utf8'), /^# the e2e test’s own settings/);
    assert.ok(!fs.existsSync(path.join(home, '.codex', 'hooks.json')));
  });
});
