// The distiller's guarantees, in-process over a real store with a scripted executor: refused
// operations are kept and retried once, a crash between apply and the watermark loses and
// duplicates nothing, the runs-per-hour cap is enforced and reported, --dry-run applies nothing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DISTILL_DEFAULTS, type Engine, type Executor } from '../src/engine/engine.js';
import { SessionFiles } from '../src/store/files/session-files.js';
import { openEngine } from '../src/surfaces/compose.js';
import { makeWorld } from './hook-helpers.js';

const msg = (role: 'user' | 'assistant', text: string) =>
  JSON.stringify({
    type: role,
    message: { role, content: role === 'user' ? text : [{ type: 'text', text }] },
  });

describe('distillSession', () => {
  let dir: string;
  let engine: Engine;
  /** A person's view of the same store (an agent's engine hides quarantined memories). */
  let viewer: Engine;
  let sessions: SessionFiles;
  const binding = { project: 'alpha-1234abcd', identity: 'test' };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-distill-'));
    engine = await openEngine({
      store: dir,
      binding,
      env: { MNEME_DURABLE: '0' },
      surface: 'agent',
    });
    viewer = await openEngine({ store: dir, binding, env: { MNEME_DURABLE: '0' } });
    sessions = new SessionFiles(dir);
  });
  after(async () => {
    await viewer.close();
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const run = (session: string, executor: Executor, limits = DISTILL_DEFAULTS, dryRun = false) =>
    engine.distill(sessions, executor, {
      host: 'claude-code',
      session,
      handoff: false,
      dryRun,
      limits,
    });
  const abstracts = async () => (await viewer.memories()).map((v) => v.abstract);

  it('a conflicting value is held as a proposal, not retried', async () => {
    const ref = { host: 'claude-code' as const, session: 'held' };
    await engine.apply(
      [
        {
          op: 'remember',
          type: 'fact',
          abstract: 'Search is Elastic',
          fields: { subject: 'search' },
        },
      ],
      { kind: 'human' },
    );
    await sessions.appendArchive(ref, [msg('user', 'Search moved to Meilisearch.')]);
    const r = await run(
      'held',
      async () =>
        '{"op":"new","type":"fact","abstract":"Search is Meilisearch","fields":{"subject":"search"},"evidence":[[1,1]]}',
    );
    assert.equal(r.held.length, 1);
    assert.equal(r.refused.length, 0);
    assert.deepEqual(await sessions.readState('pending', ref), []);
    assert.ok((await abstracts()).includes('Search is Elastic'));
    assert.ok(!(await abstracts()).includes('Search is Meilisearch'));
  });

  it('a refused operation is kept in pending and retried once on the next run', async () => {
    const ref = { host: 'claude-code' as const, session: 'retry' };
    const [held] = await engine.apply(
      [
        {
          op: 'remember',
          type: 'fact',
          abstract: 'The queue is NATS',
          fields: { subject: 'queue' },
        },
      ],
      { kind: 'human' },
    );
    // The value was once rejected: the distiller's restatement is refused by the tombstone.
    await engine.apply([{ op: 'retract', id: held!.id, reject: true }], { kind: 'human' });
    await sessions.appendArchive(ref, [
      msg('user', 'We replaced RabbitMQ with NATS for the queue.'),
    ]);
    const op =
      '{"op":"new","type":"fact","abstract":"The queue is NATS","fields":{"subject":"queue"},"evidence":[[1,1]]}';
    const first = await run('retry', async () => op);
    assert.equal(first.applied.length, 0);
    assert.match(first.refused[0]!.reason, /rejected before/);
    assert.equal((await sessions.readState<unknown[]>('pending', ref))!.length, 1);
    // A person lifts the rejection; the retry now succeeds without asking the model again.
    const [t] = await engine.tombstones();
    await engine.apply([{ op: 'lift', key: t!.key, scope: t!.scope }], { kind: 'human' });
    let asked = 0;
    const second = await run('retry', async () => {
      asked++;
      return '';
    });
    assert.equal(asked, 0, 'nothing new in the archive: no executor call');
    assert.equal(second.retried.applied, 1);
    assert.deepEqual(await sessions.readState('pending', ref), []);
    assert.ok((await abstracts()).includes('The queue is NATS'));
  });

  it('a second failure is dropped, not retried forever', async () => {
    const ref = { host: 'claude-code' as const, session: 'drop' };
    const [ci] = await engine.apply(
      [
        {
          op: 'remember',
          type: 'fact',
          abstract: 'CI runs on GitHub Actions',
          fields: { subject: 'ci' },
        },
      ],
      { kind: 'human' },
    );
    await engine.apply([{ op: 'retract', id: ci!.id, reject: true }], { kind: 'human' });
    await sessions.appendArchive(ref, [msg('user', 'CI is GitHub Actions now.')]);
    await run(
      'drop',
      async () =>
        '{"op":"new","type":"fact","abstract":"CI runs on GitHub Actions","fields":{"subject":"ci"},"evidence":[[1,1]]}',
    );
    const again = await run('drop', async () => '');
    assert.equal(again.retried.applied, 0);
    assert.equal(again.retried.dropped, 1);
    assert.deepEqual(await sessions.readState('pending', ref), []);
  });

  it('a crash after apply and before the watermark replays without duplicates', async () => {
    const ref = { host: 'claude-code' as const, session: 'crash' };
    await sessions.appendArchive(ref, [
      msg('user', 'Our on-call rotation changes on Mondays.'),
      msg('assistant', 'Noted.'),
    ]);
    const engineOp = {
      op: 'remember' as const,
      type: 'fact',
      abstract: 'On-call rotation changes on Mondays',
      fields: { subject: 'on-call' },
      provenance: ['session:claude-code/crash#1-1'],
      idempotency_key: 'distill:claude-code/crash#1-2:1:abc',
    };
    // Simulate: in-flight file written, ops applied, then the process died.
    await sessions.writeState('inflight', ref, {
      to: 2,
      ops: [{ engineOp, origin: { line: 1, op: 'new' } }],
    });
    await engine.applyEach([engineOp], {
      kind: 'distiller',
      host: 'claude-code',
      session: 'crash',
    });
    let asked = 0;
    const report = await run('crash', async () => {
      asked++;
      return '';
    });
    assert.equal(asked, 0, 'the in-flight batch covered the archive');
    assert.equal(report.applied.length, 0, 'replayed, not applied twice');
    assert.equal(
      (await abstracts()).filter((a) => a === 'On-call rotation changes on Mondays').length,
      1,
    );
    assert.equal(await sessions.readState('inflight', ref), null);
    assert.equal((await sessions.readState<{ line: number }>('distilled', ref))!.line, 2);
  });

  it('the runs-per-hour cap stops the run and says so; the watermark stays where apply left it', async () => {
    const ref = { host: 'claude-code' as const, session: 'capped' };
    sessions.writeShared('runs', []);
    await sessions.appendArchive(ref, [
      msg('user', 'a'.repeat(600)),
      msg('user', 'b'.repeat(600)),
      msg('user', 'c'.repeat(600)),
    ]);
    let asked = 0;
    const report = await run(
      'capped',
      async () => {
        asked++;
        return '{"op":"skip"}';
      },
      { ...DISTILL_DEFAULTS, maxBatchChars: 700, maxRunsPerHour: 1 },
    );
    assert.equal(asked, 1);
    assert.equal(report.batches.length, 1);
    assert.match(report.capped!, /runs per hour/);
    assert.equal((await sessions.readState<{ line: number }>('distilled', ref))!.line, 1);
    sessions.writeShared('runs', []);
  });

  it('broken model output is counted, never fatal', async () => {
    const ref = { host: 'claude-code' as const, session: 'broken' };
    await sessions.appendArchive(ref, [
      msg('user', 'The API base URL is https://api.example.test/v2.'),
    ]);
    const report = await run('broken', async () =>
      [
        '{"op":',
        'null',
        '[1,2]',
        '{"op":"new"}',
        '{"op":"retract","handle":"h1"}',
        '\u0000\u0001',
        '{"op":"new","type":"nope","abstract":"x","evidence":[[1,1]]}',
      ].join('\n'),
    );
    assert.equal(report.malformed.length, 6);
    assert.equal(report.refused.length, 1, 'unknown type refused by the write path');
    assert.equal((await sessions.readState<{ line: number }>('distilled', ref))!.line, 1);
  });
});

