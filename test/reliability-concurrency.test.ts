// Every surface on one store at once (DESIGN invariant 2): CLI writers and readers, the MCP
// server over stdio, hooks and distillers. No acknowledged write is lost, concurrent supersedes
// of one revision have exactly one winner (the rest get `conflict`), a held lock gives a clear
// `locked` error within MNEME_LOCK_TIMEOUT_MS, a reader never sees a torn state, and two
// distillers for one session apply its batch once. The commit point (invariant 13): writers
// while `mneme rebuild` runs, and a write while another process holds the index's lock — a
// write exits non-zero only if it has no journal line, and exits 0 whenever it has one.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { runConcurrency } from './reliability/concurrency.js';
import { FileStore } from '../src/store/files/file-store.js';
import { openDatabase } from '../src/store/files/sqlite.js';
import { engineFor, HUMAN, PROJECT_A, testClock, tmpDir } from './helpers.js';

it('concurrent surfaces lose nothing and see no torn state', async () => {
  const dir = tmpDir('mneme-conc-');
  try {
    const r = await runConcurrency(
      {
        cliWriters: 2,
        opsPerWriter: 2,
        racers: 3,
        rounds: 2,
        commitWriters: 4,
        commitOps: 5,
        rebuilds: 4,
      },
      dir,
    );
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.races.winners, [1, 1]);
    assert.equal(r.races.conflicts, 4);
    assert.equal(r.lock.lockedError, true);
    assert.equal(r.lock.afterRelease, true);
    assert.match(r.lock.message, /locked by process \d+/);
    assert.equal(r.writesAcked, 2 * 2 + 2);
    assert.ok(r.reader.served > 0);
    assert.equal(r.distillers.appliedOnce, true);
    assert.ok(r.distillers.coalesced >= 1);
    // Must not: a committed write reported as failed, or an acknowledged one with no line…
    assert.deepEqual(r.commitPoint.failedButCommitted, []);
    assert.deepEqual(r.commitPoint.ackedNotCommitted, []);
    // …does: writes and rebuilds both went through, and the write made while the index was
    // held exited 0, has its journal line, and is recalled once the index caught up.
    assert.equal(r.commitPoint.writes, 4 * 5 + 1);
    assert.ok(r.commitPoint.acked > 0);
    assert.ok(r.commitPoint.rebuildsOk >= 4);
    assert.deepEqual(r.commitPoint.heldIndex, {
      exit: 0,
      committed: true,
      recalledAfter: true,
      stderr: '',
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('a write whose index update is held up still commits, and the next read catches the index up', async () => {
  const dir = tmpDir('mneme-behind-');
  try {
    const store = await FileStore.open(dir, { durable: false, lockTimeoutMs: 200 });
    const e = engineFor(store, PROJECT_A, testClock());
    await e.apply([{ op: 'remember', type: 'fact', abstract: 'first written apricot' }], HUMAN);
    const holder = openDatabase(path.join(dir, '.index', 'mneme.db'));
    let written;
    try {
      holder.exec('BEGIN IMMEDIATE');
      // The journal line is written, so the write is reported as done (not `locked`)…
      [written] = await e.apply(
        [{ op: 'remember', type: 'fact', abstract: 'held up nectarine' }],
        HUMAN,
      );
      const head = (await store.verifyJournal()).head.seq;
      assert.equal(written!.seq, head);
      // …while the index, still held, serves what it had.
      const during = await e.recall('nectarine', { logUsage: false });
      assert.equal(during.results.length, 0);
      holder.exec('ROLLBACK');
    } finally {
      holder.close();
    }
    // Once free, the next read in the same process catches the index up from the journal.
    const after = await e.recall('nectarine', { logUsage: false });
    assert.deepEqual(
      after.results.map((r) => r.id),
      [written!.id],
    );
    await store.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
