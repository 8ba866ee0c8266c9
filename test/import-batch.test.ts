// Batch import (issue 18 item 4): a bundle is applied many lineages per applyEach call, through
// the same gates, and the outcome is what one call per lineage gives — the same report (counts,
// refusals in bundle order), the same memories and a byte-identical journal — and a re-run
// changes nothing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { IMPORT_CHUNK_OPS, type ImportReport } from '../src/engine/bundle.js';
import type { Engine } from '../src/engine/engine.js';
import { FileStore } from '../src/store/files/file-store.js';
import {
  HUMAN,
  PROJECT_A,
  PROJECT_B,
  cli,
  engineFor,
  terminal,
  testClock,
  tmpDir,
} from './helpers.js';

const N = 2000;
const FORGOTTEN = 'The release train leaves every second Tuesday at noon';
const IMPORTER = { ...HUMAN, kind: 'import' as const };
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function open(
  dir: string,
  ticking = false,
): Promise<{ engine: Engine; close: () => Promise<void> }> {
  const store = await FileStore.open(dir, { durable: false });
  // An importer's clock stands still, so two imports of one bundle journal the same times.
  const clock = testClock();
  const tick = () => (clock.advance(1000), clock());
  return {
    engine: engineFor(store, PROJECT_A, ticking ? tick : clock),
    close: () => store.close(),
  };
}

const journal = (dir: string) =>
  fs
    .readdirSync(path.join(dir, 'journal'))
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .map((f) => fs.readFileSync(path.join(dir, 'journal', f), 'utf8'))
    .join('');

