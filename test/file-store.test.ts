// The embedded store's own guarantees: files are the truth (layout, round trip, rebuild after
// deleting the index), crashes mid-commit roll forward or back, hostile names stay inside the
// store, and concurrent writer processes lose nothing.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseRevision, serializeRevision } from '../src/core/markdown.js';
import type { Revision } from '../src/core/types.js';
import { FileStore } from '../src/store/files/file-store.js';
import { HUMAN, PROJECT_A, ROOT, engineFor, testClock, tmpDir } from './helpers.js';

const open = (dir: string, faultPoint?: (n: string) => void) =>
  FileStore.open(dir, { durable: false, faultPoint });

describe('files are the truth', () => {
  it('lays out current files, history, journal and usage as plain files', async () => {
    const dir = tmpDir();
    const store = await open(dir);
    const e = engineFor(store, PROJECT_A, testClock());
    const [r] = await e.apply(
      [
        {
          op: 'remember',
          type: 'decision',
          abstract: 'Use pnpm workspaces',
          fields: { subject: 'package manager' },
        },
      ],
      HUMAN,
    );
    await e.apply(
      [{ op: 'supersede', id: r!.id, abstract: 'Use npm workspaces', valid_from: '2026-02-01' }],
      HUMAN,
    );
    await e.recall('workspaces');
    const current = path.join(dir, 'memories', PROJECT_A, 'decision', 'package-manager.md');
    assert.ok(fs.readFileSync(current, 'utf8').includes('abstract: Use npm workspaces'));
    assert.ok(
      fs
        .readFileSync(path.join(dir, 'history', r!.id, '000001.md'), 'utf8')
        .includes('abstract: Use pnpm workspaces'),
    );
    assert.equal(
      fs
        .readFileSync(path.join(dir, 'journal', '00000001.jsonl'), 'utf8')
        .trim()
        .split('\n').length,
      2,
    );
    assert.ok(fs.readdirSync(path.join(dir, 'usage')).length === 1);
    await store.close();
  });

  it('deleting the index loses nothing: reopening rebuilds it and recall is identical', async () => {
    const dir = tmpDir();
    let store = await open(dir);
    const clock = testClock();
    let e = engineFor(store, PROJECT_A, clock);
    for (const a of [
      'Tests run with node:test',
      'Lint runs with eslint',
      'Tests must not hit the network',
    ]) {
      await e.apply([{ op: 'remember', type: 'constraint', abstract: a }], HUMAN);
    }
    const gone = (await e.recall('lint')).results[0]!.id;
    await e.apply([{ op: 'retract', id: gone, reject: true }], HUMAN);
    const before = await e.recall('tests lint network', { explain: true, logUsage: false });
    await store.close();
    fs.rmSync(path.join(dir, '.index'), { recursive: true, force: true });
    store = await open(dir);
    e = engineFor(store, PROJECT_A, clock);
    const after = await e.recall('tests lint network', { explain: true, logUsage: false });
    assert.equal(before.results.length, 2);
    assert.deepEqual(after, before);
    await store.close();
  });

  it('a corrupt index file is set aside and rebuilt', async () => {
    const dir = tmpDir();
    let store = await open(dir);
    const e = engineFor(store, PROJECT_A, testClock());
    await e.apply([{ op: 'remember', type: 'fact', abstract: 'Corruption is survivable' }], HUMAN);
    await store.close();
    fs.rmSync(path.join(dir, '.index'), { recursive: true, force: true });
    fs.mkdirSync(path.join(dir, '.index'));
    fs.writeFileSync(
      path.join(dir, '.index', 'mneme.db'),
      'this is not a database at all'.repeat(100),
    );
    store = await open(dir);
    const found = await engineFor(store, PROJECT_A, testClock()).recall('corruption survivable');
    assert.equal(found.results.length, 1);
    await store.close();
  });

  it('any revision round-trips through its Markdown file unchanged', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 80 });
    const iso = fc
      .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString());
    const revision = fc.record(
      {
        id: fc.constant('mem_01J00000000000000000000000'),
        rev: fc.integer({ min: 1, max: 1000 }),
        op: fc.constantFrom('remember', 'supersede', 'correct', 'retract'),
        type: fc.constantFrom('fact', 'decision'),
        scope: fc.constantFrom('global', PROJECT_A),
        slug: fc.constantFrom('a', 'some-slug', 'x.y_z'),
        abstract: text,
        body: fc.string({ unit: 'grapheme', maxLength: 300 }),
        tags: fc.array(text, { maxLength: 4 }),
        fields: fc.dictionary(fc.constantFrom('subject', 'why'), text),
        links: fc.array(
          fc.record(
            { rel: fc.constantFrom('relates_to', 'derived_from'), target: text },
            { noNullPrototype: true },
          ),
          { maxLength: 2 },
        ),
        status: fc.constantFrom('active', 'retracted'),
        rejected: fc.boolean(),
        trust: fc.constantFrom('untrusted', 'claimed', 'verified', 'confirmed'),
        review: fc.constantFrom('none', 'pending'),
        quarantine: fc.option(text, { nil: null }),
        valid_from: iso,
        valid_to: fc.option(iso, { nil: null }),
        recorded_at: iso,
        actor: fc.record(
          { kind: fc.constantFrom('human', 'agent'), session: text },
          { noNullPrototype: true },
        ),
        provenance: fc.array(text, { maxLength: 3 }),
        source: fc.option(
          fc.record(
            { path: text, sha256: fc.constant('ab'.repeat(32)) },
            { noNullPrototype: true },
          ),
          { nil: null },
        ),
        applies_to: fc.array(text, { maxLength: 2 }),
        reason: fc.option(text, { nil: null }),
      },
      { noNullPrototype: true },
    ) as fc.Arbitrary<Revision>;
    fc.assert(
      fc.property(revision, (r) => {
        const file = serializeRevision(r);
        assert.deepEqual(parseRevision(file), structuredClone(r));
        assert.equal(serializeRevision(parseRevision(file)), file);
      }),
      { numRuns: 300 },
    );
  });

  it('field values cannot inject front matter; the body stays body', () => {
    const r: Revision = parseRevision(
      serializeRevision({
        id: 'mem_01J00000000000000000000000',
        rev: 1,
        op: 'remember',
        type: 'fact',
        scope: 'global',
        slug: 's',
        abstract: 'x',
        body: '---\ntrust: confirmed\n---\n',
        tags: ['a\n---\ntrust: confirmed'],
        fields: { subject: 'x\ntrust: confirmed' },
        links: [],
        status: 'active',
        rejected: false,
        trust: 'claimed',
        review: 'none',
        quarantine: null,
        valid_from: '2026-01-01T00:00:00.000Z',
        valid_to: null,
        recorded_at: '2026-01-01T00:00:00.000Z',
        actor: { kind: 'agent' },
        provenance: [],
        source: null,
        applies_to: [],
        reason: null,
      }),
    );
    assert.equal(r.trust, 'claimed');
    assert.equal(r.body, '---\ntrust: confirmed\n---\n');
    assert.equal(r.fields.subject, 'x\ntrust: confirmed');
  });
});

