// Issue 16 items 4 and 5, through the real hook command and the real distiller as child
// processes. The executor follows the session's host: stand-in `claude` and `codex` programs
// on PATH record how they were started, so a Codex session's Stop hook runs `codex exec` and a
// Claude Code session's runs `claude -p`; per-host keys (file or environment) and the off switch
// change that, and `mneme distill --status` shows each host's executor, the caps and today's
// spend. A model session the distiller starts fires mneme's hooks as a host would: they leave no
// line in the hook status, archive nothing and start no second distiller — while the very same
// hook commands, run outside the distiller, do all of that.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BIN, makeWorld, waitFor, type World } from './hook-helpers.js';

const codexLine = (role: string, text: string) =>
  JSON.stringify({
    type: 'response_item',
    payload: {
      type: 'message',
      role,
      content: [{ type: role === 'user' ? 'input_text' : 'output_text', text }],
    },
  });

/** A stand-in host CLI: records its name, arguments and mark, reads the prompt, answers skip. */
function standIn(dir: string, name: string) {
  const file = path.join(dir, name);
  fs.writeFileSync(
    file,
    `#!/bin/sh
cat > /dev/null
echo "${name} $* mark=$MNEME_DISTILLER_SESSION" >> "$FAKE_DIR/hosts.log"
echo '{"op":"skip"}'
`,
  );
  fs.chmodSync(file, 0o755);
}

