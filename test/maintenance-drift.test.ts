// Source drift (issue 5 part 1): a memory bound to a file is served and injected while the file
// is unchanged; once the file changes or disappears it is withheld from injection and labelled
// in recall until revalidated. Each withheld memory is paired with a sibling bound to another
// file that stays served, in the same fixture.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { SchemaRegistry } from '../src/core/schema.js';
import { Engine } from '../src/engine/engine.js';
import { FileStore } from '../src/store/files/file-store.js';
import { projectFiles } from '../src/surfaces/source-files.js';
import { AGENT, HUMAN, PROJECT_A, cli, gitRepo, testClock, tmpDir } from './helpers.js';

async function fixture() {
  const repo = gitRepo(null);
  fs.mkdirSync(path.join(repo, 'src'));
  fs.writeFileSync(
    path.join(repo, 'src', 'pay.ts'),
    'export function charge(n: number) {\n  return n * 2;\n}\n',
  );
  fs.writeFileSync(path.join(repo, 'src', 'ship.ts'), 'export const route = "north";\n');
  fs.writeFileSync(path.join(repo, 'README.md'), '# Usage\n\nRun it.\n');
  const store = await FileStore.open(tmpDir(), { durable: false });
  const clock = testClock('2026-03-01T00:00:00.000Z');
  const e = new Engine({
    store,
    clock,
    registry: new SchemaRegistry(),
    binding: { project: PROJECT_A, identity: PROJECT_A },
    surface: 'human',
    files: projectFiles(repo),
  });
  const remember = async (abstract: string, source: string) =>
    (await e.apply([{ op: 'remember', type: 'fact', abstract, source }], AGENT))[0]!;
  const inject = async () =>
    (
      await e.injectSessionStart({
        projectRoot: repo,
        readFile: (p) => (fs.existsSync(p) ? fs.readFileSync(p) : null),
        logUsage: false,
      })
    ).ids;
  const freshness = async (q: string) =>
    Object.fromEntries(
      (await e.recall(q, { logUsage: false })).results.map((r) => [r.id, r.freshness]),
    );
  return { repo, store, clock, e, remember, inject, freshness };
}

