// One injection, in the engine: the hooks (a whole `mneme hook` process) and the engine's own
// inject operations, on an engine from the composition root as MCP and the HTTP server get
// theirs, give the same block for the same store — at session start, before an edit and for a
// prompt — and both withhold a source-bound memory once its file has changed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Engine, InjectOptions } from '../src/engine/engine.js';
import { openEngine } from '../src/surfaces/compose.js';
import { contextOf, makeWorld, type World } from './hook-helpers.js';

describe('hook injection and the engine inject operations agree', () => {
  let w: World;
  let proj: string;
  let engine: Engine;
  const ids: Record<string, string> = {};
  // What a surface supplies of its own: where the project is and how to read its files.
  let where: InjectOptions;

  before(async () => {
    w = makeWorld();
    proj = w.project('ledger', 'git@github.com:acme/ledger.git');
    fs.mkdirSync(path.join(proj, 'src'));
    fs.writeFileSync(path.join(proj, 'src', 'pay.ts'), 'export const charge = (n) => n * 2;\n');
    const remember = (name: string, args: string[]) => {
      ids[name] = w.json<{ id: string }>(['remember', ...args], proj).id;
    };
    remember('fact', ['--type', 'fact', '--abstract', 'Invoices are numbered per tenant']);
    remember('bound', [
      '--type',
      'fact',
      '--abstract',
      'Charging doubles the amount',
      '--source',
      'src/pay.ts',
    ]);
    remember('rule', [
      '--type',
      'constraint',
      '--abstract',
      'Payment code never logs card numbers',
      '--applies-to',
      'src/**',
    ]);
    remember('global', ['--type', 'preference', '--abstract', 'Answers are short', '--global']);
    engine = await openEngine({ store: w.home, cwd: proj, surface: 'agent', env: w.env });
    where = {
      projectRoot: proj,
      readFile: (abs) => (fs.existsSync(abs) ? fs.readFileSync(abs) : null),
      logUsage: false,
    };
  });
  after(async () => {
    await engine.close();
    w.cleanup();
  });

  const sessionStart = () =>
    contextOf(
      w.hook(
        'session-start',
        w.payload('session-start.json', { SESSION: 's1', TRANSCRIPT: '', CWD: proj }),
        proj,
      ).stdout,
    );
  const preEdit = (file: string) =>
    contextOf(
      w.hook(
        'pre-tool-use',
        w.payload('pre-tool-use.json', { SESSION: 's1', TRANSCRIPT: '', CWD: proj, FILE: file }),
        proj,
      ).stdout,
    );

  it('at session start: the same block, the bound memory in it while its file is unchanged', async () => {
    const hook = sessionStart();
    assert.ok(hook.includes(ids.fact!) && hook.includes(ids.bound!) && hook.includes(ids.global!));
    assert.equal((await engine.injectSessionStart(where)).text, hook);
  });

  it('before an edit: the same block for the file', async () => {
    const file = path.join(proj, 'src', 'pay.ts');
    const hook = preEdit(file);
    assert.ok(hook.includes(ids.rule!) && hook.includes(ids.bound!));
    assert.equal((await engine.injectFile(file, where)).text, hook);
  });

  it('for a prompt: the same recalled block', async () => {
    const payload = JSON.stringify({
      session_id: 's1',
      transcript_path: '',
      cwd: proj,
      hook_event_name: 'UserPromptSubmit',
      prompt: 'how are invoices numbered per tenant?',
    });
    const hook = contextOf(
      w.hook('user-prompt-submit', payload, proj, { MNEME_PROMPT_HOOK: '1' }).stdout,
    );
    assert.ok(hook.includes(ids.fact!), hook);
    const res = await engine.injectPrompt('how are invoices numbered per tenant?', where);
    assert.equal(res.text, hook);
  });

  it('after the bound file changes both withhold it, and both still inject the rest', async () => {
    fs.writeFileSync(path.join(proj, 'src', 'pay.ts'), 'export const charge = (n) => n * 3;\n');
    const hook = sessionStart();
    assert.ok(!hook.includes(ids.bound!), 'the drifted memory is withheld by the hook');
    assert.ok(hook.includes(ids.fact!), 'the others are still injected');
    assert.equal((await engine.injectSessionStart(where)).text, hook);
    const file = path.join(proj, 'src', 'pay.ts');
    const edit = preEdit(file);
    assert.ok(!edit.includes(ids.bound!) && edit.includes(ids.rule!));
    assert.equal((await engine.injectFile(file, where)).text, edit);
  });
});
