// `mneme hook <event>`: one run of one hook. Reads the host's payload, binds the project from
// the payload's cwd, does its job (inject, or archive + usage + distiller), and answers in the
// host's dialect. It never throws: every failure becomes a log line and an empty answer.
import fs from 'node:fs';
import path from 'node:path';
import { citedIds } from '../../core/citation.js';
import { messageOf, safeSessionName, type Host } from '../../core/transcript.js';
import { MnemeError } from '../../core/errors.js';
import type { Engine, InjectOptions } from '../../engine/engine.js';
import { readInputFile } from '../input-file.js';
import { openEngine, type SessionRef, type SessionStore } from '../compose.js';
import { loadSettings, type LoadedSettings } from '../config/settings.js';
import { choiceText, executorFor } from '../distill/choice.js';
import { childStore, localRoot, type StoreFlags } from '../open.js';
import { bindProject, findRepoRoot } from '../project.js';
import { appendHookLog, type HookRecord } from './hook-log.js';
import { hookOutput } from './output.js';
import { parsePayload, type HookEvent, type HookPayload } from './payload.js';
import { isDue } from '../sleep-schedule.js';
import { archiveIncrement, checkTranscript } from './transcript-increment.js';

export interface HookRun extends StoreFlags {
  event: HookEvent;
  host: Host;
  stdin: string;
  env: NodeJS.ProcessEnv;
  /** The settings, when the caller loaded them (else loaded from the flags and `env`). */
  settings?: LoadedSettings;
  /** The process cwd, used when the payload names none. */
  cwd: string;
}

interface InjectedState {
  ids: string[];
  cited: string[];
  ignored: string[];
}

/** The largest source file a pre-edit block hashes (as the engine's own source reads). */
const SOURCE_FILE_BYTES = 8 * 1024 * 1024;

function usableDir(p: string | null): string | null {
  if (!p) return null;
  try {
    return fs.statSync(p).isDirectory() ? p : null;
  } catch {
    return null;
  }
}

export async function runHook(r: HookRun): Promise<{ stdout: string; record: HookRecord }> {
  const started = process.hrtime.bigint();
  const root = localRoot(r, r.env);
  const rec: HookRecord = {
    at: new Date().toISOString(),
    event: r.event,
    host: r.host,
    session: null,
    ms: 0,
    outcome: 'nothing',
  };
  let stdout = '';
  let engine: Engine | null = null;
  try {
    const loaded = r.settings ?? loadSettings(r, r.env);
    const settings = loaded.settings;
    if (settings.hooks.disabled) {
      rec.outcome = 'disabled';
    } else {
      const payload = parsePayload(r.stdin);
      rec.session = payload.sessionId;
      const cwd = usableDir(payload.cwd) ?? r.cwd;
      const binding = bindProject(cwd);
      engine = await openIndexed(r, loaded, root, binding, cwd, rec);
      if (!engine) return { stdout: '', record: finish(rec, started, root) };
      const sessions = engine.archive();
      const ref: SessionRef | null = payload.sessionId
        ? { host: r.host, session: safeSessionName(payload.sessionId) }
        : null;
      const projectRoot = findRepoRoot(cwd)?.root ?? cwd;
      const inject: InjectOptions = {
        projectRoot,
        readFile: (abs) => {
          try {
            // A regular file of bounded size: a FIFO or device at a bound path must not hang
            // or flood the hook.
            return readInputFile(abs, { cap: SOURCE_FILE_BYTES, what: 'the source file' });
          } catch {
            return null;
          }
        },
        weightFloor: settings.inject.weight_floor,
      };
      const ctx = { r, loaded, settings, payload, engine, sessions, ref, cwd, root, inject, rec };
      stdout = await dispatch(ctx);
    }
  } catch (e) {
    rec.outcome = 'error';
    rec.error = (e as Error).message.slice(0, 500);
    stdout = '';
  } finally {
    if (engine) await engine.close().catch(() => {});
  }
  return { stdout, record: finish(rec, started, root) };
}

function finish(rec: HookRecord, started: bigint, root: string): HookRecord {
  rec.ms = Number((process.hrtime.bigint() - started) / 1_000_000n);
  appendHookLog(root, rec);
  return rec;
}

/**
 * The engine, or null when the index must first be rebuilt whole (an index of an older schema,
 * after an upgrade): that can take seconds, so the hook starts one detached `mneme rebuild`,
 * injects nothing this time, and says so in the log.
 */
