// The one-sync commit and group commit of the file store (store/files/commit.ts): an apply of
// many ops is one lock section and one journal sync, each op keeping its own gates, refusals
// and journal entry and seeing what the earlier ops of its group wrote; callers of one process
// arriving while a group is open join it; the journal line carries the revision file's text, so
// a history or current file lost after the sync is re-created from it, and a line's text that
// does not hash to its entry is never used. Each "not" is paired with the "does" beside it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FileStore } from '../src/store/files/file-store.js';
import { HUMAN, PROJECT_A, engineFor, testClock, tmpDir } from './helpers.js';

/** A store whose fault hook counts the group syncs (`group-after-sync`: once per group). */
async function counting(dir: string): Promise<{ store: FileStore; syncs: () => number }> {
  let n = 0;
  const store = await FileStore.open(dir, {
    durable: false,
    faultPoint: (name) => {
      if (name === 'group-after-sync') n++;
    },
  });
  return { store, syncs: () => n };
}

const segment = (dir: string) => path.join(dir, 'journal', '00000001.jsonl');

describe('group commit', () => {
  it('applies 100 ops under one sync, each with its own entry, gates and refusals', async () => {
    const dir = tmpDir();
    const { store, syncs } = await counting(dir);
    const e = engineFor(store, PROJECT_A, testClock());
    const [old] = await e.apply(
      [{ op: 'remember', type: 'fact', abstract: 'The cache is memcached' }],
      HUMAN,
    );
    const before = syncs();
    const ops = [
      // A later op sees what an earlier op of the same group wrote: the retraction's tombstone
      // refuses the value written again, and the idempotency key replays the first write.
      { op: 'retract', id: old!.id, reject: true, reason: 'wrong' },
      { op: 'remember', type: 'fact', abstract: 'The cache is memcached' },
      { op: 'remember', type: 'fact', abstract: 'The queue is rabbitmq', idempotency_key: 'k1' },
      { op: 'remember', type: 'fact', abstract: 'The queue is rabbitmq', idempotency_key: 'k1' },
      ...Array.from({ length: 96 }, (_, i) => ({
        op: 'remember',
        type: 'fact',
        abstract: `Batch note ${i} about plum${i}`,
      })),
    ];
    const settled = await e.applyEach(ops as never, HUMAN);
    assert.equal(syncs() - before, 1, 'one sync for the whole apply');
    assert.equal(settled.length, 100);
    assert.equal(settled[0]!.ok, true);
    assert.equal(settled[1]!.ok, false);
    assert.equal(!settled[1]!.ok && settled[1]!.error.code, 'refused');
    assert.equal(settled[2]!.ok && settled[2]!.result.replayed, undefined);
    assert.equal(settled[3]!.ok && settled[3]!.result.replayed, true);
    assert.ok(settled.slice(4).every((s) => s.ok));
    // Every op its own entry: the retraction, the refusal, one remember (the replay adds none)
    // and the 96 notes, in order, after the first write.
    const journal = await store.journal({ afterSeq: old!.seq! });
    assert.deepEqual(
      journal.slice(0, 3).map((x) => x.op),
      ['forget', 'refuse', 'remember'],
    );
    assert.equal(journal.length, 3 + 96);
    // Files are written after the sync, one per revision, and the lines carry their text.
    const notes = settled.slice(4).map((s) => (s.ok ? s.result.id : ''));
    for (const id of notes) assert.ok(fs.existsSync(path.join(dir, 'history', id, '000001.md')));
    const lines = fs.readFileSync(segment(dir), 'utf8').trim().split('\n');
    assert.ok(lines.at(-1)!.includes('"file":"---'));
    assert.ok(!lines.find((l) => l.includes('"op":"refuse"'))!.includes('"file"'));
    assert.equal((await e.verifyJournal()).ok, true);
    await store.close();
  });

  it('lets concurrent callers of one process join the open group', async () => {
    const dir = tmpDir();
    const { store, syncs } = await counting(dir);
    const e = engineFor(store, PROJECT_A, testClock());
    await e.apply([{ op: 'remember', type: 'fact', abstract: 'warm up' }], HUMAN);
    const before = syncs();
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        e.apply(
          [{ op: 'remember', type: 'fact', abstract: `Concurrent note ${i} kiwi${i}` }],
          HUMAN,
        ),
      ),
    );
    const groups = syncs() - before;
    assert.ok(groups >= 1 && groups < 12, `12 writers in ${groups} groups`);
    const seqs = results.map(([r]) => r!.seq!);
    assert.equal(new Set(seqs).size, 12);
    for (const [r] of results) assert.equal((await e.read(r!.id)).rev, 1);
    assert.equal((await e.verifyJournal()).ok, true);
    await store.close();
  });
});

