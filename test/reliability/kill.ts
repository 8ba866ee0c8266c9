// Crash safety by fault injection (DESIGN invariants 4 and 12): a child process writes through
// the real engine and is SIGKILLed at a named point inside the write path (or after a random
// delay); then the store is opened (recovery), and the invariant is checked — every committed
// journal entry is present and served, nothing uncommitted is visible, the chain verifies, the
// dead writer's lock does not block the next writer.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseRevision, serializeRevision } from '../../src/core/markdown.js';
import { SchemaRegistry } from '../../src/core/schema.js';
import { revisionHash } from '../../src/engine/build.js';
import { Engine } from '../../src/engine/engine.js';
import { FileStore } from '../../src/store/files/file-store.js';
import { SessionFiles } from '../../src/store/files/session-files.js';

export const CRASH_BINDING = { project: 'crash-0000000c', identity: 'crash' };
/**
 * The fault points of the one-sync commit (store/files/commit.ts): a line written and its index
 * rows staged (per commit of a group), then once per group the sync, and per commit its history
 * file, current file and tombstone/proposal effects, then the index's journal_seq.
 */
export const COMMIT_POINTS = [
  'after-journal',
  'after-index',
  'group-after-sync',
  'group-after-history',
  'group-after-current',
  'group-after-effects',
  'group-after-files',
] as const;

/** The points inside a group commit of several ops (`batch` mode: one apply of many ops). */
export const GROUP_POINTS = [
  'after-journal',
  'after-index',
  'group-after-sync',
  'group-after-history',
  'group-after-current',
  'group-after-effects',
] as const;

/** The fault points inside a purge (store/files/purge-files.ts), the commit point among them. */
export const PURGE_POINTS = [
  'purge-after-pending',
  'after-journal',
  'group-after-sync',
  'purge-after-journal',
  'purge-after-journal-rewrite',
  'purge-after-files',
  'purge-after-revisions',
  'after-index',
] as const;

export type KillMode = 'write' | 'batch' | 'import' | 'rebuild' | 'distill' | 'timed';

export interface KillPoint {
  mode: KillMode;
  /** The fault point (not for `timed`). */
  point?: string;
  /** Kill on the at-th time the point is reached. */
  at?: number;
  /** `timed`: SIGKILL from outside after this many ms. */
  delayMs?: number;
}

export interface KillOutcome {
  spec: KillPoint;
  label: string;
  /** The child died of SIGKILL (false: it finished before the point was reached). */
  killed: boolean;
  /** What the crash left for recovery. */
  left: { lock: boolean; intent: boolean; tornJournal: boolean };
  acked: number;
  problems: string[];
}

export interface KillSummary {
  points: number;
  killed: number;
  notReached: number;
  survived: number;
  failed: number;
  byMode: Record<string, { points: number; killed: number; failed: number }>;
  left: { lock: number; intent: number; tornJournal: number };
  ackedWrites: number;
  committedEntries: number;
  failures: { label: string; problems: string[] }[];
}

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'crash-child.js');

export const labelOf = (p: KillPoint) =>
  p.mode === 'timed' ? `timed@${p.delayMs}ms` : `${p.mode}:${p.point}#${p.at}`;

function runChild(
  args: string[],
  env: NodeJS.ProcessEnv,
  delayMs?: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, ...args], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer =
      delayMs !== undefined ? setTimeout(() => child.kill('SIGKILL'), delayMs) : undefined;
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

/**
 * Kills a child purging memory `id` of the store at `point`: the exit it had, and what it left.
 * The caller opens the store afterwards (recovery) and checks the erasure.
 */
export async function killPurge(
  store: string,
  id: string,
  point: string,
  also?: string,
): Promise<{ killed: boolean; code: number | null; stderr: string; pending: boolean }> {
  const env: NodeJS.ProcessEnv = { ...process.env, MNEME_CRASH_POINT: point, MNEME_CRASH_AT: '1' };
  if (also) env.MNEME_PURGE_ALSO = also;
  else delete env.MNEME_PURGE_ALSO;
  const r = await runChild(['purge', store, `purge-${point}`, id], env);
  return {
    killed: r.signal === 'SIGKILL',
    code: r.code,
    stderr: r.stderr,
    pending: fs.existsSync(path.join(store, '.state', 'purge.json')),
  };
}

