// Every surface on one store at once (DESIGN invariant 2): CLI writers and readers, the MCP
// server over stdio, hooks and distillers. No acknowledged write is lost, concurrent supersedes
// of one revision have exactly one winner (the rest get `conflict`), a held lock gives a clear
// `locked` error within MNEME_LOCK_TIMEOUT_MS, a reader never sees a torn state, and two
// distillers for one session apply its batch once.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { it } from 'node:test';
import { runConcurrency } from '../src/bench/reliability/concurrency.js';
import { tmpDir } from './helpers.js';

it('concurrent surfaces lose nothing and see no torn state', async () => {
  const dir = tmpDir('mneme-conc-');
  try {
    const r = await runConcurrency({ cliWriters: 2, opsPerWriter: 2, racers: 3, rounds: 2 }, dir);
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
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