describe('mneme distill (CLI)', () => {
  it('--dry-run prints the parsed operations and applies nothing', async () => {
    const w = makeWorld();
    try {
      const a = w.project('alpha', 'git@github.com:acme/alpha.git');
      const ref = { host: 'claude-code' as const, session: 'dry' };
      await new SessionFiles(w.home).appendArchive(ref, [
        msg('user', 'Release branches are cut on Fridays.'),
      ]);
      fs.writeFileSync(
        path.join(w.fake, '1.txt'),
        '{"op":"new","type":"procedure","abstract":"Cut release branches on Fridays","fields":{"subject":"release branches"},"evidence":[[1,1]]}\n',
      );
      const r = w.cli(['distill', '--session', 'dry', '--dry-run'], { cwd: a });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /dry run — 1 operation/);
      assert.match(r.stdout, /Cut release branches on Fridays/);
      const recall = w.json<{ results: unknown[] }>(['recall', 'release branches Fridays'], a);
      assert.equal(recall.results.length, 0);
      // Without --dry-run the same batch is applied.
      fs.writeFileSync(path.join(w.fake, '2.txt'), fs.readFileSync(path.join(w.fake, '1.txt')));
      const real = w.cli(['distill', '--session', 'dry'], { cwd: a });
      assert.equal(real.code, 0, real.stderr);
      assert.match(real.stdout, /applied remember mem_/);
      assert.equal(
        w.json<{ results: unknown[] }>(['recall', 'release branches Fridays'], a).results.length,
        1,
      );
    } finally {
      w.cleanup();
    }
  });

  it('an executor that fails is reported with a non-zero exit, and the watermark does not move', async () => {
    const w = makeWorld();
    try {
      const a = w.project('alpha', 'git@github.com:acme/alpha.git');
      await new SessionFiles(w.home).appendArchive({ host: 'claude-code', session: 'bad' }, [
        msg('user', 'hello there'),
      ]);
      const r = w.cli(
        [
          'distill',
          '--session',
          'bad',
          '--executor',
          'command',
          '--command',
          `"${process.execPath}" -e "process.exit(4)"`,
        ],
        { cwd: a },
      );
      assert.equal(r.code, 1);
      assert.match(r.stdout, /executor failed: .*exited with 4/);
      assert.equal(
        fs.existsSync(path.join(w.home, '.state', 'distilled', 'claude-code', 'bad.json')),
        false,
      );
      const ok = w.cli(['distill', '--session', 'bad'], { cwd: a });
      assert.equal(ok.code, 0, ok.stderr);
    } finally {
      w.cleanup();
    }
  });
});
