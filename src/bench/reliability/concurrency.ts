// Concurrency across surfaces (DESIGN invariant 2): CLI processes, an MCP server over stdio,
// hooks and distillers write and read one store at the same time. Checked: no acknowledged
// write is lost, concurrent supersedes of one revision have exactly one winner and the others
// get `conflict`, a held lock ends in a clear `locked` error within the bound, a reader looping
// recall never sees a torn state, and two distillers for one session apply its batch once.
// Then the commit point (invariant 13): CLI writers while `mneme rebuild` runs again and again,
// and a write while another process holds the index's lock past the bound — every write that
// exited non-zero has no journal line, and every write with a journal line exited 0.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { safeSessionName } from '../../core/transcript.js';
import { FileStore } from '../../store/files/file-store.js';
import { SessionFiles } from '../../store/files/session-files.js';
import { isAgentVariable } from '../../surfaces/agent-env.js';
import { bindProject } from '../../surfaces/project.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../../..');
const BIN = path.join(ROOT, 'bin', 'mneme.js');
const CHILD = path.join(HERE, 'crash-child.js');
const FAKE_EXECUTOR = path.join(ROOT, 'test', 'fixtures', 'fake-executor.mjs');

export interface ConcurrencyOptions {
  /** CLI writer processes running at once. */
  cliWriters: number;
  /** Operations each writer (CLI loop, MCP client) performs. */
  opsPerWriter: number;
  /** Concurrent supersedes of the same revision per round, and rounds. */
  racers: number;
  rounds: number;
  /** The commit-point phase: writers at once, writes each, and `mneme rebuild` runs meanwhile. */
  commitWriters?: number;
  commitOps?: number;
  rebuilds?: number;
}

export interface CommitPointReport {
  writes: number;
  /** Writes that exited 0 (each must have its journal line). */
  acked: number;
  rebuilds: number;
  rebuildsOk: number;
  /** Writes that exited non-zero although their journal line was written (must be none). */
  failedButCommitted: string[];
  /** Writes that exited 0 with no journal line (must be none). */
  ackedNotCommitted: string[];
  /** A write while another process held the index's write lock past the bound. */
  heldIndex: { exit: number | null; committed: boolean; recalledAfter: boolean; stderr: string };
}

export interface ConcurrencyReport {
  processes: number;
  operations: number;
  writesAcked: number;
  races: { rounds: number; racers: number; winners: number[]; conflicts: number; other: string[] };
  lock: { lockedError: boolean; afterRelease: boolean; message: string };
  reader: { reads: number; served: number };
  distillers: { coalesced: number; appliedOnce: boolean; hookDistilled: boolean };
  commitPoint: CommitPointReport;
  problems: string[];
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  input = '',
  onSpawn?: (pid: number) => void,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env });
    if (onSpawn && child.pid !== undefined) onSpawn(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, fn: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await sleep(50);
  }
}

const msg = (role: 'user' | 'assistant', text: string) =>
  JSON.stringify({ type: role, message: { role, content: text } });
const newOp = (abstract: string) =>
  JSON.stringify({ op: 'new', type: 'fact', abstract, evidence: [[1, 1]] });