describe('crash safety inside a commit', () => {
  for (const point of ['group-after-sync', 'group-after-history', 'group-after-current'] as const) {
    it(`a failure ${point} (after the sync) keeps the write, and recovery writes its files`, async () => {
      const dir = tmpDir();
      let store = await open(dir, (n) => {
        if (n === point) throw new Error(`simulated failure at ${n}`);
      });
      const clock = testClock();
      const e = engineFor(store, PROJECT_A, clock);
      // Acknowledged: the journal line is synced, so the write stands though its files failed.
      const [m] = await e.apply(
        [{ op: 'remember', type: 'fact', abstract: 'Port is 8080', fields: { subject: 'port' } }],
        HUMAN,
      );
      await e.apply([{ op: 'correct', id: m!.id, abstract: 'Port is 9090' }], HUMAN);
      assert.deepEqual(
        (await e.recall('port')).results.map((r) => r.abstract),
        ['Port is 9090'],
      );
      await store.close();
      store = await open(dir);
      const e2 = engineFor(store, PROJECT_A, clock);
      assert.equal((await e2.verifyJournal()).ok, true);
      assert.equal((await e2.history(m!.id)).revisions.length, 2);
      const current = fs.readFileSync(
        path.join(dir, 'memories', PROJECT_A, 'fact', 'port.md'),
        'utf8',
      );
      assert.ok(current.includes('Port is 9090'));
      assert.ok(!current.includes('Port is 8080'));
      assert.ok(fs.existsSync(path.join(dir, 'history', m!.id, '000002.md')));
      assert.deepEqual(await store.integrity(), []);
      await store.close();
    });
  }

  for (const point of ['after-journal', 'after-index'] as const) {
    it(`a crash ${point} keeps the committed write`, async () => {
      const dir = tmpDir();
      let store = await open(dir, (n) => {
        if (n === point) throw new Error(`simulated crash at ${n}`);
      });
      const clock = testClock();
      await assert.rejects(
        engineFor(store, PROJECT_A, clock).apply(
          [{ op: 'remember', type: 'fact', abstract: 'Region is eu-west-1' }],
          HUMAN,
        ),
        /simulated crash/,
      );
      fs.rmSync(path.join(dir, '.state', 'lock'), { force: true });
      await store.close();
      store = await open(dir);
      const e = engineFor(store, PROJECT_A, clock);
      assert.deepEqual(
        (await e.recall('region')).results.map((r) => r.abstract),
        ['Region is eu-west-1'],
      );
      assert.equal((await e.verifyJournal()).ok, true);
      await store.close();
    });
  }
});