/** Runs the points in order against one store that accumulates state (crashes on crashes). */
export async function runKillPoints(
  points: KillPoint[],
  workDir: string,
  onProgress?: (done: number, outcome: KillOutcome) => void,
): Promise<KillSummary & { outcomes: KillOutcome[] }> {
  const store = path.join(workDir, 'store');
  fs.mkdirSync(store, { recursive: true });
  const outcomes: KillOutcome[] = [];
  for (const [i, spec] of points.entries()) {
    const tag = `p${i}`;
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.MNEME_CRASH_POINT;
    delete env.MNEME_CRASH_AT;
    if (spec.point) {
      env.MNEME_CRASH_POINT = spec.point;
      env.MNEME_CRASH_AT = String(spec.at ?? 1);
    }
    let count = 8;
    if (spec.mode === 'distill') {
      await new SessionFiles(store).appendArchive({ host: 'generic', session: tag }, [
        JSON.stringify({ type: 'user', message: { role: 'user', content: `session ${tag}` } }),
      ]);
      count = 5;
    }
    if (spec.mode === 'timed') count = 60;
    if (spec.mode === 'batch') count = 12;
    if (spec.mode === 'import') count = 10;
    const mode = spec.mode === 'timed' ? 'write' : spec.mode;
    const r = await runChild([mode, store, tag, String(count)], env, spec.delayMs);
    const outcome: KillOutcome = {
      spec,
      label: labelOf(spec),
      killed: r.signal === 'SIGKILL',
      left: {
        lock: fs.existsSync(path.join(store, '.state', 'lock')),
        intent: fs.existsSync(path.join(store, '.state', 'intent.json')),
        tornJournal: journalTorn(store),
      },
      acked: 0,
      problems: [],
    };
    if (!outcome.killed && r.code !== 0)
      outcome.problems.push(`the writer failed on its own (exit ${r.code}): ${r.stderr.trim()}`);
    const acks = readAcks(path.join(workDir, `acks-${tag}.log`));
    outcome.acked = acks.length;
    if (spec.mode === 'distill' && outcome.killed) {
      // Run the distiller again with no fault: it must finish the in-flight batch exactly once.
      const again = await runChild(['distill', store, tag, String(count)], {
        ...env,
        MNEME_CRASH_POINT: '',
      });
      if (again.code !== 0)
        outcome.problems.push(`the distiller rerun failed (exit ${again.code}): ${again.stderr}`);
    }
    outcome.problems.push(
      ...(await checkStore(store, readAcks(path.join(workDir, `acks-${tag}.log`)), tag)),
    );
    if (spec.mode === 'distill')
      outcome.problems.push(...(await checkDistilled(store, tag, count)));
    outcomes.push(outcome);
    onProgress?.(i + 1, outcome);
  }
  return { ...summarize(outcomes, store), outcomes };
}

function journalTorn(store: string): boolean {
  const dir = path.join(store, 'journal');
  const segs = fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.jsonl')) : [];
  const last = segs.sort()[segs.length - 1];
  if (!last) return false;
  const text = fs.readFileSync(path.join(dir, last), 'utf8');
  return text !== '' && !text.endsWith('\n');
}

interface Ack {
  id: string;
  rev: number;
  seq: number | null;
}

function readAcks(file: string): Ack[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('ok '))
    .map((l) => {
      const [, id, rev, seq] = l.split(' ');
      return { id: id!, rev: Number(rev), seq: seq === '-' ? null : Number(seq) };
    });
}

function openCrashEngine(store: FileStore): Engine {
  return new Engine({
    store,
    clock: () => new Date(),
    registry: new SchemaRegistry(),
    binding: CRASH_BINDING,
    surface: 'human',
  });
}

