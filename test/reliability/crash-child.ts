// The process the crash suite kills: it writes to a store through the real engine and, when
// MNEME_CRASH_POINT names a fault point, SIGKILLs itself the MNEME_CRASH_AT-th time that point is
// reached — no cleanup, no finally blocks, exactly what a host killing a hook does.
// `node crash-child.js <write|rebuild|distill|purge> <store> <tag> <count|id>`; every acknowledged write
// is appended to <store>/../acks-<tag>.log before the next one starts.
import fs from 'node:fs';
import path from 'node:path';
import { SchemaRegistry } from '../../src/core/schema.js';
import { DISTILL_DEFAULTS, Engine, type OpInput } from '../../src/engine/engine.js';
import { FileStore } from '../../src/store/files/file-store.js';
import { SessionFiles } from '../../src/store/files/session-files.js';
import { CRASH_BINDING } from './kill.js';

const [mode, storeDir, tag, countText] = process.argv.slice(2);
const point = process.env.MNEME_CRASH_POINT ?? '';
const at = Number(process.env.MNEME_CRASH_AT ?? '1');
let hits = 0;
const faultPoint = (name: string) => {
  if (name === point && ++hits === at) process.kill(process.pid, 'SIGKILL');
};

const acks = path.join(path.dirname(storeDir!), `acks-${tag}.log`);
const ack = (line: string) => fs.appendFileSync(acks, `${line}\n`);

const store = await FileStore.open(storeDir!, {
  durable: false,
  lockTimeoutMs: 10_000,
  faultPoint,
});
const engineFor = (binding: typeof CRASH_BINDING) =>
  new Engine({
    store,
    clock: () => new Date(),
    registry: new SchemaRegistry(),
    binding,
    surface: 'human',
  });
const engine = engineFor(CRASH_BINDING);
const actor = { kind: 'agent' as const, session: tag };
const count = Number(countText);

