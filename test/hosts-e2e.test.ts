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
import { startFakeModel, type FakeModel, type Recorded } from './fake-model-api.js';
import { FAKE_EXECUTOR, REPO } from './hook-helpers.js';

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
const REMOTE = 'https://example.com/acme/alpha.git';

let tmp: string;
let home: string;
let repo: string;
let otherRepo: string;
let fakeDir: string;
let model: FakeModel;
let env: NodeJS.ProcessEnv;
let memId = '';
let constraintId = '';

interface HookLine {
  event: string;
  host: string;
  session: string;
  outcome: string;
  detail?: Record<string, unknown>;
}
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
      'Write,Edit',
    ],
    cwd,
  );
const codex = (prompt: string, cwd: string) =>
  host(bin('codex'), ['exec', '--json', '--sandbox', 'danger-full-access', prompt], cwd);

/** Every request the fake model got since `from`, as JSON text, for "does the model see it". */
const seen = (from: number, wire: Recorded['wire']) =>
  model.requests.slice(from).filter((r) => r.wire === wire);

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
    fakeDir = path.join(tmp, 'executor');
    fs.mkdirSync(fakeDir, { recursive: true });
    fs.mkdirSync(path.join(home, '.codex'), { recursive: true });
    gitRepo(repo, REMOTE);
    gitRepo(otherRepo, 'https://example.com/acme/beta.git');
    model = await startFakeModel();
    env = {
      PATH: [path.join(PREFIX, 'bin'), path.dirname(process.execPath), '/usr/bin', '/bin'].join(
        path.delimiter,
      ),
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
      // The distiller's command executor (test/fixtures/fake-executor.mjs) writes here.
      FAKE_DIR: fakeDir,
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
    // The distiller runs a command executor in this test, for both hosts.
    fs.mkdirSync(path.join(home, '.mneme'), { recursive: true });
    fs.writeFileSync(
      path.join(home, '.mneme', 'config.toml'),
      `[distill]\nexecutor = "command"\ncommand = ${JSON.stringify(`${process.execPath} ${FAKE_EXECUTOR}`)}\n`,
    );
  });
  after(async () => {
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
    model.brain = () => ({ text: 'nothing to do' });
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
    model.brain = (body) => {
      const input = body.input as { type: string; output?: string }[];
      const has = (t: string) => input.some((i) => i.type === t);
      if (!has('tool_search_output'))
        return {
          item: {
            type: 'tool_search_call',
            execution: 'client',
            status: 'completed',
            arguments: { query: 'mneme remember decision' },
          },
        };
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
    };
    const r = await codex('add an invoice total', repo);
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { item?: Record<string, unknown> });
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

  it('a later Claude Code session in that repository gets it at SessionStart and before a Write', async () => {
    const from = model.requests.length;
    const target = path.join(repo, 'src', 'billing', 'total.ts');
    let tools: string[] = [];
    model.brain = (body) => {
      const messages = body.messages as { content: unknown }[];
      tools = ((body.tools as { name: string }[] | undefined) ?? []).map((t) => t.name);
      if (!JSON.stringify(messages).includes('tool_result'))
        return {
          tool: 'Write',
          input: { file_path: target, content: 'export const cents = 0;\n' },
        };
      return { text: `Written; rounding per [mem:${memId}].` };
    };
    const r = await claude('write the billing total', repo);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const asked = seen(from, 'anthropic').filter((q) => Array.isArray(q.body.tools));
    assert.ok(asked.length >= 2, 'a tool call and the answer after it');
    assert.ok(asked[0]!.text.includes(DECISION), 'the first request holds the SessionStart block');
    assert.ok(asked.at(-1)!.text.includes('(for src/billing/total.ts)'), 'PreToolUse on Write');
    assert.equal(fs.readFileSync(target, 'utf8'), 'export const cents = 0;\n');
    for (const t of ['Edit', 'Write', 'NotebookEdit'])
      assert.ok(tools.includes(t), `Claude Code has the tool the matcher names: ${t}`);
    assert.ok(!tools.includes('MultiEdit'), 'and no longer has MultiEdit');
  });

  it('a session in a repository with another remote does not get it', async () => {
    const from = model.requests.length;
    model.brain = () => ({ text: 'nothing here' });
    const r = await claude('hello', otherRepo);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const asked = seen(from, 'anthropic');
    assert.ok(asked.length >= 1);
    assert.ok(asked.every((q) => !q.text.includes(DECISION)));
    assert.ok(!asked.some((q) => q.text.includes(memId)));
  });

  it('Stop and SessionEnd archive each host’s session, count the citation and start the distiller, whose run fires no hooks', async () => {
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
    // The command executor ran, with hooks disabled for anything it starts.
    const invocations = path.join(fakeDir, 'invocations.log');
    for (let i = 0; i < 100 && !fs.existsSync(invocations); i++)
      await new Promise((r) => setTimeout(r, 100));
    const runs = fs.readFileSync(invocations, 'utf8').trim().split('\n');
    assert.ok(runs.length >= 1, 'the distiller ran its executor');
    for (const line of runs) assert.match(line, / 1$/, `MNEME_HOOKS_DISABLED=1 in ${line}`);
    const prompts = fs
      .readdirSync(fakeDir)
      .filter((f) => f.startsWith('prompt-'))
      .map((f) => fs.readFileSync(path.join(fakeDir, f), 'utf8'))
      .join('\n');
    assert.ok(prompts.includes('add an invoice total'), 'the Codex session was distilled');
    assert.ok(prompts.includes('write the billing total'), 'the Claude Code session was distilled');
  });

  it.todo(
    'the distiller follows the host: `codex exec` for a Codex session, `claude -p` for Claude Code (i16-doctor item 5 adds the per-host executor setting; assert it here at merge)',
  );

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