/** The invariant after a crash and recovery; returns the problems found (none = survived). */
export async function checkStore(dir: string, acks: Ack[], tag: string): Promise<string[]> {
  const problems: string[] = [];
  let store: FileStore;
  try {
    // A short lock timeout: a dead writer's lock must be broken, not waited out.
    store = await FileStore.open(dir, { durable: false, lockTimeoutMs: 3_000 });
  } catch (e) {
    return [`recovery failed on open: ${(e as Error).message}`];
  }
  const engine = openCrashEngine(store);
  try {
    if (fs.existsSync(path.join(dir, '.state', 'intent.json')))
      problems.push('the intent file survived recovery');
    const v = await engine.verifyJournal();
    if (!v.ok) problems.push(`journal verify: ${JSON.stringify(v.firstBad)}`);

    // Committed revisions according to the journal (the commit point).
    const committed = new Map<string, { hash: string; seq: number }>();
    const maxRev = new Map<string, number>();
    for (const e of await store.journal({})) {
      if (!e.target || !e.after) continue;
      committed.set(`${e.target.id}#${e.after.rev}`, { hash: e.after.hash, seq: e.seq });
      maxRev.set(e.target.id, Math.max(maxRev.get(e.target.id) ?? 0, e.after.rev));
    }
    // Every revision file on disk is committed, byte-for-byte the committed content.
    const historyDir = path.join(dir, 'history');
    const onDisk = new Set<string>();
    for (const id of fs.existsSync(historyDir) ? fs.readdirSync(historyDir) : []) {
      for (const f of fs.readdirSync(path.join(historyDir, id))) {
        if (!/^\d{6}\.md$/.test(f)) {
          problems.push(`stray file history/${id}/${f}`);
          continue;
        }
        const key = `${id}#${Number(f.slice(0, 6))}`;
        onDisk.add(key);
        const c = committed.get(key);
        if (!c) {
          problems.push(`uncommitted revision visible: history/${id}/${f}`);
          continue;
        }
        const r = parseRevision(fs.readFileSync(path.join(historyDir, id, f), 'utf8'));
        if (revisionHash(r) !== c.hash)
          problems.push(`history/${id}/${f} differs from its journal hash`);
      }
    }
    // Every committed revision is on disk and served by the index as the lineage it belongs to.
    for (const key of committed.keys())
      if (!onDisk.has(key)) problems.push(`committed revision ${key} is missing from history/`);
    const scopes = ['global', CRASH_BINDING.project];
    let activeSeen = 0;
    for (const [id, rev] of maxRev) {
      const lineage = await store.getLineage(id);
      const last = lineage?.[lineage.length - 1];
      if (!last || last.rev !== rev) {
        problems.push(`index serves ${id} at rev ${last?.rev ?? 'none'}, journal says ${rev}`);
        continue;
      }
      const current = store.readCurrentFile(last);
      if (last.status === 'active') {
        activeSeen++;
        if (current !== serializeRevision(last))
          problems.push(`memories/ file of ${id} is not its committed rev ${rev}`);
      }
    }
    const indexed = await store.listCurrent(scopes, { includeEnded: true });
    for (const view of indexed)
      if (!maxRev.has(view.id))
        problems.push(`index serves ${view.id}, which the journal never committed`);
    const liveFiles = countFiles(path.join(dir, 'memories'));
    if (liveFiles !== activeSeen)
      problems.push(`${liveFiles} files under memories/ but ${activeSeen} active memories`);
    // Every acknowledged write was committed (an ack is only printed after commit returns).
    for (const a of acks) {
      const c = committed.get(`${a.id}#${a.rev}`);
      if (!c) problems.push(`acknowledged write ${a.id} rev ${a.rev} is not in the journal`);
      else if (a.seq !== null && c.seq !== a.seq)
        problems.push(`acknowledged write ${a.id} rev ${a.rev} has seq ${c.seq}, not ${a.seq}`);
    }
    // Recall serves the latest committed revision of live memories, and no ended one.
    const live = indexed.filter((x) => x.status === 'active' && x.type === 'fact').slice(-3);
    for (const x of live) {
      const res = await engine.recall(x.abstract, { limit: 50, logUsage: false });
      const hit = res.results.find((h) => h.id === x.id);
      if (!hit) problems.push(`recall does not serve live memory ${x.id} ("${x.abstract}")`);
      else if (hit.rev !== x.rev)
        problems.push(`recall serves ${x.id} at rev ${hit.rev}, not ${x.rev}`);
    }
    const ended = indexed.filter((x) => x.status !== 'active').slice(-3);
    for (const x of ended) {
      const res = await engine.recall(x.abstract, { limit: 50, logUsage: false });
      if (res.results.some((h) => h.id === x.id))
        problems.push(`recall serves ${x.status} memory ${x.id}`);
    }
    // The next writer gets the lock and commits.
    try {
      await engine.apply(
        [{ op: 'remember', type: 'fact', abstract: `probe after ${tag} lychee` }],
        {
          kind: 'system',
          surface: 'crash-suite',
        },
      );
    } catch (e) {
      problems.push(`the next write failed: ${(e as Error).message}`);
    }
  } finally {
    await engine.close();
  }
  return problems;
}

/** After a distiller crash and rerun, each model operation was applied exactly once. */
async function checkDistilled(dir: string, tag: string, count: number): Promise<string[]> {
  const store = await FileStore.open(dir, { durable: false, lockTimeoutMs: 3_000 });
  try {
    const all = await store.listCurrent(['global', CRASH_BINDING.project], { includeEnded: true });
    const problems: string[] = [];
    for (let i = 0; i < count; i++) {
      const n = all.filter((x) => x.abstract === `distilled ${tag} point ${i} mango${i}`).length;
      if (n !== 1) problems.push(`distilled op ${i} of ${tag} applied ${n} times, not once`);
    }
    return problems;
  } finally {
    await store.close();
  }
}