async function openIndexed(
  r: HookRun,
  settings: LoadedSettings,
  root: string,
  binding: ReturnType<typeof bindProject>,
  cwd: string,
  rec: HookRecord,
): Promise<Engine | null> {
  try {
    const opts = {
      store: r.store,
      db: r.db,
      tenant: r.tenant,
      env: r.env,
      settings,
      binding,
      cwd,
      surface: 'agent' as const,
    };
    return await openEngine({ ...opts, deferRebuild: true });
  } catch (e) {
    if (!(e instanceof MnemeError) || e.details?.rebuild !== 'needed') throw e;
    const { lockHolder, spawnDistiller } = await import('./single-flight.js');
    const flight = { lock: path.join(root, '.state', 'rebuild.pid'), pending: '' };
    const running = lockHolder(flight);
    let pid = running;
    if (running === null) {
      const child = childStore(r, r.env);
      pid = spawnDistiller([...child.args, 'rebuild'], cwd, child.env);
      if (pid !== null) fs.writeFileSync(flight.lock, String(pid));
    }
    rec.outcome = 'rebuilding';
    rec.detail = {
      index: 'needs a full rebuild; nothing injected until it is done',
      rebuild:
        running !== null
          ? `running, pid ${running}`
          : pid
            ? `started pid ${pid}`
            : 'could not start',
    };
    return null;
  }
}

interface Ctx {
  r: HookRun;
  loaded: LoadedSettings;
  settings: LoadedSettings['settings'];
  payload: HookPayload;
  engine: Engine;
  sessions: SessionStore;
  ref: SessionRef | null;
  cwd: string;
  root: string;
  inject: InjectOptions;
  rec: HookRecord;
}

async function dispatch(c: Ctx): Promise<string> {
  switch (c.r.event) {
    case 'session-start':
      return sessionStart(c);
    case 'pre-tool-use':
      return preToolUse(c);
    case 'user-prompt-submit':
      return promptSubmit(c);
    case 'stop':
    case 'session-end':
    case 'pre-compact':
      await archiveAndDistill(c);
      return '';
  }
}

async function rememberInjected(c: Ctx, ids: string[]) {
  if (!c.ref || ids.length === 0) return;
  const st = (await c.sessions.readState<InjectedState>('injected', c.ref)) ?? {
    ids: [],
    cited: [],
    ignored: [],
  };
  st.ids = [...new Set([...st.ids, ...ids])];
  await c.sessions.writeState('injected', c.ref, st);
}

async function injected(
  c: Ctx,
  text: string,
  ids: string[],
  extra: Record<string, unknown>,
): Promise<string> {
  if (text === '') {
    c.rec.detail = extra;
    return '';
  }
  c.rec.outcome = 'injected';
  c.rec.detail = { ...extra, ids: ids.length, bytes: Buffer.byteLength(text) };
  await rememberInjected(c, ids);
  return hookOutput(c.r.host, c.r.event, text);
}

async function sessionStart(c: Ctx): Promise<string> {
  // Sleep runs without a cron: when due, a detached `mneme sleep --if-due` does the pass.
  let sleep: Record<string, string> = {};
  if (c.settings.sleep.auto && isDue(c.root, new Date(), c.settings.sleep.interval_hours)) {
    const child = childStore(c.r, c.r.env);
    const args = [...child.args, 'sleep', '--if-due'];
    const { spawnDistiller } = await import('./single-flight.js'); // child_process: only when due
    sleep = { sleep: spawnDistiller(args, c.cwd, child.env) !== null ? 'started' : 'failed' };
  }
  // The knowledge index (where the project has one) is refreshed by one detached process, so
  // the hook never waits on hashing the repository's documents.
  let knowledge: Record<string, string> = {};
  if (c.settings.knowledge.refresh_on_start && (await c.engine.knowledgeIndexed())) {
    const { lockHolder, spawnDistiller } = await import('./single-flight.js');
    const flight = { lock: path.join(c.root, '.state', 'knowledge.pid'), pending: '' };
    const running = lockHolder(flight);
    if (running !== null) knowledge = { knowledge: `refresh running, pid ${running}` };
    else {
      const child = childStore(c.r, c.r.env);
      const pid = spawnDistiller([...child.args, 'knowledge', 'refresh'], c.cwd, child.env);
      if (pid !== null) {
        fs.mkdirSync(path.dirname(flight.lock), { recursive: true });
        fs.writeFileSync(flight.lock, String(pid));
      }
      knowledge = {
        knowledge: pid !== null ? `refresh started, pid ${pid}` : 'refresh could not start',
      };
    }
  }
  const res = await c.engine.injectSessionStart({
    ...c.inject,
    maxBytes: c.settings.inject.max_bytes,
    maxLines: c.settings.inject.max_lines,
  });
  return injected(c, res.text, res.ids, {
    candidates: res.candidates,
    admitted: res.admitted,
    ...sleep,
    ...knowledge,
  });
}

async function preToolUse(c: Ctx): Promise<string> {
  if (c.payload.filePaths.length === 0) {
    c.rec.detail = { tool: c.payload.toolName, files: 0 };
    return '';
  }
  for (const file of c.payload.filePaths) {
    const res = await c.engine.injectFile(path.resolve(c.cwd, file), {
      ...c.inject,
      maxBytes: c.settings.inject.file_max_bytes,
      maxLines: c.settings.inject.file_max_lines,
    });
    if (res.text !== '') return injected(c, res.text, res.ids, { tool: c.payload.toolName, file });
  }
  c.rec.detail = { tool: c.payload.toolName, files: c.payload.filePaths.length };
  return '';
}