describe('batch import of a bundle', () => {
  const root = tmpDir('mneme-import-batch-');
  let bundle = '';
  let revisions = 0;
  let foreignId = '';
  let restatedId = '';

  before(async () => {
    const src = await open(path.join(root, 'src'), true);
    const ids: string[] = [];
    for (let i = 0; i < N; i += 500) {
      const ops = Array.from({ length: Math.min(500, N - i) }, (_, j) => ({
        op: 'remember' as const,
        type: 'fact',
        abstract: `Service ${i + j} listens on port ${10000 + i + j}`,
        body: `Configured in deploy/service-${i + j}.toml`,
        fields: { subject: `service ${i + j} port` },
        tags: [`svc${(i + j) % 7}`],
      }));
      for (const r of await src.engine.apply(ops, HUMAN)) ids.push(r.id);
    }
    // Some lineages of two and three revisions, and a forgotten value (a tombstone).
    for (const id of ids.slice(0, 60))
      await src.engine.apply(
        [{ op: 'correct', id, expected_rev: 1, abstract: `Corrected value for ${id}` }],
        HUMAN,
      );
    for (const id of ids.slice(0, 10))
      await src.engine.apply(
        [{ op: 'supersede', id, expected_rev: 2, abstract: `Third value for ${id}` }],
        HUMAN,
      );
    const [forgotten] = await src.engine.apply(
      [{ op: 'remember', type: 'fact', abstract: FORGOTTEN }],
      HUMAN,
    );
    await src.engine.apply([{ op: 'retract', id: forgotten!.id, reject: true }], HUMAN);
    const b = (await src.engine.exportBundle()) as unknown as Json;
    await src.close();
    // Two lineages the importer must refuse, in the middle of the bundle: one of another project
    // (a scope refusal) and one restating the forgotten value (a tombstone refusal).
    const model = b.memories[1200];
    foreignId = 'mem_01J0000000000000000000FRGN';
    restatedId = 'mem_01J0000000000000000000RSTD';
    const copy = (id: string, extra: Json) => ({
      id,
      revisions: [
        { ...model.revisions[0], id, slug: `copy-${id.slice(-4).toLowerCase()}`, ...extra },
      ],
    });
    b.memories.splice(
      1300,
      0,
      copy(foreignId, { scope: PROJECT_B }),
      copy(restatedId, { abstract: FORGOTTEN, fields: { subject: 'release train' } }),
    );
    bundle = JSON.stringify(b);
    revisions = (b.memories as Json[]).reduce((n, m) => n + (m.revisions as unknown[]).length, 0);
  });

  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('gives the report, memories and journal of one applyEach per lineage, in chunks', async () => {
    const progress: [number, number][] = [];
    const imports: Record<string, ImportReport> = {};
    for (const [name, chunkOps] of [
      ['one', 1],
      ['chunked', undefined],
    ] as const) {
      const dest = await open(path.join(root, name));
      imports[name] = await dest.engine.importBundle(bundle, 'bundle.json', IMPORTER, {
        ...(chunkOps ? { chunkOps } : {}),
        onProgress: (d, t) => {
          if (!chunkOps) progress.push([d, t]);
        },
      });
      await dest.close();
    }
    const r = imports.chunked!;
    assert.deepEqual(r, imports.one);
    const total = N + 3; // the memories, the forgotten one, the two planted lineages
    assert.equal(r.memories, total);
    // Every revision but the two refused lineages' is written.
    assert.equal(r.imported, revisions - 2);
    assert.equal(r.unchanged, 0);
    assert.equal(r.tombstones, 61); // 60 corrections and one forget armed one each
    assert.deepEqual(
      r.refused.map((x) => x.id),
      [foreignId, restatedId],
    );
    assert.match(r.refused[1]!.message, /rejected before/);
    assert.equal(journal(path.join(root, 'chunked')), journal(path.join(root, 'one')));
    // Chunks of at most IMPORT_CHUNK_OPS ops, reported as they finish, the last one complete.
    assert.ok(progress.length >= Math.ceil(revisions / IMPORT_CHUNK_OPS), `${progress.length}`);
    assert.ok(progress.every(([d], i) => i === 0 || d > progress[i - 1]![0]));
    assert.deepEqual(progress[progress.length - 1], [total, total]);

    // The store holds every lineage the bundle carried (but the refused two), revision for revision.
    const dest = await open(path.join(root, 'chunked'));
    const shape = (b: Json) =>
      (b.memories as Json[])
        .filter((m) => m.id !== foreignId && m.id !== restatedId)
        .map(
          (m) =>
            `${m.id} ${(m.revisions as Json[]).map((x) => `${x.rev}:${x.abstract}`).join('|')}`,
        )
        .sort();
    const here = shape((await dest.engine.exportBundle()) as unknown as Json);
    await dest.close();
    assert.equal(here.length, total - 2);
    assert.ok(here.some((l) => l.includes('|3:Third value')));
    assert.deepEqual(here, shape(JSON.parse(bundle) as Json));
  });

  it('changes nothing on a second run, and refuses the same lineages again', async () => {
    const dest = await open(path.join(root, 'chunked'));
    const before = journal(path.join(root, 'chunked'));
    const again = await dest.engine.importBundle(bundle, 'bundle.json', IMPORTER);
    await dest.close();
    assert.equal(again.imported, 0);
    assert.equal(again.unchanged, revisions - 2);
    assert.deepEqual(
      again.refused.map((x) => x.id),
      [foreignId, restatedId],
    );
    // Only the refusals are journaled again; no memory was written twice.
    const added = journal(path.join(root, 'chunked')).slice(before.length).trim().split('\n');
    assert.ok(
      added.every((l) => (JSON.parse(l) as Json).op === 'refuse'),
      added.join('\n'),
    );
  });

  it('draws a progress bar on a terminal, and none in --json or piped output', () => {
    // Fifty of the bundle's memories, as global ones (`--global` writes them from any directory).
    const b = JSON.parse(bundle) as Json;
    b.memories = (b.memories as Json[]).slice(0, 50).map((m) => ({
      ...m,
      revisions: (m.revisions as Json[]).map((x) => ({ ...x, scope: 'global' })),
    }));
    b.tombstones = [];
    const file = path.join(root, 'small.json');
    fs.writeFileSync(file, JSON.stringify(b));
    const home = path.join(root, 'cli-home');
    const env = { ...process.env, MNEME_HOME: home, MNEME_DURABLE: '0' };
    const tty = terminal([], ['import', file, '--global'], { cwd: root, env });
    assert.equal(tty.code, 0, tty.out);
    assert.match(tty.out, /importing \[#+\] 50\/50/);
    assert.match(tty.out, /already present/);
    const piped = cli(['import', file, '--global', '--json'], { home, cwd: root });
    assert.equal(piped.code, 0, piped.stderr);
    assert.doesNotMatch(piped.stderr, /importing/);
    const r = piped.json() as ImportReport;
    assert.equal(r.imported, 0);
    assert.ok(r.unchanged >= 50);
  });
});