if (mode === 'write') {
  // A mix of every kind of revision: new lineages, supersessions, corrections, retractions.
  const mine: string[] = [];
  for (let i = 0; i < count; i++) {
    const target = mine.length > 0 ? mine[i % mine.length]! : null;
    const kind =
      !target || i % 4 === 0 ? 'remember' : (['supersede', 'correct', 'retract'] as const)[i % 3]!;
    const words = `${tag} step ${i} kiwi${i} crash`;
    const op =
      kind === 'remember'
        ? { op: 'remember', type: 'fact', abstract: `note ${words}`, body: `body of ${words}` }
        : kind === 'retract'
          ? { op: 'retract', id: target, reason: `retract ${words}` }
          : { op: kind, id: target, abstract: `revised ${words}`, reason: `revise ${words}` };
    const settled = await engine.applyEach([op as OpInput], actor);
    const s = settled[0]!;
    if (s.ok) {
      ack(`ok ${s.result.id} ${s.result.rev} ${s.result.seq}`);
      if (kind === 'remember') mine.push(s.result.id);
      if (kind === 'retract') mine.splice(mine.indexOf(target!), 1);
    } else {
      ack(`refused ${s.error.code} ${s.error.message.replace(/\n/g, ' ')}`);
    }
  }
} else if (mode === 'batch') {
  // Group commits: each apply carries several ops (one lock, one sync); a later op of a group
  // acts on what an earlier one wrote (a new memory corrected, then superseded, in one apply).
  const mine: string[] = [];
  for (let b = 0; b * 4 < count; b++) {
    const words = (i: number) => `${tag} batch ${b} op ${i} fig${b}x${i} crash`;
    const first = await engine.applyEach(
      [
        { op: 'remember', type: 'fact', abstract: `note ${words(0)}`, body: `body ${words(0)}` },
        { op: 'remember', type: 'fact', abstract: `note ${words(1)}`, body: `body ${words(1)}` },
      ] as OpInput[],
      actor,
    );
    const ids = first.flatMap((s) => (s.ok ? [s.result.id] : []));
    for (const s of first)
      ack(s.ok ? `ok ${s.result.id} ${s.result.rev} ${s.result.seq}` : `refused ${s.error.code}`);
    const target = ids[0] ?? mine[0];
    const old = mine.shift();
    const ops = [
      { op: 'remember', type: 'fact', abstract: `note ${words(2)}` },
      ...(target
        ? [
            { op: 'correct', id: target, abstract: `corrected ${words(3)}`, reason: 'fix' },
            { op: 'supersede', id: target, abstract: `superseded ${words(4)}`, reason: 'newer' },
          ]
        : []),
      ...(old ? [{ op: 'retract', id: old, reason: `retract ${words(5)}` }] : []),
      { op: 'remember', type: 'fact', abstract: `note ${words(6)}` },
    ];
    const settled = await engine.applyEach(ops as OpInput[], actor);
    for (const s of settled)
      ack(s.ok ? `ok ${s.result.id} ${s.result.rev} ${s.result.seq}` : `refused ${s.error.code}`);
    mine.push(...ids.slice(1));
  }
} else if (mode === 'import') {
  // A batch import (engine/bundle.ts): a bundle made in a store of its own (no faults there),
  // imported a few lineages per chunk, so the kill lands inside one chunk's group commit. A
  // chunk's lineages are acknowledged once importBundle reports the chunk done (after its sync).
  const srcDir = path.join(path.dirname(storeDir!), `import-src-${tag}`);
  fs.rmSync(srcDir, { recursive: true, force: true });
  const src = await FileStore.open(srcDir, { durable: false });
  const source = new Engine({
    store: src,
    clock: () => new Date(),
    registry: new SchemaRegistry(),
    binding: CRASH_BINDING,
    surface: 'human',
  });
  for (let i = 0; i < count; i++) {
    const words = `${tag} imported ${i} plum${i} crash`;
    const [r] = await source.applyEach(
      [{ op: 'remember', type: 'fact', abstract: `note ${words}`, body: `body ${words}` }],
      { kind: 'human', surface: 'cli' },
    );
    if (r?.ok && i % 2 === 0)
      await source.applyEach(
        [{ op: 'supersede', id: r.result.id, abstract: `newer ${words}`, reason: 'newer' }],
        { kind: 'human', surface: 'cli' },
      );
  }
  const bundle = await source.exportBundle();
  await source.close();
  fs.rmSync(srcDir, { recursive: true, force: true });
  const text = JSON.stringify(bundle);
  const memories = (bundle as { memories: { id: string; revisions: { rev: number }[] }[] })
    .memories;
  let acked = 0;
  const report = await engine.importBundle(text, `crash-${tag}`, actor, {
    chunkOps: 4,
    onProgress: (done) => {
      for (const m of memories.slice(acked, done))
        for (const r of m.revisions) ack(`ok ${m.id} ${r.rev} -`);
      acked = done;
    },
  });
  if (report.refused.length > 0) {
    process.stderr.write(`import refused: ${JSON.stringify(report.refused)}\n`);
    process.exit(3);
  }
} else if (mode === 'rebuild') {
  await engine.rebuild();
  ack('rebuilt');
} else if (mode === 'distill') {
  // The executor is in-process here: the crash under test is the apply, not the model call.
  const sessions = new SessionFiles(storeDir!, false);
  const lines = Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      op: 'new',
      type: 'fact',
      abstract: `distilled ${tag} point ${i} mango${i}`,
      evidence: [[1, 1]],
    }),
  ).join('\n');
  const report = await engine.distill(sessions, async () => lines, {
    host: 'generic',
    session: tag!,
    handoff: false,
    dryRun: false,
    limits: { ...DISTILL_DEFAULTS, maxRunsPerHour: 1_000_000 },
  });
  for (const a of report.applied) ack(`ok ${a.id} ${a.rev} -`);
} else if (mode === 'purge') {
  // A person's purge of memory <count> (an id here), killed at a point inside it; the redo
  // record must let recovery finish the erasure. MNEME_PURGE_ALSO names a further string.
  const also = process.env.MNEME_PURGE_ALSO;
  const r = await engine.purge(
    { id: countText!, reason: 'leaked credential', ...(also ? { also: [also] } : {}) },
    { kind: 'human', surface: 'cli' },
  );
  ack(`purged ${r.id} ${r.seq}`);
} else if (mode === 'read') {
  // A reader looping recall while others write: every served revision must exist in its
  // lineage as the lineage's active head at some point — never a torn, half-written state.
  const stopFile = tag!;
  const reader = engineFor(JSON.parse(process.env.MNEME_READ_BINDING!));
  let reads = 0;
  let served = 0;
  const problems: string[] = [];
  const words = ['concurrency', 'writer', 'mcp', 'distilled', 'race'];
  while (!fs.existsSync(stopFile) || reads < count) {
    try {
      const res = await reader.recall(words[reads % words.length]!, { limit: 20, logUsage: false });
      for (const r of res.results) {
        served++;
        const lineage = await store.getLineage(r.id);
        const rev = lineage?.find((v) => v.rev === r.rev);
        if (!rev) problems.push(`served ${r.id} rev ${r.rev} without that revision in its lineage`);
        else if (rev.abstract !== r.abstract) problems.push(`served ${r.id} rev ${r.rev} torn`);
      }
    } catch (e) {
      problems.push(`recall failed: ${(e as Error).message}`);
    }
    reads++;
    await new Promise((r) => setTimeout(r, 5)); // leave the cores to the writers
  }
  process.stdout.write(JSON.stringify({ reads, served, problems: problems.slice(0, 20) }));
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
await engine.close();