async function promptSubmit(c: Ctx): Promise<string> {
  if (!c.settings.hooks.prompt) {
    c.rec.outcome = 'disabled';
    c.rec.detail = {
      hint: 'hooks.prompt is false (config.toml or MNEME_PROMPT_HOOK=0); set it to true, or remove it, to recall on each prompt',
    };
    return '';
  }
  const prompt = c.payload.prompt ?? '';
  if (prompt.trim() === '') return '';
  const res = await c.engine.injectPrompt(prompt, {
    ...c.inject,
    scoreFloor: c.settings.hooks.prompt_score_floor,
    knowledge: c.settings.hooks.prompt_knowledge,
  });
  return injected(c, res.text, res.ids, { results: res.candidates });
}

async function archiveAndDistill(c: Ctx): Promise<void> {
  if (!c.ref) throw new Error('the payload has no session_id');
  // A session can end without ever having written a transcript (each `claude mcp list` fires
  // SessionEnd with the path of a file it never created): nothing to archive, not a failure.
  // A Stop or PreCompact comes after a turn, which always writes one: there it stays an error.
  const ended = c.r.event === 'session-end';
  const none = (why: string) => {
    c.rec.detail = { transcript: `${why}: nothing to archive` };
  };
  if (!c.payload.transcriptPath) {
    if (ended) return none('no transcript_path in the payload');
    throw new Error('the payload has no transcript_path');
  }
  const checked = checkTranscript(c.payload.transcriptPath, c.cwd);
  if ('problem' in checked) {
    if (checked.missing && ended) return none('the transcript file does not exist');
    throw new Error(checked.problem);
  }
  const binding = c.engine.binding;
  await c.sessions.writeState('sessions', c.ref, {
    host: c.r.host,
    session: c.ref.session,
    sessionId: c.payload.sessionId,
    cwd: c.cwd,
    project: binding.project,
    identity: binding.identity,
    transcript: checked.file,
    updated_at: new Date().toISOString(),
  });
  const inc = await archiveIncrement(c.sessions, c.ref, checked.file);
  const detail: Record<string, unknown> = { archived: inc ? inc.lines.length : 0 };
  if (inc) {
    c.rec.outcome = 'archived';
    await recordCitations(c, inc.lines, detail);
  }
  // Distil when there is something new, or when the context is ending (a handoff may be due).
  const handoff = c.r.event !== 'stop';
  const choice = executorFor(c.loaded, c.r.host);
  if ((inc || handoff) && choice.kind === 'off') {
    detail.distiller = `off: ${choiceText(choice)}`;
  } else if (inc || handoff) {
    const { flightFiles, lockHolder, markPending, spawnDistiller } =
      await import('./single-flight.js');
    const flight = flightFiles(c.root, c.ref);
    if (lockHolder(flight) !== null) {
      markPending(flight, handoff);
      detail.distiller = 'coalesced: one is running; marked pending';
    } else {
      const child = childStore(c.r, c.r.env);
      const args = [
        ...child.args,
        'distill',
        '--session',
        c.ref.session,
        '--host',
        c.r.host,
        '--single-flight',
        ...(handoff ? ['--handoff'] : []),
      ];
      const pid = spawnDistiller(args, c.cwd, child.env);
      detail.distiller = pid ? `started pid ${pid}` : 'could not start';
    }
  }
  c.rec.detail = detail;
}

async function recordCitations(c: Ctx, lines: string[], detail: Record<string, unknown>) {
  const ref = c.ref!;
  const spoken = lines
    .map(messageOf)
    .filter((m) => m?.role === 'assistant')
    .map((m) => m!.text)
    .join('\n');
  const st = (await c.sessions.readState<InjectedState>('injected', ref)) ?? {
    ids: [],
    cited: [],
    ignored: [],
  };
  const visible = new Set(c.engine.scopes);
  const cited: string[] = [];
  for (const id of citedIds(spoken)) {
    const v = await c.engine.current(id);
    if (v && visible.has(v.scope)) cited.push(id);
  }
  const ignored = st.ids.filter(
    (id) => !cited.includes(id) && !st.cited.includes(id) && !st.ignored.includes(id),
  );
  const now = new Date().toISOString();
  const events = [];
  if (cited.length) events.push({ at: now, kind: 'cite' as const, ids: cited, actor: 'hook' });
  if (ignored.length)
    events.push({ at: now, kind: 'ignored' as const, ids: ignored, actor: 'hook' });
  await c.engine.recordUsage(events);
  st.cited = [...new Set([...st.cited, ...cited])];
  st.ignored = [...new Set([...st.ignored, ...ignored])];
  await c.sessions.writeState('injected', ref, st);
  detail.cited = cited.length;
  detail.ignored = ignored.length;
}
