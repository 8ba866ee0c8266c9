// A purge killed at every point inside it (a real child process, SIGKILL, no cleanup): once the
// purge entry is in the journal (the commit point, invariant 13), the next open finishes the
// erasure from the purge's redo record — a raw byte scan of the store finds the value nowhere,
// the journal verifies, the neighbour is served — and a purge killed before its entry did not
// happen (the value is still there and served, and purging again erases it). Each "not" is
// paired with the control that the store held the value before the kill.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { SchemaRegistry } from '../src/core/schema.js';
import { Engine } from '../src/engine/engine.js';
import { FileStore } from '../src/store/files/file-store.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { HUMAN, testClock, tmpDir } from './helpers.js';
import { pgSkipReason, throwawayDb } from './pg-fixtures.js';
import { CRASH_BINDING, PURGE_POINTS, killPurge } from './reliability/kill.js';

const pgSkip = await pgSkipReason();

const SECRET = 'Xv9plumbrite5531Kq';
const ALSO = 'hunter-Wq83kz';
const ABSTRACT = `The payments API key is ${SECRET}`;
const BODY = `Use ${SECRET} only from the build host.`;
const NEIGHBOUR = 'The payments API lives behind the eu gateway';
const UNCOMMITTED = new Set(['purge-after-pending']);

/** Every file under the store whose raw bytes hold one of the strings (case-insensitive). */
function rawScan(root: string, needles: string[]): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const n of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
      const f = path.join(dir, n);
      if (fs.statSync(f).isDirectory()) walk(f);
      else {
        const t = fs.readFileSync(f).toString('latin1').toLowerCase();
        if (needles.some((x) => t.includes(x.toLowerCase()))) found.push(path.relative(root, f));
      }
    }
  };
  walk(root);
  return found;
}

async function open(dir: string): Promise<{ store: FileStore; engine: Engine }> {
  const store = await FileStore.open(dir, { durable: false });
  const engine = new Engine({
    store,
    clock: testClock(),
    registry: new SchemaRegistry(),
    binding: CRASH_BINDING,
    surface: 'human',
  });
  return { store, engine };
}

/** A store where the value is in a memory, the journal, the usage log and the session archive. */
async function seed(dir: string): Promise<{ id: string; neighbour: string }> {
  const { store, engine } = await open(dir);
  const [a] = await engine.apply(
    [{ op: 'remember', type: 'fact', abstract: ABSTRACT, body: BODY }],
    HUMAN,
  );
  const [n] = await engine.apply([{ op: 'remember', type: 'fact', abstract: NEIGHBOUR }], HUMAN);
  await engine.apply(
    [
      {
        op: 'correct',
        id: a!.id,
        abstract: 'The payments API key is in the vault',
        reason: `leaked ${SECRET}`,
      },
    ],
    HUMAN,
  );
  await engine.recall(SECRET, { logUsage: true });
  await store.sessions.appendArchive({ host: 'claude-code', session: 'leak' }, [
    JSON.stringify({
      type: 'user',
      message: { role: 'user', content: `key ${SECRET}, pw ${ALSO}` },
    }),
  ]);
  await engine.close();
  return { id: a!.id, neighbour: n!.id };
}

