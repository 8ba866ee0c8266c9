// The prompt hook fires once `mneme setup claude-code --prompt-hook` installed it: the
// UserPromptSubmit command setup wrote, run as Claude Code runs it (through the shell, the
// payload on stdin, no MNEME_PROMPT_HOOK in the environment), injects the memory a prompt is
// about on a three-memory store, and injects nothing for a prompt that shares one word with it
// (below the default floor). `hooks.prompt = false` in config.toml turns it off again, and the
// hook log says how to turn it back on.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { PROMPT_RECALL } from '../src/engine/inject.js';
import { mnemeBin } from '../src/surfaces/install-root.js';
import { contextOf } from './hook-helpers.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-prompt-hook-'));
const home = path.join(tmp, 'home');
const store = path.join(tmp, 'store');
const state = path.join(tmp, 'state');
const repo = path.join(tmp, 'repo');
fs.mkdirSync(home);
fs.mkdirSync(path.join(repo, '.git'), { recursive: true });
fs.writeFileSync(
  path.join(repo, '.git', 'config'),
  '[remote "origin"]\n\turl = git@github.com:acme/prompt.git\n',
);
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A person's shell: no agent markers, no MNEME_* but the store. */
const env: NodeJS.ProcessEnv = {
  PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
  HOME: home,
  MNEME_HOME: store,
  MNEME_DURABLE: '0',
  XDG_STATE_HOME: state,
};

function mneme(args: string[]) {
  const r = spawnSync(process.execPath, [mnemeBin(), ...args], {
    cwd: repo,
    env,
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr + r.stdout);
  return r.stdout;
}

/** The UserPromptSubmit command in ~/.claude/settings.json, as setup wrote it. */
function installedCommand(): string {
  const settings = JSON.parse(fs.readFileSync(path.join(home, '.claude', 'settings.json'), 'utf8'));
  const groups = (settings.hooks?.UserPromptSubmit ?? []) as { hooks: { command: string }[] }[];
  const cmd = groups
    .flatMap((g) => g.hooks)
    .find((h) => / hook user-prompt-submit/.test(h.command));
  assert.ok(cmd, 'setup --prompt-hook installed the UserPromptSubmit hook');
  return cmd.command;
}

/** The hook as the host runs it: the command through the shell, the payload on stdin. */
function prompt(command: string, text: string): string {
  const payload = {
    session_id: 'prompt-hook-test',
    transcript_path: '',
    cwd: repo,
    hook_event_name: 'UserPromptSubmit',
    prompt: text,
  };
  const r = spawnSync('/bin/sh', ['-c', command], {
    cwd: repo,
    env,
    input: JSON.stringify(payload),
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  return contextOf(r.stdout);
}

/** The hook log's last user-prompt-submit record (<store>/.state/hooks.log). */
const lastLog = (): Record<string, unknown> => {
  const lines = fs
    .readFileSync(path.join(store, '.state', 'hooks.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => r.event === 'user-prompt-submit');
  return lines[lines.length - 1] ?? {};
};

describe('the prompt hook after setup --prompt-hook', () => {
  it('injects what the prompt is about on a small store, and not what it only brushes', () => {
    const invoices = JSON.parse(
      mneme([
        'remember',
        '--type',
        'decision',
        '--abstract',
        'Invoices are numbered per tenant with a yearly prefix',
        '--json',
      ]),
    ).id as string;
    mneme([
      'remember',
      '--type',
      'fact',
      '--abstract',
      'The staging database is reset on Mondays',
      '--json',
    ]);
    mneme(['remember', '--type', 'fact', '--abstract', 'Frontend builds use Vite', '--json']);
    mneme(['setup', 'claude-code', '--user', '--prompt-hook']);
    const command = installedCommand();

    const about = prompt(command, 'How are invoices numbered for each tenant?');
    assert.ok(about.includes(invoices), `the block names the invoices decision:\n${about}`);
    assert.match(about, /Invoices are numbered per tenant/);
    // One word in common ("tenant") among many others: under the floor, nothing injected.
    const brushes = prompt(
      command,
      'Please rename the tenant column in the signup form and fix the flaky login test',
    );
    assert.equal(brushes, '', `nothing is injected for a prompt it only brushes:\n${brushes}`);
    assert.ok(PROMPT_RECALL.scoreFloor > 0 && PROMPT_RECALL.scoreFloor < 1);
  });

  it('hooks.prompt = false turns it off, and the log says how to turn it on', () => {
    const command = installedCommand();
    fs.writeFileSync(path.join(store, 'config.toml'), '[hooks]\nprompt = false\n');
    try {
      assert.equal(prompt(command, 'How are invoices numbered for each tenant?'), '');
      const rec = lastLog();
      assert.equal(rec.outcome, 'disabled');
      assert.match(JSON.stringify(rec.detail), /hooks\.prompt is false/);
    } finally {
      fs.rmSync(path.join(store, 'config.toml'));
    }
    assert.notEqual(prompt(command, 'How are invoices numbered for each tenant?'), '');
  });
});