export async function runConcurrency(
  opts: ConcurrencyOptions,
  workDir: string,
): Promise<ConcurrencyReport> {
  const home = path.join(workDir, 'store');
  const project = path.join(workDir, 'proj');
  fs.mkdirSync(path.join(project, '.git'), { recursive: true });
  fs.writeFileSync(
    path.join(project, '.git', 'config'),
    '[remote "origin"]\n\turl = https://github.com/acme/concurrency.git\n',
  );
  const fake1 = path.join(workDir, 'fake1');
  const fake2 = path.join(workDir, 'fake2');
  fs.mkdirSync(fake1);
  fs.mkdirSync(fake2);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    MNEME_HOME: home,
    MNEME_DURABLE: '0',
    MNEME_LOCK_TIMEOUT_MS: '30000',
    MNEME_HOOK_TIMEOUT_MS: '30000',
    MNEME_DISTILL_EXECUTOR: 'command',
    MNEME_DISTILL_COMMAND: `"${process.execPath}" "${FAKE_EXECUTOR}"`,
  };
  for (const k of Object.keys(env)) if (k === 'MNEME_AGENT' || isAgentVariable(k)) delete env[k];
  const cli = (
    args: string[],
    extra: NodeJS.ProcessEnv = {},
    input = '',
    onSpawn?: (pid: number) => void,
  ) => run([BIN, '--json', ...args], project, { ...env, ...extra }, input, onSpawn);

  const report: ConcurrencyReport = {
    processes: 0,
    operations: 0,
    writesAcked: 0,
    races: { rounds: opts.rounds, racers: opts.racers, winners: [], conflicts: 0, other: [] },
    lock: { lockedError: false, afterRelease: false, message: '' },
    reader: { reads: 0, served: 0 },
    distillers: { coalesced: 0, appliedOnce: false, hookDistilled: false },
    commitPoint: {
      writes: 0,
      acked: 0,
      rebuilds: 0,
      rebuildsOk: 0,
      failedButCommitted: [],
      ackedNotCommitted: [],
      heldIndex: { exit: null, committed: false, recalledAfter: false, stderr: '' },
    },
    problems: [],
  };
  const acked: { id: string; abstract: string }[] = [];
  const count = (n = 1) => {
    report.processes += n;
    report.operations += n;
  };

  // The memory every racer supersedes.
  const seed = await cli(['remember', '--type', 'fact', '--abstract', 'race target version 0']);
  count();
  if (seed.code !== 0) throw new Error(`seed write failed: ${seed.stderr}`);
  const target = (JSON.parse(seed.stdout) as { id: string }).id;

  // The reader runs for the whole scenario.
  const stopFile = path.join(workDir, 'stop-reader');
  const binding = bindProject(project);
  const reader = run([CHILD, 'read', home, stopFile, '5'], workDir, {
    ...env,
    MNEME_READ_BINDING: JSON.stringify(binding),
  });
  report.processes++;

  // Transcripts: session s1 ends through the Stop hook (its distiller is detached); session s2
  // gets two explicit distillers, the first held at the model call so the second must coalesce.
  const t1 = path.join(workDir, 's1.jsonl');
  fs.writeFileSync(t1, `${msg('user', 'hook session talk')}\n${msg('assistant', 'ok')}\n`);
  fs.writeFileSync(path.join(fake1, '1.txt'), `${newOp('hook distilled papaya fact')}\n`);
  const s2 = safeSessionName('s2');
  const t2 = path.join(workDir, 's2.jsonl');
  fs.writeFileSync(t2, `${msg('user', 'second session talk')}\n`);
  fs.writeFileSync(
    path.join(fake2, '1.txt'),
    `${newOp('distilled guava fact one')}\n${newOp('distilled guava fact two')}\n`,
  );

  const cliWriter = async (w: number) => {
    for (let j = 0; j < opts.opsPerWriter; j++) {
      const abstract = `concurrency writer ${w} op ${j} quince${w}x${j}`;
      const r = await cli(['remember', '--type', 'fact', '--abstract', abstract]);
      count();
      if (r.code === 0) acked.push({ id: (JSON.parse(r.stdout) as { id: string }).id, abstract });
      else report.problems.push(`cli writer ${w} op ${j} failed (${r.code}): ${r.stderr.trim()}`);
      if (j % 2 === 1) {
        const q = await cli(['recall', 'concurrency writer']);
        count();
        if (q.code !== 0) report.problems.push(`cli recall failed: ${q.stderr.trim()}`);
      }
    }
  };

  const mcpClient = async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      cwd: project,
      env: env as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'reliability', version: '1.0.0' });
    report.processes++;
    await client.connect(transport);
    try {
      for (let j = 0; j < opts.opsPerWriter; j++) {
        const abstract = `mcp concurrency note ${j} plum${j}`;
        const w = await client.callTool({
          name: 'remember',
          arguments: { type: 'fact', abstract },
        });
        report.operations++;
        if (w.isError) report.problems.push(`mcp remember failed: ${JSON.stringify(w.content)}`);
        else acked.push({ id: (w.structuredContent as { id: string }).id, abstract });
        const r = await client.callTool({ name: 'recall', arguments: { query: 'concurrency' } });
        report.operations++;
        if (r.isError) report.problems.push(`mcp recall failed: ${JSON.stringify(r.content)}`);
      }
    } finally {
      await client.close();
    }
  };

  const hooks = async () => {
    for (let j = 0; j < 3; j++) {
      const payload = JSON.stringify({ session_id: `start-${j}`, cwd: project, source: 'startup' });
      const r = await cli(['hook', 'session-start'], {}, payload);
      count();
      if (r.code !== 0) report.problems.push(`session-start hook exited ${r.code}`);
    }
    const stop = JSON.stringify({ session_id: 's1', transcript_path: t1, cwd: project });
    const r = await cli(['hook', 'stop'], { FAKE_DIR: fake1 }, stop);
    count();
    if (r.code !== 0) report.problems.push(`stop hook exited ${r.code}`);
  };

  const races = async () => {
    for (let round = 0; round < opts.rounds; round++) {
      const rs = await Promise.all(
        Array.from({ length: opts.racers }, (_, k) =>
          cli([
            'supersede',
            target,
            '--expected-rev',
            String(round + 1),
            '--abstract',
            `race target version ${round + 1} by racer ${k}`,
          ]),
        ),
      );
      count(rs.length);
      report.races.winners.push(rs.filter((r) => r.code === 0).length);
      for (const r of rs) {
        if (r.code === 0) continue;
        if (r.code === 2 && /stale revision/.test(r.stderr)) report.races.conflicts++;
        else report.races.other.push(`exit ${r.code}: ${r.stderr.trim().slice(0, 200)}`);
      }
    }
  };

  const twoDistillers = async () => {
    const dEnv = { FAKE_DIR: fake2, FAKE_GATE_CALLS: '1' };
    const args = ['distill', '--session', 's2', '--host', 'claude-code', '--single-flight'];
    // Archived the way the Stop hook does it, without the hook's own distiller.
    await new SessionFiles(home).appendArchive(
      { host: 'claude-code', session: s2 },
      fs.readFileSync(t2, 'utf8').trim().split('\n'),
    );
    const first = cli(args, dEnv);
    await until('the first distiller to reach the model', () =>
      fs.existsSync(path.join(fake2, 'started-1')),
    );
    const second = await cli(args, dEnv);
    count(2);
    if (second.code !== 0) report.problems.push(`second distiller exited ${second.code}`);
    fs.writeFileSync(path.join(fake2, 'gate-1'), '');
    const r = await first;
    if (r.code !== 0) report.problems.push(`first distiller exited ${r.code}: ${r.stderr}`);
    const log = path.join(home, '.state', 'hooks.log');
    report.distillers.coalesced = fs.existsSync(log)
      ? fs
          .readFileSync(log, 'utf8')
          .split('\n')
          .filter((l) => l.includes('"coalesced"')).length
      : 0;
  };

  await Promise.all([
    ...Array.from({ length: opts.cliWriters }, (_, w) => cliWriter(w)),
    mcpClient(),
    hooks(),
    races(),
    twoDistillers(),
  ]);

  // The Stop hook's detached distiller: wait for its memory, then for its flight lock to go.
  const flights = path.join(home, '.state', 'distill');
  await until('the detached distillers to finish', () => {
    const names = fs.existsSync(flights) ? fs.readdirSync(flights) : [];
    return (
      fs.existsSync(path.join(fake1, 'calls')) &&
      !names.some((n) => n.endsWith('.lock') || n.endsWith('.pending'))
    );
  });
  report.processes++;

  // A held lock: a writer gives up within its bound with a clear `locked` error…
  const lockFile = path.join(home, '.state', 'lock');
  fs.writeFileSync(lockFile, `${process.pid}\n${os.hostname()}\n`);
  const held = await cli(['remember', '--type', 'fact', '--abstract', 'blocked by a held lock'], {
    MNEME_LOCK_TIMEOUT_MS: '300',
  });
  count();
  fs.rmSync(lockFile, { force: true });
  report.lock.message = held.stderr.trim().split('\n')[0] ?? '';
  report.lock.lockedError = held.code === 2 && /locked/.test(held.stderr);
  // …and the same write goes through once the lock is free.
  const freed = await cli(['remember', '--type', 'fact', '--abstract', 'after the lock freed'], {
    MNEME_LOCK_TIMEOUT_MS: '300',
  });
  count();
  report.lock.afterRelease = freed.code === 0;

  fs.writeFileSync(stopFile, '');
  const rd = await reader;
  try {
    const o = JSON.parse(rd.stdout) as { reads: number; served: number; problems: string[] };
    report.reader = { reads: o.reads, served: o.served };
    report.problems.push(...o.problems);
    if (o.served === 0) report.problems.push('the reader was never served anything');
  } catch {
    report.problems.push(`the reader failed: ${rd.stderr.trim()}`);
  }

  // Nothing lost: every acknowledged write is served, the chain verifies, races had one winner.
  const verify = await cli(['journal', 'verify']);
  if (verify.code !== 0) report.problems.push(`journal verify failed: ${verify.stdout}`);
  const store = await FileStore.open(home, { durable: false });
  try {
    for (const a of acked) {
      const lineage = await store.getLineage(a.id);
      if (!lineage || lineage[lineage.length - 1]!.abstract !== a.abstract)
        report.problems.push(`acknowledged write ${a.id} ("${a.abstract}") is lost`);
    }
    report.writesAcked = acked.length;
    const lineage = (await store.getLineage(target)) ?? [];
    if (lineage.length !== opts.rounds + 1)
      report.problems.push(
        `the race target has ${lineage.length} revisions, not ${opts.rounds + 1}`,
      );
    const all = await store.listCurrent([binding.project ?? 'global', 'global'], {
      includeEnded: true,
    });
    const once = (abstract: string) => all.filter((x) => x.abstract === abstract).length === 1;
    report.distillers.appliedOnce =
      once('distilled guava fact one') && once('distilled guava fact two');
    report.distillers.hookDistilled = once('hook distilled papaya fact');
  } finally {
    await store.close();
  }
  if (report.races.winners.some((w) => w !== 1))
    report.problems.push(`supersede races had winners ${report.races.winners.join(',')}, not 1`);
  if (report.races.other.length) report.problems.push(...report.races.other);
  if (!report.lock.lockedError) report.problems.push(`no clear locked error: ${held.stderr}`);
  if (!report.lock.afterRelease)
    report.problems.push(`write after release failed: ${freed.stderr}`);
  if (!report.distillers.appliedOnce)
    report.problems.push('the two distillers did not apply the batch exactly once');
  if (report.distillers.coalesced < 1)
    report.problems.push('the second distiller did not coalesce into the first');
  if (!report.distillers.hookDistilled)
    report.problems.push("the Stop hook's distiller did not apply its batch exactly once");

  report.commitPoint = await commitPoint(opts, home, cli);
  const cp = report.commitPoint;
  report.processes += cp.writes + cp.rebuilds + 2;
  report.operations += cp.writes + cp.rebuilds + 2;
  for (const w of cp.failedButCommitted)
    report.problems.push(`a committed write was reported as failed: ${w}`);
  for (const w of cp.ackedNotCommitted)
    report.problems.push(`a write was acknowledged with no journal line: ${w}`);
  if (cp.acked === 0) report.problems.push('no write succeeded while rebuilds ran');
  if (cp.rebuildsOk === 0) report.problems.push('no rebuild succeeded while writers ran');
  if (cp.heldIndex.exit !== 0 || !cp.heldIndex.committed)
    report.problems.push(
      `a write while the index was held exited ${cp.heldIndex.exit} (journal line ${cp.heldIndex.committed ? 'written' : 'missing'}): ${cp.heldIndex.stderr}`,
    );
  if (!cp.heldIndex.recalledAfter)
    report.problems.push('the write made while the index was held was not recalled afterwards');
  return report;
}