describe('a purge killed inside it', () => {
  for (const point of PURGE_POINTS) {
    it(`at ${point}: ${UNCOMMITTED.has(point) ? 'did not happen, and purging again erases it' : 'is finished by the next open'}`, async () => {
      const dir = tmpDir('mneme-purge-crash-');
      const store = path.join(dir, 'store');
      try {
        const { id, neighbour } = await seed(store);
        // The control: before the purge the raw bytes hold the value and the other string.
        assert.ok(rawScan(store, [SECRET]).length >= 4, rawScan(store, [SECRET]).join(', '));
        assert.ok(rawScan(store, [ALSO]).length > 0);
        const k = await killPurge(store, id, point, ALSO);
        assert.equal(k.killed, true, `the child was not killed at ${point}: ${k.code} ${k.stderr}`);
        const { store: s, engine } = await open(store);
        try {
          const purges = await s.journal({ id, op: 'purge' });
          if (UNCOMMITTED.has(point)) {
            assert.equal(purges.length, 0);
            // Not committed, so not done: the memory is served as it was, and its bytes are kept.
            assert.match((await engine.read(id)).body, new RegExp(SECRET));
            assert.ok(rawScan(store, [SECRET]).length > 0);
            assert.equal(fs.existsSync(path.join(store, '.state', 'purge.json')), false);
            const r = await engine.purge({ id, reason: 'leaked credential', also: [ALSO] }, HUMAN);
            assert.deepEqual(r.revs, [1, 2]);
          } else {
            assert.equal(purges.length, 1, 'the purge entry committed');
            assert.equal(k.pending, true, 'the kill left the redo record for recovery');
          }
          // Committed (by the child, or just now): nothing of the value in any byte of the store.
          assert.deepEqual(rawScan(store, [SECRET, ALSO]), []);
          assert.equal(fs.existsSync(path.join(store, '.state', 'purge.json')), false);
          const v = await engine.verifyJournal();
          assert.equal(v.ok, true, JSON.stringify(v.firstBad));
          const hist = await engine.history(id);
          assert.deepEqual(
            hist.revisions.map((x) => [x.status, x.abstract]),
            [
              ['purged', '[purged]'],
              ['purged', '[purged]'],
            ],
          );
          assert.equal((await engine.read(neighbour)).abstract, NEIGHBOUR);
          const served = await engine.recall('payments API gateway', { logUsage: false });
          assert.deepEqual(
            served.results.map((x) => x.id),
            [neighbour],
          );
          const verified = await engine.verifyPurge(id);
          assert.deepEqual(verified.remaining, []);
          // Nothing is left, so purging again is refused, saying so.
          await assert.rejects(
            engine.purge({ id, reason: 'leaked credential' }, HUMAN),
            /purged already, and nothing of it is left/,
          );
        } finally {
          await engine.close();
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('a purge whose redo record was lost is finished by running `purge` on it again', async () => {
    const dir = tmpDir('mneme-purge-rerun-');
    const store = path.join(dir, 'store');
    try {
      const { id, neighbour } = await seed(store);
      const k = await killPurge(store, id, 'purge-after-revisions');
      assert.equal(k.killed, true, k.stderr);
      fs.rmSync(path.join(store, '.state', 'purge.json'));
      const { store: s, engine } = await open(store);
      try {
        // The control: the index and the current file still hold the value; --verify says so.
        const left = rawScan(store, [SECRET]);
        assert.ok(
          left.some((f) => f.startsWith('.index')),
          left.join(', '),
        );
        assert.ok((await engine.verifyPurge(id)).remaining.length > 0);
        const r = await engine.purge({ id, reason: 'leaked credential' }, HUMAN);
        assert.equal(r.finished, true);
        assert.deepEqual(r.remaining, []);
        assert.deepEqual(rawScan(store, [SECRET]), []);
        assert.equal((await engine.verifyJournal()).ok, true);
        assert.equal((await engine.read(neighbour)).abstract, NEIGHBOUR);
        // The journal holds the one purge entry: finishing it is no new write.
        assert.equal((await s.journal({ id, op: 'purge' })).length, 1);
      } finally {
        await engine.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a Postgres purge whose VACUUM a crash cut off', { skip: pgSkip ?? false }, () => {
  it('is vacuumed by the next write of the next process; the mark is cleared', async () => {
    const db = await throwawayDb(['acme']);
    const stat = async () => {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        const { rows } = await c.query<{ n: number; due: boolean | null }>(
          `SELECT (SELECT vacuum_count + autovacuum_count FROM pg_stat_user_tables
                    WHERE relname = 'revisions')::int AS n,
                  (SELECT vacuum_due FROM purge_secrets WHERE tenant_id = 'acme') AS due`,
        );
        return rows[0]!;
      } finally {
        await c.end();
      }
    };
    const openPg = () => openHumanPg(db.url);
    try {
      let { engine } = await openPg();
      const [a] = await engine.apply(
        [{ op: 'remember', type: 'fact', abstract: ABSTRACT, body: BODY }],
        HUMAN,
      );
      await engine.purge({ id: a!.id, reason: 'leaked credential' }, HUMAN);
      await engine.close();
      // Does: a purge that finished clears its mark.
      assert.equal((await stat()).due, false);
      // What a kill between the purge's COMMIT and its VACUUM leaves: the mark set.
      await admin(db.url, "UPDATE purge_secrets SET vacuum_due = true WHERE tenant_id = 'acme'");
      const before = await stat();
      assert.equal(before.due, true);
      ({ engine } = await openPg());
      await engine.apply([{ op: 'remember', type: 'fact', abstract: NEIGHBOUR }], HUMAN);
      await engine.close();
      const after = await stat();
      assert.equal(after.due, false);
      assert.ok(after.n > before.n, `vacuumed: ${before.n} -> ${after.n}`);
    } finally {
      await db.drop();
    }
  });

  it('vacuums every table that holds the tenant, the search postings among them', async () => {
    const db = await throwawayDb(['acme']);
    const counts = async () => {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        const { rows } = await c.query<{ relname: string; n: number }>(
          `SELECT s.relname, (s.vacuum_count + s.autovacuum_count)::int AS n
           FROM pg_stat_user_tables s
           WHERE s.relname IN (SELECT table_name FROM information_schema.columns
                               WHERE table_schema = current_schema() AND column_name = 'tenant_id')
             AND s.relname <> 'purge_secrets'`,
        );
        return new Map(rows.map((r) => [r.relname, r.n]));
      } finally {
        await c.end();
      }
    };
    const { engine } = await openHumanPg(db.url);
    try {
      const [a] = await engine.apply(
        [{ op: 'remember', type: 'fact', abstract: ABSTRACT, body: BODY }],
        HUMAN,
      );
      const before = await counts();
      // Does: the tables a purge rewrites, and the postings the revision's words went to.
      assert.ok(before.has('postings') && before.has('revisions'), [...before.keys()].join(' '));
      await engine.purge({ id: a!.id, reason: 'leaked credential' }, HUMAN);
      const after = await counts();
      // Must not: a table holding the tenant's rows left with the purged row versions on disk.
      const missed = [...before].filter(([t, n]) => !((after.get(t) ?? 0) > n)).map(([t]) => t);
      assert.deepEqual(missed, []);
    } finally {
      await engine.close();
      await db.drop();
    }
  });
});

/** An engine on tenant acme of a Postgres database, as a person at a terminal opens it. */
async function openHumanPg(url: string): Promise<{ store: PostgresStore; engine: Engine }> {
  const store = await PostgresStore.open(url, { tenant: 'acme' });
  const engine = new Engine({
    store,
    clock: testClock(),
    registry: new SchemaRegistry(),
    binding: CRASH_BINDING,
    surface: 'human',
  });
  return { store, engine };
}

async function admin(url: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}