function countFiles(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) n += countFiles(path.join(dir, e.name));
    else if (e.name.endsWith('.md')) n++;
  }
  return n;
}

function summarize(outcomes: KillOutcome[], store: string): KillSummary {
  const byMode: KillSummary['byMode'] = {};
  for (const o of outcomes) {
    const m = (byMode[o.spec.mode] ??= { points: 0, killed: 0, failed: 0 });
    m.points++;
    if (o.killed) m.killed++;
    if (o.problems.length) m.failed++;
  }
  const headFile = path.join(store, 'journal', 'HEAD');
  const head = fs.existsSync(headFile)
    ? (JSON.parse(fs.readFileSync(headFile, 'utf8')) as { seq: number })
    : { seq: 0 };
  return {
    points: outcomes.length,
    killed: outcomes.filter((o) => o.killed).length,
    notReached: outcomes.filter((o) => !o.killed).length,
    survived: outcomes.filter((o) => o.killed && o.problems.length === 0).length,
    failed: outcomes.filter((o) => o.problems.length > 0).length,
    byMode,
    left: {
      lock: outcomes.filter((o) => o.left.lock).length,
      intent: outcomes.filter((o) => o.left.intent).length,
      tornJournal: outcomes.filter((o) => o.left.tornJournal).length,
    },
    ackedWrites: outcomes.reduce((n, o) => n + o.acked, 0),
    committedEntries: head.seq,
    failures: outcomes
      .filter((o) => o.problems.length > 0)
      .map((o) => ({ label: o.label, problems: o.problems })),
  };
}

/** A deterministic spread of kill points (seeded), for the long mode. */
export function generatePoints(n: number, seed: number): KillPoint[] {
  let s = seed >>> 0;
  const rand = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const out: KillPoint[] = [{ mode: 'write', point: 'after-index', at: 4 }];
  while (out.length < n) {
    const r = rand();
    if (r < 0.35)
      out.push({ mode: 'write', point: pick(COMMIT_POINTS), at: 1 + Math.floor(rand() * 8) });
    else if (r < 0.52)
      out.push({ mode: 'batch', point: pick(GROUP_POINTS), at: 1 + Math.floor(rand() * 9) });
    else if (r < 0.6)
      // A batch import of 10 lineages (15 revisions) in chunks of 4 ops.
      out.push({ mode: 'import', point: pick(GROUP_POINTS), at: 1 + Math.floor(rand() * 12) });
    else if (r < 0.75) out.push({ mode: 'timed', delayMs: 250 + Math.floor(rand() * 1250) });
    else if (r < 0.87)
      out.push({ mode: 'distill', point: pick(COMMIT_POINTS), at: 1 + Math.floor(rand() * 5) });
    else out.push({ mode: 'rebuild', point: 'during-rebuild', at: 1 + Math.floor(rand() * 20) });
  }
  return out;
}

/** The fixed CI subset: every commit point, a rebuild, distiller applies and a timed kill. */
export const CI_POINTS: KillPoint[] = [
  { mode: 'write', point: 'after-index', at: 3 },
  ...COMMIT_POINTS.map((point, i) => ({
    mode: 'write' as const,
    point,
    // Effects (a correction's tombstone) come on two of a writer's eight commits.
    at: point === 'group-after-effects' ? 2 : 2 + (i % 3),
  })),
  { mode: 'rebuild', point: 'during-rebuild', at: 2 },
  { mode: 'distill', point: 'group-after-history', at: 2 },
  { mode: 'distill', point: 'after-journal', at: 3 },
  { mode: 'distill', point: 'after-index', at: 1 },
  { mode: 'write', point: 'after-journal', at: 1 },
  // Inside a group commit of several ops: after k of N lines, after the sync, between files.
  { mode: 'batch', point: 'after-journal', at: 3 },
  { mode: 'batch', point: 'group-after-sync', at: 1 },
  { mode: 'batch', point: 'group-after-history', at: 2 },
  { mode: 'batch', point: 'group-after-current', at: 5 },
  // Inside a batch import: a line of a later chunk, and between a chunk's sync and its files.
  { mode: 'import', point: 'after-journal', at: 6 },
  { mode: 'import', point: 'group-after-history', at: 2 },
  { mode: 'timed', delayMs: 700 },
];