/** Whether process `pid` has `file`'s WAL index open (it has opened the index); Linux /proc. */
function opened(pid: number, file: string): boolean {
  if (pid === 0) return false;
  try {
    const fds = fs.readdirSync(`/proc/${pid}/fd`);
    return fds.some((fd) => {
      try {
        return fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === `${file}-shm`;
      } catch {
        return false;
      }
    });
  } catch {
    return fs.existsSync('/proc') ? false : true; // no /proc: the 300 ms that follow must do
  }
}

/** Idempotency keys of every journal line (each commit-point write carries its own key). */
function journaledKeys(home: string): Set<string> {
  const out = new Set<string>();
  const dir = path.join(home, 'journal');
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.jsonl')))
    for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      try {
        const e = JSON.parse(line) as { idem?: string | null };
        if (e.idem) out.add(e.idem);
      } catch {
        /* a torn tail: no commit */
      }
    }
  return out;
}

async function commitPoint(
  opts: ConcurrencyOptions,
  home: string,
  cli: (
    args: string[],
    extra?: NodeJS.ProcessEnv,
    input?: string,
    onSpawn?: (pid: number) => void,
  ) => Promise<Run>,
): Promise<CommitPointReport> {
  const writers = opts.commitWriters ?? 4;
  const ops = opts.commitOps ?? 6;
  const rebuilds = opts.rebuilds ?? 6;
  const r: CommitPointReport = {
    writes: 0,
    acked: 0,
    rebuilds: 0,
    rebuildsOk: 0,
    failedButCommitted: [],
    ackedNotCommitted: [],
    heldIndex: { exit: null, committed: false, recalledAfter: false, stderr: '' },
  };
  const outcomes: { key: string; code: number | null; stderr: string }[] = [];
  let writing = writers;
  const writer = async (w: number) => {
    for (let j = 0; j < ops; j++) {
      const key = `commit-point-${w}-${j}`;
      const res = await cli([
        'remember',
        '--type',
        'fact',
        '--abstract',
        `commit point writer ${w} write ${j} kumquat${w}x${j}`,
        '--idempotency-key',
        key,
      ]);
      outcomes.push({ key, code: res.code, stderr: res.stderr.trim().split('\n')[0] ?? '' });
    }
    writing--;
  };
  const rebuilder = async () => {
    // At least `rebuilds` runs, and on until the writers are done.
    for (let k = 0; k < rebuilds || writing > 0; k++) {
      const res = await cli(['rebuild']);
      r.rebuilds++;
      if (res.code === 0) r.rebuildsOk++;
    }
  };
  await Promise.all([...Array.from({ length: writers }, (_, w) => writer(w)), rebuilder()]);

  // Another process takes SQLite's write lock on the index after the writer has opened it and
  // keeps it past the writer's bound: the write commits (journal line) and must say so; the
  // index catches up once the lock is free. The writer is held at the store lock until then.
  const { openDatabase } = await import('../../store/files/sqlite.js');
  const indexFile = path.join(home, '.index', 'mneme.db');
  const lockFile = path.join(home, '.state', 'lock');
  const holder = openDatabase(indexFile);
  const heldKey = 'commit-point-held-index';
  let held: Run;
  try {
    fs.writeFileSync(lockFile, `${process.pid}\n${os.hostname()}\n`);
    let pid = 0;
    const writing = cli(
      [
        'remember',
        '--type',
        'fact',
        '--abstract',
        'written while the index was held persimmon',
        '--idempotency-key',
        heldKey,
      ],
      { MNEME_LOCK_TIMEOUT_MS: '3000' },
      '',
      (p) => (pid = p),
    );
    await until('the writer to open the index', () => opened(pid, indexFile), 20_000);
    await sleep(300);
    holder.exec('BEGIN IMMEDIATE');
    fs.rmSync(lockFile, { force: true });
    held = await writing;
    holder.exec('ROLLBACK');
  } finally {
    fs.rmSync(lockFile, { force: true });
    holder.close();
  }
  outcomes.push({ key: heldKey, code: held.code, stderr: held.stderr.trim() });
  const after = await cli(['recall', 'persimmon']);
  r.heldIndex = {
    exit: held.code,
    committed: false,
    recalledAfter:
      after.code === 0 &&
      (JSON.parse(after.stdout) as { results: { abstract: string }[] }).results.some((x) =>
        x.abstract.includes('persimmon'),
      ),
    stderr: held.stderr.trim().split('\n')[0] ?? '',
  };

  const keys = journaledKeys(home);
  r.heldIndex.committed = keys.has(heldKey);
  for (const o of outcomes) {
    r.writes++;
    if (o.code === 0) r.acked++;
    if (o.code !== 0 && keys.has(o.key))
      r.failedButCommitted.push(`${o.key} exited ${o.code}: ${o.stderr}`);
    if (o.code === 0 && !keys.has(o.key)) r.ackedNotCommitted.push(o.key);
  }
  return r;
}