describe('files re-created from the journal', () => {
  it('rewrites a lost or torn history file and current file, never from a line that does not hash', async () => {
    const dir = tmpDir();
    let store = await FileStore.open(dir, { durable: false });
    let e = engineFor(store, PROJECT_A, testClock());
    const [a, b, c] = await e.apply(
      [
        {
          op: 'remember',
          type: 'fact',
          abstract: 'Alpha lives in apricot',
          fields: { subject: 'a' },
        },
        { op: 'remember', type: 'fact', abstract: 'Bravo lives in blueberry' },
        { op: 'remember', type: 'fact', abstract: 'Charlie lives in cherry' },
      ],
      HUMAN,
    );
    await store.close();
    const hist = (id: string) => path.join(dir, 'history', id, '000001.md');
    const text = fs.readFileSync(hist(a!.id), 'utf8');
    // A power loss after the sync: a's files never reached the disk, b's history file is torn.
    fs.rmSync(hist(a!.id));
    fs.rmSync(path.join(dir, 'memories', PROJECT_A, 'fact', 'a.md'));
    fs.writeFileSync(hist(b!.id), '');
    // c's line was tampered with: its text no longer hashes to the entry's after.hash.
    const seg = segment(dir);
    fs.writeFileSync(
      seg,
      fs.readFileSync(seg, 'utf8').replace('Charlie lives in cherry', 'Charlie lives in mallory'),
    );
    fs.rmSync(hist(c!.id));
    // The index went with the power loss too (so recovery looks at every line).
    fs.rmSync(path.join(dir, '.index'), { recursive: true, force: true });
    store = await FileStore.open(dir, { durable: false });
    e = engineFor(store, PROJECT_A, testClock());
    assert.equal(fs.readFileSync(hist(a!.id), 'utf8'), text);
    assert.ok(
      fs
        .readFileSync(path.join(dir, 'memories', PROJECT_A, 'fact', 'a.md'), 'utf8')
        .includes('apricot'),
    );
    assert.ok(fs.readFileSync(hist(b!.id), 'utf8').includes('Bravo lives in blueberry'));
    assert.deepEqual(
      (await e.recall('apricot blueberry', { logUsage: false })).results.map((r) => r.id).sort(),
      [a!.id, b!.id].sort(),
    );
    // The tampered text was not used: c's file stays missing and fsck names it.
    assert.equal(fs.existsSync(hist(c!.id)), false);
    assert.equal(fs.readFileSync(seg, 'utf8').includes('mallory'), true);
    const findings = await store.integrity();
    assert.ok(
      findings.some((f) => f.message.includes(c!.id)),
      JSON.stringify(findings),
    );
    assert.equal((await e.verifyJournal()).ok, true);
    // With the index intact, a torn file is fsck's to name, and `rebuild` rewrites it.
    fs.writeFileSync(hist(b!.id), 'torn');
    assert.ok((await store.integrity()).some((f) => f.message.includes(b!.id)));
    await e.rebuild();
    assert.ok(fs.readFileSync(hist(b!.id), 'utf8').includes('Bravo lives in blueberry'));
    assert.ok(!(await store.integrity()).some((f) => f.message.includes(b!.id)));
    await store.close();
  });

  it('reads and verifies a journal of the older protocol (lines without the file text)', async () => {
    const dir = tmpDir();
    let store = await FileStore.open(dir, { durable: false });
    let e = engineFor(store, PROJECT_A, testClock());
    const [a] = await e.apply(
      [{ op: 'remember', type: 'fact', abstract: 'Delta is damson' }],
      HUMAN,
    );
    await store.close();
    const seg = segment(dir);
    const lines = fs.readFileSync(seg, 'utf8').trim().split('\n');
    const old = lines.map((l) => {
      const { file: _f, ...entry } = JSON.parse(l) as Record<string, unknown>;
      return JSON.stringify(entry);
    });
    assert.ok(lines.some((l) => l.includes('"file"')));
    fs.writeFileSync(seg, `${old.join('\n')}\n`);
    fs.rmSync(path.join(dir, '.index'), { recursive: true, force: true });
    store = await FileStore.open(dir, { durable: false });
    e = engineFor(store, PROJECT_A, testClock());
    assert.equal((await e.verifyJournal()).ok, true);
    assert.equal((await e.read(a!.id)).abstract, 'Delta is damson');
    const [b] = await e.apply([{ op: 'remember', type: 'fact', abstract: 'Echo is elder' }], HUMAN);
    assert.equal(b!.seq, a!.seq! + 1);
    assert.ok(fs.readFileSync(seg, 'utf8').trim().split('\n').at(-1)!.includes('"file"'));
    await store.close();
  });
});
