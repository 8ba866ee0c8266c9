// An fsck on Postgres killed mid-run (SIGKILL, a real child process running the CLI's engine)
// resumes from the marks its checkpoints wrote: the next run reads only the lineages the killed
// one had not marked clean, and still finds a tampered revision planted before the kill — both
// one the killed run had reached (found, so never marked) and one it had not. The same run on a
// clean store reports nothing. The kill lands deterministically after the first checkpoint: the
// test holds an uncommitted mark of a lineage of the second batch, which the child's second
// checkpoint waits on.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { CHECKPOINT_EVERY } from '../src/store/postgres/integrity-rows.js';
import { HUMAN, PROJECT_A, engineFor, testClock, tmpDir } from './helpers.js';
import { pgSkipReason, throwawayDb } from './pg-fixtures.js';

const skip = await pgSkipReason();
const CHILD = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'reliability',
  'pg-fsck-child.js',
);
const TENANT = 'acme';

async function until(what: string, f: () => Promise<boolean>, ms = 60_000) {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A store of n lineages; `tamper` plants an edited revision row in the lineages at these ranks. */
async function run(n: number, tamper: number[]) {
  const db = await throwawayDb([TENANT]);
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  const store = await PostgresStore.open(db.url, { tenant: TENANT });
  try {
    const e = engineFor(store, PROJECT_A, testClock('2026-03-01T10:00:00.000Z'));
    const ops = Array.from({ length: n }, (_, i) => ({
      op: 'remember' as const,
      type: 'fact',
      abstract: `Worker ${i} drains queue ${i % 7}`,
    }));
    const ids = (await e.apply(ops, HUMAN)).map((r) => r.id).sort();
    for (const k of tamper)
      await pool.query(
        `UPDATE revisions SET doc = replace(doc, 'drains', 'fills') WHERE tenant_id = $1 AND id = $2`,
        [TENANT, ids[k]],
      );
    // fsck checks lineages in id order, CHECKPOINT_EVERY at a time: hold a mark of the second
    // batch, uncommitted, so the child's second checkpoint waits on it.
    const holder = await pool.connect();
    await holder.query('BEGIN');
    await holder.query(
      "INSERT INTO fsck_marks(tenant_id, lineage_id, fp) VALUES ($1, $2, 'held')",
      [TENANT, ids[CHECKPOINT_EVERY + 1]],
    );
    const child = spawn(process.execPath, [CHILD], {
      cwd: tmpDir(),
      env: { ...process.env, MNEME_DATABASE_URL: db.url, MNEME_TENANT: TENANT },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<NodeJS.Signals | number | null>((r) =>
      child.on('exit', (code, signal) => r(signal ?? code)),
    );
    const marks = async () =>
      Number(
        (await pool.query('SELECT count(*) AS n FROM fsck_marks WHERE tenant_id = $1', [TENANT]))
          .rows[0].n,
      );
    // The first checkpoint is committed, and the second is waiting on the held mark.
    await until('the first checkpoint', async () => {
      if (child.exitCode !== null) throw new Error(`the child exited: ${stderr}`);
      return (await marks()) > 0;
    });
    let waiting: number[] = [];
    await until('the second checkpoint to wait', async () => {
      const { rows } = await pool.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO fsck_marks%'",
      );
      waiting = rows.map((r) => r.pid);
      return waiting.length > 0;
    });
    const markedBeforeKill = await marks();
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
    // The killed client's statement in flight would still run once the lock is free (the server
    // notices a lost client only when it writes to it): end its session, as a crashed machine's.
    for (const pid of waiting) await pool.query('SELECT pg_terminate_backend($1)', [pid]);
    await holder.query('ROLLBACK');
    holder.release();
    const resumed = await e.fsck();
    const again = await e.fsck();
    return { ids, markedBeforeKill, resumed, again };
  } finally {
    await store.close();
    await pool.end();
    await db.drop();
  }
}

describe('fsck on Postgres, interrupted', { skip: skip ?? false }, () => {
  const n = CHECKPOINT_EVERY * 3 + 17;

  it('resumes from its marks and reads nothing on a clean store afterwards', async () => {
    const r = await run(n, []);
    assert.equal(r.markedBeforeKill, CHECKPOINT_EVERY, 'the killed run marked its first batch');
    assert.deepEqual(r.resumed.checked, {
      full: false,
      lineages_checked: n - CHECKPOINT_EVERY,
      lineages_skipped: CHECKPOINT_EVERY,
    });
    assert.deepEqual(r.resumed.issues, []);
    assert.equal(r.again.checked.lineages_checked, 0);
  });

  it('resumes and still finds revisions tampered before the kill, reached or not', async () => {
    const reached = 5; // in the first batch: found by the killed run, so never marked
    const notYet = CHECKPOINT_EVERY * 2 + 3; // in the third: the killed run never read it
    const r = await run(n, [reached, notYet]);
    assert.equal(r.markedBeforeKill, CHECKPOINT_EVERY - 1, 'the tampered lineage is not marked');
    assert.deepEqual(r.resumed.checked, {
      full: false,
      lineages_checked: n - CHECKPOINT_EVERY + 1,
      lineages_skipped: CHECKPOINT_EVERY - 1,
    });
    const found = [...new Set(r.resumed.issues.map((i) => i.memory))].sort();
    assert.deepEqual(found, [r.ids[reached], r.ids[notYet]].sort());
    assert.ok(r.resumed.issues.every((i) => i.phase === 'integrity'));
    // Still reported on the next run: a lineage with an issue is never marked clean.
    assert.deepEqual([...new Set(r.again.issues.map((i) => i.memory))].sort(), found);
    assert.equal(r.again.checked.lineages_checked, 2);
  });
});
