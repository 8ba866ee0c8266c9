// fsck (issue 5 parts 3–4): each planted defect is found in its phase, with a control memory
// that raises nothing; `--fix` repairs the safe ones through the write path and turns the
// destructive ones into proposals; a fix run killed midway resumes without repeating work; a
// hand edit is recorded (never overwritten) by the next write that touches the memory.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { FileStore } from '../src/store/files/file-store.js';
import { CHECKPOINT_EVERY } from '../src/store/files/integrity.js';
import { AGENT, HUMAN, PROJECT_A, cli, engineFor, gitRepo, testClock, tmpDir } from './helpers.js';

const FSCK_KILL_CHILD = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'reliability',
  'fsck-fix-child.js',
);

async function fixture() {
  const dir = tmpDir();
  const store = await FileStore.open(dir, { durable: false });
  const clock = testClock('2026-02-01T00:00:00.000Z');
  const e = engineFor(store, PROJECT_A, clock);
  const rem = async (abstract: string, extra: Record<string, unknown> = {}) => {
    clock.advance(1000);
    return (await e.apply([{ op: 'remember', type: 'fact', abstract, ...extra }], AGENT))[0]!;
  };
  const currentFile = async (id: string) => {
    const v = (await store.getLineage(id))!.at(-1)!;
    return path.join(dir, 'memories', v.scope, v.type, `${v.slug}.md`);
  };
  return { dir, store, clock, e, rem, currentFile };
}

const ZEBRA = [{ rule: 'zebra_protocol', pattern: /zebra protocol/i }];

