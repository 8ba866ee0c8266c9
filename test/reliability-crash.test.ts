// Crash safety with real SIGKILL (DESIGN invariants 4, 12): a child writer killed at every commit
// fault point, inside a rebuild, during a distiller's apply and after a delay; after each kill the
// store recovers on open, the journal verifies, committed writes are served, uncommitted ones are
// invisible and the dead writer's lock does not block the next writer. The long mode is
// `npm run test:reliability` (test/reliability/crash-suite.ts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CI_POINTS, runKillPoints } from './reliability/kill.js';
import { FileStore } from '../src/store/files/file-store.js';
import { HUMAN, PROJECT_A, engineFor, testClock, tmpDir } from './helpers.js';

describe('SIGKILL inside the write path', () => {
  it('survives every CI kill point with the invariant intact', async () => {
    const dir = tmpDir('mneme-crash-');
    try {
      const r = await runKillPoints(CI_POINTS, dir);
      assert.deepEqual(r.failures, []);
      // The kills really happened mid-write: children died, leaving locks behind (and no
      // intent file: the one-sync commit writes none, its journal lines carry the revisions).
      assert.equal(r.killed, CI_POINTS.length - r.notReached);
      assert.ok(r.killed >= CI_POINTS.length - 1, `killed ${r.killed}`);
      assert.ok(r.left.lock >= 5 && r.left.intent === 0, JSON.stringify(r.left));
      assert.ok(r.byMode.batch!.killed >= 4, JSON.stringify(r.byMode));
      assert.ok(r.ackedWrites > 0 && r.committedEntries > r.ackedWrites);
      assert.equal(r.survived, r.killed);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a torn journal tail', () => {
  it('is dropped before the next append, which stays a whole committed line', async () => {
    const dir = tmpDir('mneme-torn-');
    try {
      const clock = testClock();
      let store = await FileStore.open(dir, { durable: false });
      let engine = engineFor(store, PROJECT_A, clock);
      await engine.apply(
        [{ op: 'remember', type: 'fact', abstract: 'kumquat written before the tear' }],
        HUMAN,
      );
      await engine.close();
      const seg = path.join(dir, 'journal', '00000001.jsonl');
      fs.appendFileSync(seg, '{"seq":2,"at":"2026-01-0');
      store = await FileStore.open(dir, { durable: false });
      engine = engineFor(store, PROJECT_A, clock);
      const [r] = await engine.apply(
        [{ op: 'remember', type: 'fact', abstract: 'damson written after the tear' }],
        HUMAN,
      );
      assert.equal(r!.seq, 2);
      const v = await engine.verifyJournal();
      assert.equal(v.ok, true, JSON.stringify(v.firstBad));
      assert.equal(v.entries, 2);
      assert.doesNotMatch(fs.readFileSync(seg, 'utf8'), /2026-01-0\{/);
      const res = await engine.recall('damson', { logUsage: false });
      assert.deepEqual(
        res.results.map((x) => x.id),
        [r!.id],
      );
      await engine.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