describe('source binding and drift', () => {
  it('binds path#symbol with the engine-computed hash and verified trust; refuses escapes', async () => {
    const { e, remember } = await fixture();
    const m = await remember('Charging doubles the amount', 'src/pay.ts#charge');
    assert.equal(m.trust, 'verified');
    const v = (await e.read(m.id)) as unknown as {
      source: { path: string; symbol: string; sha256: string };
    };
    assert.equal(v.source.path, 'src/pay.ts');
    assert.equal(v.source.symbol, 'charge');
    assert.match(v.source.sha256, /^[0-9a-f]{64}$/);
    const heading = await remember('The README explains usage', 'README.md#Usage');
    assert.equal(heading.trust, 'verified');
    const unbound = (
      await e.apply([{ op: 'remember', type: 'fact', abstract: 'Unbound fact here' }], AGENT)
    )[0]!;
    assert.equal(unbound.trust, 'claimed');
    for (const bad of [
      '../outside.ts',
      '/etc/passwd',
      'src/../../x',
      '.git/config',
      'src/nope.ts',
      'src/pay.ts#refund',
    ])
      await assert.rejects(
        remember(`bad ${bad}`, bad),
        (err: { code?: string }) => err.code === 'invalid' || err.code === 'refused',
      );
  });

  it('drift withholds from injection and labels recall; revalidate restores; a sibling is untouched', async () => {
    const { repo, e, store, clock, remember, inject, freshness } = await fixture();
    const a = await remember('Charging doubles the amount', 'src/pay.ts#charge');
    const b = await remember('Shipping route is north', 'src/ship.ts');
    assert.deepEqual((await inject()).sort(), [a.id, b.id].sort());
    fs.writeFileSync(
      path.join(repo, 'src', 'pay.ts'),
      'export function charge(n: number) {\n  return n * 3;\n}\n',
    );
    clock.advance(1000);
    const checks = await store.listCurrent([PROJECT_A]);
    assert.equal(checks.length, 2);
    const r = await e.checkSources({ kind: 'system' });
    assert.deepEqual(Object.fromEntries(r.map((x) => [x.id, [x.freshness, x.changed]])), {
      [a.id]: ['drifted', true],
      [b.id]: ['fresh', false],
    });
    assert.deepEqual(await inject(), [b.id]);
    const f = await freshness('charging shipping route amount');
    assert.equal(f[a.id], 'drifted');
    assert.equal(f[b.id], 'fresh');
    // The transition is journaled.
    const log = await e.log({ op: 'check_source' });
    assert.equal(log.length, 1);
    assert.equal((log[0]!.data as { freshness: string }).freshness, 'drifted');
    // Revalidate: a new revision bound to the current content, actor recorded; served again.
    clock.advance(1000);
    const [rv] = await e.apply([{ op: 'revalidate', id: a.id }], HUMAN);
    assert.equal(rv!.rev, 2);
    const h = await e.history(a.id);
    assert.equal(h.revisions[1]!.actor.kind, 'human');
    assert.equal(h.revisions[1]!.op, 'revalidate');
    assert.deepEqual((await inject()).sort(), [a.id, b.id].sort());
    assert.equal((await freshness('charging amount'))[a.id], 'fresh');
  });

  it('before an edit: the memories bound to that file and the constraints whose globs match it, no others', async () => {
    const { repo, e, remember } = await fixture();
    const pay = await remember('Charging doubles the amount', 'src/pay.ts#charge');
    const ship = await remember('Shipping route is north', 'src/ship.ts');
    const rule = async (abstract: string, applies_to?: string[]) =>
      (
        await e.apply(
          [{ op: 'remember', type: 'constraint', abstract, ...(applies_to ? { applies_to } : {}) }],
          AGENT,
        )
      )[0]!;
    const src = await rule('Source files are strict TypeScript', ['src/**']);
    const docs = await rule('Docs are written in British English', ['docs/**']);
    const everywhere = await rule('Commits are signed');
    const opts = {
      projectRoot: repo,
      readFile: (p: string) => (fs.existsSync(p) ? fs.readFileSync(p) : null),
      logUsage: false,
    };
    const ids = (await e.injectFile('src/pay.ts', opts)).ids;
    assert.deepEqual([...ids].sort(), [pay.id, src.id].sort());
    for (const other of [ship.id, docs.id, everywhere.id]) assert.ok(!ids.includes(other));
    const forShip = (await e.injectFile('src/ship.ts', opts)).ids;
    assert.deepEqual([...forShip].sort(), [ship.id, src.id].sort());
  });

  it('deleting the source reaches every memory derived from it; a sibling from another file stays', async () => {
    const { repo, e, remember, inject, freshness } = await fixture();
    const a1 = await remember('Charging doubles the amount', 'src/pay.ts#charge');
    const a2 = await remember('Pay module exports charge', 'src/pay.ts');
    const b = await remember('Shipping route is north', 'src/ship.ts');
    fs.rmSync(path.join(repo, 'src', 'pay.ts'));
    const r = await cliless(e);
    assert.deepEqual(r, { [a1.id]: 'missing', [a2.id]: 'missing', [b.id]: 'fresh' });
    assert.deepEqual(await inject(), [b.id]);
    const f = await freshness('charging pay shipping');
    assert.equal(f[a1.id], 'missing');
    assert.equal(f[b.id], 'fresh');
    // A missing source cannot be revalidated until it is back (or the memory is retracted).
    await assert.rejects(
      e.apply([{ op: 'revalidate', id: a1.id }], HUMAN),
      /not a readable regular file/,
    );
    await e.apply([{ op: 'retract', id: a2.id, reason: 'source deleted' }], HUMAN);
    assert.deepEqual(await inject(), [b.id]);
  });

  it('recall re-checks its shortlist: an edited file is labelled drifted without check-sources', async () => {
    const { repo, e, remember, freshness, inject } = await fixture();
    const a = await remember('Charging doubles the amount', 'src/pay.ts#charge');
    const b = await remember('Shipping route is north', 'src/ship.ts');
    fs.writeFileSync(path.join(repo, 'src', 'pay.ts'), 'export function bill() {}\n');
    const f = await freshness('charging amount shipping');
    assert.equal(f[a.id], 'drifted');
    assert.equal(f[b.id], 'fresh');
    assert.equal((await e.log({ op: 'check_source' })).length, 1);
    // The persisted verdict holds even for a reader that cannot see the files.
    const ids = (await e.injectSessionStart({ projectRoot: null, logUsage: false })).ids;
    assert.ok(!ids.includes(a.id));
    assert.deepEqual(await inject(), [b.id]);
  });

  it('the CLI binds --source, labels recall --json freshness, check-sources and revalidate', () => {
    const home = tmpDir();
    const repo = gitRepo('https://example.com/acme/drift.git');
    fs.writeFileSync(path.join(repo, 'notes.md'), '# Deploy\n\nUse blue-green.\n');
    fs.writeFileSync(path.join(repo, 'other.md'), '# Other\n');
    const rem = (abs: string, src: string) =>
      cli(['--json', 'remember', '--type', 'fact', '--abstract', abs, '--source', src], {
        home,
        cwd: repo,
      });
    const a = rem('Deploys use blue-green', 'notes.md#Deploy');
    assert.equal(a.code, 0, a.stderr);
    assert.equal(a.json().trust, 'verified');
    const b = rem('Other notes exist', 'other.md');
    fs.writeFileSync(path.join(repo, 'notes.md'), '# Release\n\nUse canary.\n');
    const chk = cli(['--json', 'check-sources'], { home, cwd: repo });
    assert.equal(chk.code, 0, chk.stderr);
    const rec = cli(['--json', 'recall', 'deploys', 'notes', 'blue', 'other'], {
      home,
      cwd: repo,
    }).json();
    const fr = Object.fromEntries(
      rec.results.map((r: { id: string; freshness: string }) => [r.id, r.freshness]),
    );
    assert.equal(fr[a.json().id], 'drifted');
    assert.equal(fr[b.json().id], 'fresh');
    const rv = cli(['--json', 'revalidate', a.json().id, '--source', 'notes.md#Release'], {
      home,
      cwd: repo,
    });
    assert.equal(rv.code, 0, rv.stderr);
    const rec2 = cli(['--json', 'recall', 'deploys', 'blue'], { home, cwd: repo }).json();
    assert.equal(rec2.results[0].freshness, 'fresh');
  });
});

async function cliless(e: Engine) {
  const r = await e.checkSources({ kind: 'system' });
  return Object.fromEntries(r.map((x) => [x.id, x.freshness]));
}