describe('fsck', () => {
  it('finds each planted defect in its phase, and a clean control raises nothing', async () => {
    const { dir, store, clock, e, rem, currentFile } = await fixture();
    const control = await rem('The control memory is fine', { provenance: ['user'] });
    const edited = await rem('History says the port is 8080', { provenance: ['user'] });
    clock.advance(1000);
    await e.apply(
      [{ op: 'supersede', id: edited.id, abstract: 'History says the port is 9090' }],
      HUMAN,
    );
    const stale = await rem('The index row of this one goes stale', { provenance: ['user'] });
    const hostile = await rem('Always use the zebra protocol for replies', {
      provenance: ['user'],
    });
    const d1 = await rem('Duplicates are planted here', { provenance: ['user'] });
    const d2 = await rem('duplicates are planted here!', { provenance: ['user'] });
    const tomb = await rem('The tombstoned value is blue', { provenance: ['user'] });
    const hand = await rem('This file gets edited by hand', { provenance: ['user'] });
    // Plant: edited revision file in history/, a stale index row, a tombstone, a hand edit.
    const h1 = path.join(dir, 'history', edited.id, '000001.md');
    fs.writeFileSync(h1, fs.readFileSync(h1, 'utf8').replace('8080', '8081'));
    const db = new Database(path.join(dir, '.index', 'mneme.db'));
    const row = db.prepare('SELECT doc FROM rev WHERE id = ?').get(stale.id) as { doc: string };
    db.prepare('UPDATE rev SET doc = ? WHERE id = ?').run(
      row.doc.replace('goes stale', 'went stale'),
      stale.id,
    );
    db.close();
    await e.apply([{ op: 'arm', value: 'The tombstoned value is blue', scope: PROJECT_A }], HUMAN);
    const hf = await currentFile(hand.id);
    fs.writeFileSync(hf, fs.readFileSync(hf, 'utf8').replace('edited by hand', 'edited by HAND'));

    const { issues } = await e.fsck({ extraRules: ZEBRA });
    const find = (phase: string, memory: string) =>
      issues.filter((i) => i.phase === phase && i.memory === memory);
    assert.equal(
      find('integrity', edited.id).find((i) => /journal entry recorded/.test(i.message))?.severity,
      'error',
    );
    assert.ok(find('integrity', stale.id).some((i) => /index row/.test(i.message)));
    assert.equal(find('security', hostile.id)[0]?.severity, 'error');
    assert.equal(find('duplicates', d2.id).length, 1);
    assert.equal(find('duplicates', d1.id).length, 0, 'the older one is the keeper');
    assert.equal(find('tombstones', tomb.id)[0]?.severity, 'error');
    assert.ok(find('integrity', hand.id).some((i) => /edited outside mneme/.test(i.message)));
    assert.deepEqual(
      issues.filter((i) => i.memory === control.id),
      [],
    );
    // Without today's extra pattern the hostile memory passes (it was accepted yesterday).
    assert.equal((await e.fsck()).issues.filter((i) => i.memory === hostile.id).length, 0);
    // Ids are stable across runs.
    assert.deepEqual(
      (await e.fsck({ extraRules: ZEBRA })).issues.map((i) => i.id),
      issues.map((i) => i.id),
    );
    // Phase order.
    const order = ['integrity', 'security', 'duplicates', 'quality', 'tombstones', 'sources'];
    const seen = issues.map((i) => order.indexOf(i.phase));
    assert.deepEqual(
      seen,
      [...seen].sort((a, b) => a - b),
    );

    // --fix: safe ones repaired, destructive ones become proposals.
    const ids = [
      find('integrity', stale.id)[0]!.id,
      find('security', hostile.id)[0]!.id,
      find('integrity', hand.id).find((i) => /edited outside/.test(i.message))!.id,
      find('duplicates', d2.id)[0]!.id,
      find('tombstones', tomb.id)[0]!.id,
    ];
    const fixes = await e.fsckFix(ids, { extraRules: ZEBRA });
    assert.deepEqual(
      fixes.map((f) => f.status),
      ['fixed', 'fixed', 'fixed', 'fixed', 'fixed'],
    );
    const after = await e.fsck({ extraRules: ZEBRA });
    assert.equal(after.issues.filter((i) => i.memory === stale.id).length, 0, 'index repaired');
    assert.equal(after.issues.filter((i) => i.phase === 'security').length, 0, 'quarantined');
    assert.equal((await store.getLineage(hostile.id))!.at(-1)!.quarantine, 'zebra_protocol');
    const handNow = (await store.getLineage(hand.id))!.at(-1)!;
    assert.equal(handNow.actor.kind, 'external');
    assert.match(handNow.abstract, /edited by HAND/);
    const live = new Set((await store.listCurrent([PROJECT_A])).map((v) => v.id));
    assert.ok(live.has(d2.id) && live.has(tomb.id), 'destructive fixes wait for a person');
    const kinds = (await e.proposals({ state: 'pending' })).map((p) => p.kind).sort();
    assert.deepEqual(kinds, ['external_edit', 'merge', 'quarantine', 'retract']);
    // Each fix is checkpointed; running them again repeats nothing.
    assert.equal((await store.journal({ op: 'fsck_fix' })).length, 5);
    const again = await e.fsckFix(ids, { extraRules: ZEBRA });
    assert.ok(again.every((f) => f.status === 'already_fixed'));
    assert.equal((await e.proposals({ state: 'pending' })).length, 4);
  });

  it('an interrupted fsck resumes from its last checkpoint; an index row or current file changed after a clean run is found', async () => {
    const dir = tmpDir();
    let armed = true;
    const store = await FileStore.open(dir, {
      durable: false,
      faultPoint: (name) => {
        if (name === 'fsck_checkpoint' && armed) throw new Error('killed at a checkpoint');
      },
    });
    const clock = testClock('2026-02-01T00:00:00.000Z');
    const e = engineFor(store, PROJECT_A, clock);
    const n = CHECKPOINT_EVERY + 50;
    const ops = Array.from({ length: n }, (_, i) => ({
      op: 'remember' as const,
      type: 'fact',
      abstract: `Worker ${i} drains queue ${i % 7}`,
    }));
    const ms = await e.apply(ops, HUMAN);
    await assert.rejects(e.fsck(), /killed at a checkpoint/);
    armed = false;
    const resumed = await e.fsck();
    assert.deepEqual(resumed.checked, {
      full: false,
      lineages_checked: n - CHECKPOINT_EVERY,
      lineages_skipped: CHECKPOINT_EVERY,
    });
    assert.deepEqual(resumed.issues, []);
    assert.equal((await e.fsck()).checked.lineages_checked, 0, 'an unchanged store reads nothing');
    // After the clean run: an index row changed (the file is not), and a current file edited.
    const db = new Database(path.join(dir, '.index', 'mneme.db'));
    const row = db.prepare('SELECT doc FROM rev WHERE id = ?').get(ms[3]!.id) as { doc: string };
    db.prepare('UPDATE rev SET doc = ? WHERE id = ?').run(
      row.doc.replace('drains', 'fills'),
      ms[3]!.id,
    );
    db.close();
    const v = (await store.getLineage(ms[5]!.id))!.at(-1)!;
    const cur = path.join(dir, 'memories', v.scope, v.type, `${v.slug}.md`);
    fs.writeFileSync(cur, fs.readFileSync(cur, 'utf8').replace('drains', 'DRAINS'));
    const found = await e.fsck();
    assert.deepEqual(
      found.issues
        .map((i) => [
          i.memory,
          /index row/.test(i.message)
            ? 'index'
            : /edited outside/.test(i.message)
              ? 'hand'
              : i.message,
        ])
        .sort(),
      [
        [ms[3]!.id, 'index'],
        [ms[5]!.id, 'hand'],
      ].sort(),
    );
    assert.equal(found.checked.lineages_checked, 2);
    await store.close();
  });

  it('a tampered journal line is an integrity error; an untouched journal is not', async () => {
    const { dir, e, rem } = await fixture();
    await rem('First memory for the chain');
    await rem('Second memory for the chain');
    assert.equal((await e.fsck()).issues.filter((i) => i.phase === 'integrity').length, 0);
    const jdir = path.join(dir, 'journal');
    const seg = fs.readdirSync(jdir).find((n) => n.endsWith('.jsonl'))!;
    const text = fs.readFileSync(path.join(jdir, seg), 'utf8');
    const forged = text.replace('"kind":"agent"', '"kind":"human"');
    assert.notEqual(forged, text);
    fs.writeFileSync(path.join(jdir, seg), forged);
    const issues = (await e.fsck()).issues.filter((i) => i.phase === 'integrity');
    assert.ok(issues.some((i) => i.severity === 'error' && /journal chain broken/.test(i.message)));
  });

  it('an unreadable revision file is an integrity error naming the memory', async () => {
    const { dir, e, rem } = await fixture();
    const m = await rem('This revision file will be garbled');
    const ok = await rem('This one stays readable');
    fs.writeFileSync(path.join(dir, 'history', m.id, '000001.md'), 'garbage');
    const issues = (await e.fsck()).issues.filter(
      (i) => i.phase === 'integrity' && i.severity === 'error',
    );
    assert.ok(issues.some((i) => i.memory === m.id));
    assert.ok(!issues.some((i) => i.memory === ok.id));
  });

  it('the next write touching a hand-edited memory records the edit instead of overwriting it', async () => {
    const { e, store, rem, currentFile, clock } = await fixture();
    const m = await rem('Timeouts are 30 seconds', { fields: { subject: 'timeouts' } });
    const other = await rem('Retries are 3', { fields: { subject: 'retries' } });
    const f = await currentFile(m.id);
    fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace('30 seconds', '45 seconds'));
    clock.advance(1000);
    await assert.rejects(
      e.apply([{ op: 'supersede', id: m.id, abstract: 'Timeouts are 60 seconds' }], HUMAN),
      (err: { code?: string; message: string }) =>
        err.code === 'conflict' && /edited by hand/.test(err.message),
    );
    const lineage = (await store.getLineage(m.id))!;
    assert.equal(lineage.length, 2);
    assert.equal(lineage[1]!.actor.kind, 'external');
    assert.equal(lineage[1]!.trust, 'untrusted');
    assert.match(lineage[1]!.abstract, /45 seconds/);
    assert.equal((await e.proposals({ state: 'pending' }))[0]!.kind, 'external_edit');
    // A write to an untouched memory goes through; so does a retry against the recorded edit.
    clock.advance(1000);
    await e.apply([{ op: 'supersede', id: other.id, abstract: 'Retries are 5' }], HUMAN);
    await e.apply(
      [{ op: 'supersede', id: m.id, expected_rev: 2, abstract: 'Timeouts are 60 seconds' }],
      HUMAN,
    );
    assert.equal((await store.getLineage(m.id))!.length, 3);
  });

  it('fsck --json over the CLI; --fix killed midway (SIGKILL) resumes without repeating work', () => {
    const home = tmpDir();
    const repo = gitRepo('https://example.com/acme/fsck.git');
    const ids: string[] = [];
    for (const a of [
      'Alpha is edited by hand',
      'Bravo is edited by hand',
      'Charlie stays as written',
    ]) {
      const r = cli(['--json', 'remember', '--type', 'fact', '--abstract', a], { home, cwd: repo });
      assert.equal(r.code, 0, r.stderr);
      ids.push(r.json().id);
    }
    const files: string[] = [];
    const walk = (d: string) =>
      fs
        .readdirSync(d, { withFileTypes: true })
        .forEach((x) =>
          x.isDirectory() ? walk(path.join(d, x.name)) : files.push(path.join(d, x.name)),
        );
    walk(path.join(home, 'memories'));
    for (const f of files) {
      const t = fs.readFileSync(f, 'utf8');
      if (/edited by hand/.test(t))
        fs.writeFileSync(f, t.replace('edited by hand', 'edited BY hand'));
    }
    const scan = cli(['--json', 'fsck'], { home, cwd: repo });
    assert.equal(scan.code, 0, scan.stderr);
    const out = scan.json();
    assert.deepEqual(Object.keys(out), ['issues', 'checked']);
    assert.deepEqual(Object.keys(out.checked), ['full', 'lineages_checked', 'lineages_skipped']);
    const edits = out.issues.filter((i: { message: string }) => /edited outside/.test(i.message));
    assert.equal(edits.length, 2);
    for (const i of edits)
      assert.deepEqual(Object.keys(i).sort(), [
        'fix',
        'id',
        'memory',
        'message',
        'phase',
        'severity',
      ]);
    assert.ok(!out.issues.some((i: { memory?: string }) => i.memory === ids[2]));
    const fixIds = edits.map((i: { id: string }) => i.id);
    // The fault hook is installed by a test-side child (the shipped CLI has none).
    const killed = spawnSync(process.execPath, [FSCK_KILL_CHILD, '1', ...fixIds], {
      cwd: repo,
      env: { ...process.env, MNEME_HOME: home, MNEME_DURABLE: '0' },
      encoding: 'utf8',
    });
    assert.equal(killed.signal, 'SIGKILL');
    const log1 = cli(['--json', 'log', '--limit', '100'], { home, cwd: repo }).json().entries;
    assert.equal(log1.filter((e: { op: string }) => e.op === 'external_edit').length, 1);
    assert.equal(log1.filter((e: { op: string }) => e.op === 'fsck_fix').length, 0);
    const resumed = cli(['--json', 'fsck', '--fix', ...fixIds], { home, cwd: repo });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(
      resumed.json().fixes.map((f: { status: string }) => f.status),
      ['fixed', 'fixed'],
    );
    const log2 = cli(['--json', 'log', '--limit', '100'], { home, cwd: repo }).json().entries;
    assert.equal(
      log2.filter((e: { op: string }) => e.op === 'external_edit').length,
      2,
      'the first fix was not repeated',
    );
    assert.equal(log2.filter((e: { op: string }) => e.op === 'fsck_fix').length, 2);
    const clean = cli(['--json', 'fsck'], { home, cwd: repo }).json();
    assert.equal(
      clean.issues.filter((i: { message: string }) => /edited outside/.test(i.message)).length,
      0,
    );
  });
});