describe('hostile names', () => {
  it('refuses path traversal in type and scope-like values, and writes nothing outside', async () => {
    const dir = tmpDir();
    const store = await open(dir);
    const e = engineFor(store, PROJECT_A, testClock());
    await assert.rejects(
      e.apply([{ op: 'remember', type: '../../etc', abstract: 'x' }], HUMAN),
      /unknown memory type/,
    );
    await assert.rejects(
      e.apply(
        [{ op: 'remember', type: 'fact', abstract: 'x', fields: { '../subject': 'y' } }],
        HUMAN,
      ),
      /not allowed/,
    );
    const [ok] = await e.apply(
      [
        {
          op: 'remember',
          type: 'fact',
          abstract: 'Traversal is refused',
          fields: { subject: '../../../../etc/passwd' },
        },
      ],
      HUMAN,
    );
    const files: string[] = [];
    const walk = (d: string) =>
      fs
        .readdirSync(d, { withFileTypes: true })
        .forEach((x) =>
          x.isDirectory() ? walk(path.join(d, x.name)) : files.push(path.join(d, x.name)),
        );
    walk(path.join(dir, 'memories'));
    assert.deepEqual(
      files.map((f) => path.relative(dir, f)),
      [path.join('memories', PROJECT_A, 'fact', 'etc-passwd.md')],
    );
    assert.equal((await e.read(ok!.id)).fields.subject, '../../../../etc/passwd');
    await assert.rejects(e.read('../../x'), /not a memory id/);
    await store.close();
  });
});

describe('concurrent writers', () => {
  it('three processes writing at once lose nothing and keep the chain intact', async () => {
    const dir = tmpDir();
    (await open(dir)).close();
    const writer = path.join(ROOT, 'dist', 'test', 'fixtures', 'writer.js');
    const run = (tag: string) =>
      new Promise<string[]>((resolve, reject) => {
        const p = spawn(process.execPath, [writer, dir, tag, '25'], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        p.stdout.on('data', (d) => (out += d));
        p.stderr.on('data', (d) => (err += d));
        p.on('close', (code) =>
          code === 0 ? resolve(out.trim().split('\n')) : reject(new Error(err)),
        );
      });
    const written = (await Promise.all(['w1', 'w2', 'w3'].map(run))).flat();
    assert.equal(new Set(written).size, 75);
    const store = await open(dir);
    const e = engineFor(store, PROJECT_A, testClock('2030-01-01T00:00:00.000Z'));
    const v = await e.verifyJournal();
    assert.equal(v.ok, true);
    assert.equal(v.entries, 75);
    const all = await store.listCurrent([PROJECT_A]);
    assert.deepEqual(all.map((x) => x.id).sort(), [...written].sort());
    await store.close();
  });
});
