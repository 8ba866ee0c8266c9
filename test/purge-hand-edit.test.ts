// A purged value written back into a memory file by hand (files store): a new file under
// memories/ and an edit of another memory's file. The next rebuild or write that picks up hand
// edits must not bring the value back as a memory anyone is served — the purge tombstone
// refuses it, and the refusal is journaled — while a hand edit of another value in the same
// run is picked up as usual (the positive control).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { terminal } from './helpers.js';
import { makeWorld, type World } from './hook-helpers.js';

const SECRET = 'Rk4tangelo9902Vm';
const ABSTRACT = `The deploy webhook secret is ${SECRET}`;

describe('a purged value written back by hand (files store)', () => {
  let w: World;
  let repo = '';
  let id = '';
  let neighbour = '';
  let other = '';
  const json = <T = Record<string, unknown>>(args: string[]): T => {
    const r = w.cli(['--json', ...args], { cwd: repo });
    if (r.code !== 0) throw new Error(`mneme ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };
  const fileOf = (mem: string) => {
    let found = '';
    const walk = (d: string) => {
      for (const n of fs.readdirSync(d)) {
        const f = path.join(d, n);
        if (fs.statSync(f).isDirectory()) walk(f);
        else if (fs.readFileSync(f, 'utf8').includes(`\nid: ${mem}\n`)) found = f;
      }
    };
    walk(path.join(w.home, 'memories'));
    return found;
  };
  before(() => {
    w = makeWorld();
    repo = w.project('shop', 'git@github.com:acme/shop.git');
    id = json<{ id: string }>(['remember', '--type', 'fact', '--abstract', ABSTRACT]).id;
    neighbour = json<{ id: string }>([
      'remember',
      '--type',
      'fact',
      '--abstract',
      'The deploy webhook posts to the ops channel',
    ]).id;
    other = json<{ id: string }>([
      'remember',
      '--type',
      'fact',
      '--abstract',
      'The deploy runs at noon',
    ]).id;
  });
  after(() => w.cleanup());

  it('a restored file, a new file and an edit holding it are refused (journaled); another edit is picked up', () => {
    const env: NodeJS.ProcessEnv = { ...w.env };
    for (const k of ['CLAUDECODE', 'CLAUDE_CODE_ENTRYPOINT', 'MNEME_AGENT', 'CODEX_SANDBOX'])
      delete env[k];
    const purgedFile = fileOf(id);
    const saved = fs.readFileSync(purgedFile, 'utf8');
    const p = terminal(['purge'], ['purge', id, '--reason', 'leaked webhook secret'], {
      cwd: repo,
      env,
    });
    assert.equal(p.code, 0, p.out);
    assert.equal(fs.existsSync(purgedFile), false);
    // By hand: the purged memory's file restored from a backup; a new file holding the value
    // (no id); the neighbour's file edited to hold the key inside another sentence; and a plain
    // edit of another memory (the control).
    fs.writeFileSync(purgedFile, saved);
    const dir = path.dirname(purgedFile);
    fs.writeFileSync(path.join(dir, 'restored.md'), saved.replace(/\nid: .*\n/, '\n'));
    const nf = fileOf(neighbour);
    fs.writeFileSync(
      nf,
      fs.readFileSync(nf, 'utf8').replace('posts to the ops channel', `signs with ${SECRET}`),
    );
    const of = fileOf(other);
    fs.writeFileSync(of, fs.readFileSync(of, 'utf8').replace('at noon', 'at three'));
    for (const round of [1, 2]) {
      const r = json<{ handEdits: { id: string | null; ok: boolean; message?: string }[] }>([
        'rebuild',
      ]);
      const by = (m: string | null) => r.handEdits.find((h) => h.id === m);
      if (round === 1) assert.equal(by(other)?.ok, true, JSON.stringify(r.handEdits));
      assert.equal(by(neighbour)?.ok, false);
      assert.match(by(neighbour)!.message!, /a value a person purged .*: leaked webhook secret/);
      assert.equal(by(id)?.ok, false);
      assert.match(by(id)!.message!, /is purged/);
      assert.equal(by(null)?.ok, false);
    }
    // The control is served with its edit; nothing anyone is served holds the value.
    const o = json<{ abstract: string; actor: { kind: string } }>(['read', other]);
    assert.equal(o.abstract, 'The deploy runs at three');
    assert.equal(o.actor.kind, 'external');
    assert.equal(
      json<{ abstract: string }>(['read', neighbour]).abstract,
      'The deploy webhook posts to the ops channel',
    );
    for (const args of [
      ['recall', 'deploy webhook secret'],
      ['read', id],
      ['history', id],
      ['history', neighbour],
      ['trace', neighbour],
    ])
      assert.doesNotMatch(
        JSON.stringify(json(args)).toLowerCase(),
        new RegExp(SECRET.toLowerCase()),
        args.join(' '),
      );
    assert.deepEqual(json<{ results: unknown[] }>(['recall', SECRET]).results, []);
    // A write over the edited file picks the edit up too, and is refused the same way.
    const c = w.cli(
      ['correct', neighbour, '--abstract', 'The webhook posts to ops', '--reason', 'x'],
      {
        cwd: repo,
      },
    );
    assert.notEqual(c.code, 0);
    assert.match(c.stderr, /a value a person purged/);
    // Journaled: the refusals are entries, and the journal (which holds none of the value) verifies.
    const jdir = path.join(w.home, 'journal');
    const raw = fs
      .readdirSync(jdir)
      .filter((n) => n.endsWith('.jsonl'))
      .map((n) => fs.readFileSync(path.join(jdir, n), 'utf8'))
      .join('\n');
    const entries = raw
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { op: string; target?: { id: string } | null });
    assert.ok(
      entries.some((e) => e.op === 'refuse' && e.target?.id === neighbour),
      entries.map((e) => e.op).join(', '),
    );
    assert.doesNotMatch(raw.toLowerCase(), new RegExp(SECRET.toLowerCase()));
    assert.equal(json<{ ok: boolean }>(['journal', 'verify']).ok, true);
  });
});