describe('the distiller runs the CLI of the host that produced the session', () => {
  let w: World;
  let repo: string;
  let bin: string;
  let env: NodeJS.ProcessEnv;
  const hostsLog = () =>
    fs.existsSync(path.join(w.fake, 'hosts.log'))
      ? fs.readFileSync(path.join(w.fake, 'hosts.log'), 'utf8').trim().split('\n')
      : [];

  before(() => {
    w = makeWorld();
    repo = w.project('repo', 'git@github.com:acme/hosted.git');
    bin = path.join(w.dir, 'bin');
    fs.mkdirSync(bin);
    standIn(bin, 'claude');
    standIn(bin, 'codex');
    // The default executor choice (distill.executor = host), the stand-ins first on PATH.
    env = { PATH: `${bin}${path.delimiter}${process.env.PATH}`, MNEME_DISTILL_EXECUTOR: '' };
  });
  after(() => w.cleanup());

  const transcript = (name: string, lines: string[]) => {
    const f = path.join(w.dir, `${name}.jsonl`);
    fs.writeFileSync(f, `${lines.join('\n')}\n`);
    return f;
  };
  const stop = (host: string, session: string, file: string, extra: NodeJS.ProcessEnv = {}) =>
    w.cli(['hook', 'stop', '--host', host], {
      cwd: repo,
      input: JSON.stringify({ session_id: session, transcript_path: file, cwd: repo }),
      env: { ...env, ...extra },
    });
  const distilled = (session: string) =>
    w.hookLog().find((e) => e.event === 'distill' && e.session === session);

  it('a Codex session is distilled by `codex exec`, a Claude Code session by `claude -p`', async () => {
    const cx = transcript('codex-1', [
      codexLine('user', 'We deploy the billing service with blue-green switches.'),
      codexLine('assistant', 'Noted: blue-green deploys for billing.'),
    ]);
    assert.equal(stop('codex', 'cx-1', cx).code, 0);
    const cc = transcript('claude-1', [
      JSON.stringify({ type: 'user', message: { role: 'user', content: 'Use pnpm, not npm.' } }),
      JSON.stringify({
        type: 'assistant',
        message: { role: 'assistant', content: [{ type: 'text', text: 'Will use pnpm.' }] },
      }),
    ]);
    assert.equal(stop('claude-code', 'cc-1', cc).code, 0);
    const cxRun = await waitFor('the Codex session distilled', () => distilled('cx-1'));
    const ccRun = await waitFor('the Claude Code session distilled', () => distilled('cc-1'));
    assert.equal(cxRun.outcome, 'distilled', JSON.stringify(cxRun));
    assert.equal(ccRun.outcome, 'distilled', JSON.stringify(ccRun));
    const log = hostsLog();
    assert.deepEqual(
      log.map((l) => l.split(' ')[0]).sort(),
      ['claude', 'codex'],
      `one run each: ${log.join(' | ')}`,
    );
    assert.match(
      log.find((l) => l.startsWith('codex '))!,
      /^codex exec --sandbox read-only .* - mark=1$/,
    );
    assert.match(
      log.find((l) => l.startsWith('claude '))!,
      /^claude -p --tools {2}--strict-mcp-config .*mark=1$/,
    );
  });

  it('the per-host key and the off switch decide; the hook says the distiller is off', async () => {
    const before = hostsLog().length;
    const cx = transcript('codex-2', [codexLine('user', 'The staging cluster is in eu-west-1.')]);
    const r = stop('codex', 'cx-2', cx, { MNEME_DISTILL_CODEX_EXECUTOR: 'off' });
    assert.equal(r.code, 0);
    const rec = w.hookLog().find((e) => e.session === 'cx-2' && e.event === 'stop')!;
    assert.equal(rec.outcome, 'archived', 'the session is still archived');
    assert.match(
      String((rec.detail as { distiller?: string }).distiller),
      /^off: distill\.codex_executor = off \(env MNEME_DISTILL_CODEX_EXECUTOR\)$/,
    );
    // A generic host has no CLI of its own: off by default.
    const g = transcript('generic-1', [
      JSON.stringify({ role: 'user', content: 'Tabs, not spaces.' }),
    ]);
    assert.equal(stop('generic', 'g-1', g).code, 0);
    const grec = w.hookLog().find((e) => e.session === 'g-1' && e.event === 'stop')!;
    assert.match(
      String((grec.detail as { distiller?: string }).distiller),
      /^off: distill\.generic_executor = off \(default\)$/,
    );
    // The twin: the same Codex session with the key set in the store's config.toml to claude.
    fs.writeFileSync(path.join(w.home, 'config.toml'), '[distill]\ncodex_executor = "claude"\n');
    try {
      fs.appendFileSync(cx, `${codexLine('assistant', 'Noted, eu-west-1.')}\n`);
      assert.equal(stop('codex', 'cx-2', cx).code, 0);
      await waitFor('the Codex session distilled by claude', () => distilled('cx-2'));
      assert.deepEqual(
        hostsLog()
          .slice(before)
          .map((l) => l.split(' ')[0]),
        ['claude'],
        'only the executor the file names ran, once',
      );
      // A key the distiller does not read is refused, not ignored: the hook log says which.
      fs.writeFileSync(path.join(w.home, 'config.toml'), '[distill]\ncodex_executr = "claude"\n');
      stop('codex', 'cx-3', cx);
      const bad = w
        .hookLog()
        .filter((e) => e.event === 'stop')
        .at(-1)!;
      assert.equal(bad.outcome, 'error');
      assert.match(
        String(bad.error),
        /unknown key "distill\.codex_executr" \(known in \[distill\]: executor, claude_code_executor, codex_executor/,
      );
    } finally {
      fs.rmSync(path.join(w.home, 'config.toml'));
    }
  });

  it('`mneme distill --status` shows each host’s executor, the caps and today’s spend', () => {
    const r = w.cli(['--json', 'distill', '--status'], { cwd: repo, env });
    assert.equal(r.code, 0, r.stderr);
    const st = JSON.parse(r.stdout) as {
      hosts: { host: string; executor: string; setting: string; found: boolean | null }[];
      caps: { max_runs_per_hour: number };
      usage: {
        runsLastHour: number;
        today: { runs: number; byHost: Record<string, { runs: number }> };
      };
    };
    const by = new Map(st.hosts.map((h) => [h.host, h]));
    assert.equal(by.get('codex')!.executor, 'codex');
    assert.equal(by.get('codex')!.setting, 'distill.codex_executor = codex (default)');
    assert.equal(by.get('codex')!.found, true);
    assert.equal(by.get('claude-code')!.executor, 'claude');
    assert.equal(by.get('generic')!.executor, 'off');
    assert.equal(st.caps.max_runs_per_hour, 20);
    // Three executor runs so far: codex for cx-1, claude for cc-1 and for cx-2.
    assert.equal(st.usage.runsLastHour, 3);
    assert.equal(st.usage.today.runs, 3);
    assert.deepEqual(
      Object.fromEntries(Object.entries(st.usage.today.byHost).map(([h, t]) => [h, t.runs])),
      { codex: 2, 'claude-code': 1 },
    );
    const text = w.cli(['distill', '--status'], { cwd: repo, env }).stdout;
    assert.match(
      text,
      /codex: codex \(distill\.codex_executor = codex \(default\)\), `codex` found/,
    );
    assert.match(
      text,
      /3 of 20 executor runs in the last hour; today \(\d{4}-\d\d-\d\d UTC\) 3 run\(s\)/,
    );
    // One setting for every host wins over the per-host keys.
    const all = JSON.parse(
      w.cli(['--json', 'distill', '--status'], {
        cwd: repo,
        env: { ...env, MNEME_DISTILL_EXECUTOR: 'openai' },
      }).stdout,
    ) as typeof st;
    assert.deepEqual(
      all.hosts.map((h) => `${h.host}=${h.executor}`),
      ['claude-code=openai', 'codex=openai', 'generic=openai'],
    );
  });
});

describe('a session the distiller starts leaves no trace in the hooks', () => {
  let w: World;
  let repo: string;

  before(() => {
    w = makeWorld();
    repo = w.project('repo', 'git@github.com:acme/quiet.git');
  });
  after(() => w.cleanup());

  /**
   * A command executor that behaves like a host CLI: its session starts and stops, firing
   * `mneme hook session-start` and `mneme hook stop` with a transcript of its own, then answers.
   */
  const hostLikeExecutor = () => {
    const script = path.join(w.dir, 'host-like.sh');
    const transcript = path.join(w.dir, 'child.jsonl');
    fs.writeFileSync(
      transcript,
      `${JSON.stringify({ type: 'user', message: { role: 'user', content: 'Summarise these lines.' } })}\n`,
    );
    const payload = (event: string) =>
      JSON.stringify({
        session_id: 'child-sess',
        transcript_path: transcript,
        cwd: repo,
        hook_event_name: event,
      });
    fs.writeFileSync(
      script,
      `#!/bin/sh
cat > /dev/null
echo '${payload('SessionStart')}' | "${process.execPath}" "${BIN}" hook session-start > "$FAKE_DIR/child-start.out"
echo "start=$?" >> "$FAKE_DIR/child.log"
echo '${payload('Stop')}' | "${process.execPath}" "${BIN}" hook stop
echo "stop=$?" >> "$FAKE_DIR/child.log"
echo '{"op":"skip"}'
`,
    );
    fs.chmodSync(script, 0o755);
    return script;
  };

  it('the child session’s hooks run and exit 0, and write no status, archive and distiller', async () => {
    const script = hostLikeExecutor();
    const env = { MNEME_DISTILL_COMMAND: script };
    // Something to inject, so a hook that did run in the child would have printed a block.
    w.json(
      [
        'remember',
        '--type',
        'fact',
        '--abstract',
        'Quiet deploys run at noon',
        '--field',
        'subject=deploys',
      ],
      repo,
    );
    const parent = path.join(w.dir, 'parent.jsonl');
    fs.writeFileSync(
      parent,
      `${JSON.stringify({ type: 'user', message: { role: 'user', content: 'Deploys move to noon.' } })}\n`,
    );
    const r = w.cli(['hook', 'stop'], {
      cwd: repo,
      input: JSON.stringify({ session_id: 'parent-sess', transcript_path: parent, cwd: repo }),
      env,
    });
    assert.equal(r.code, 0);
    // The does: the user's own Stop is in the status, archived, and started the distiller.
    const mine = w.hookLog().find((e) => e.session === 'parent-sess' && e.event === 'stop')!;
    assert.equal(mine.outcome, 'archived');
    assert.match(String((mine.detail as { distiller?: string }).distiller), /^started pid \d+$/);
    await waitFor('the distiller ran', () =>
      w.hookLog().find((e) => e.event === 'distill' && e.session === 'parent-sess'),
    );
    // The child's hooks really ran (as the host would run them) and exited 0 …
    assert.deepEqual(fs.readFileSync(path.join(w.fake, 'child.log'), 'utf8').trim().split('\n'), [
      'start=0',
      'stop=0',
    ]);
    // … but injected nothing, logged nothing, archived nothing and started no distiller.
    assert.equal(fs.readFileSync(path.join(w.fake, 'child-start.out'), 'utf8'), '');
    const log = w.hookLog();
    assert.deepEqual(
      log.filter((e) => e.session === 'child-sess'),
      [],
      'no line from the child session',
    );
    assert.deepEqual(
      log.map((e) => `${e.event}:${e.session}`),
      ['stop:parent-sess', 'distill:parent-sess'],
      'the status holds the user’s Stop and its one distiller run only',
    );
    const pending = JSON.parse(
      w.cli(['--json', 'distill', '--pending', '--dry-run'], { cwd: repo }).stdout,
    ) as {
      reports: { session: string }[];
    };
    assert.ok(
      !pending.reports.some((x) => x.session === 'child-sess'),
      'the child session was not archived',
    );
    assert.ok(
      !fs.existsSync(path.join(w.home, '.state', 'distill', 'claude-code--child-sess.lock')),
    );

    // The twin: the same host-like program run by a person (not by the distiller) fires the
    // same hook commands, and they inject, log, archive and start a distiller.
    fs.rmSync(path.join(w.fake, 'child.log'));
    const own = spawnSync('/bin/sh', [script], {
      cwd: repo,
      env: w.env,
      input: '',
      encoding: 'utf8',
    });
    assert.equal(own.status, 0, own.stderr);
    assert.match(
      fs.readFileSync(path.join(w.fake, 'child-start.out'), 'utf8'),
      /Quiet deploys run at noon/,
    );
    const after = w.hookLog().filter((e) => e.session === 'child-sess');
    assert.deepEqual(
      after.map((e) => `${e.event}:${e.outcome}`),
      ['session-start:injected', 'stop:archived'],
    );
    assert.match(
      String((after[1]!.detail as { distiller?: string }).distiller),
      /^started pid \d+$/,
    );
    await waitFor('the child session distilled when run by hand', () =>
      w.hookLog().find((e) => e.event === 'distill' && e.session === 'child-sess'),
    );
  });
});
