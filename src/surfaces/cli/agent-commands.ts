// The CLI verbs agents' hosts and their users run: `hook <event>` (called by Claude Code, Codex
// or any host; always exits 0), `distill` (learn memories from archived sessions) and `trace`
// (where a memory came from). Registered by buildProgram.
import { Option } from 'commander';
import { MnemeError } from '../../core/errors.js';
import { safeSessionName, type Host } from '../../core/transcript.js';
import type { DistillReport } from '../../engine/engine.js';
import { appendHookLog } from '../hooks/hook-log.js';
import { DEFAULT_HOOK_HOST, hookCommand } from '../hooks/hook-command.js';
import { HOOK_EVENTS } from '../hooks/payload.js';
import {
  flightFiles,
  release,
  takePending,
  tryAcquire,
  markPending,
} from '../hooks/single-flight.js';
import {
  openArchive,
  openEngine,
  type SessionMeta,
  type SessionRef,
  type SessionStore,
} from '../compose.js';
import { EXECUTOR_CHOICES } from '../config/schema.js';
import { loadSettings } from '../config/settings.js';
import { localRoot } from '../open.js';
import { bindProject } from '../project.js';
import { ExitCode, type CliContext } from './run.js';

export function registerAgentCommands(c: CliContext): void {
  c.program
    .command('hook')
    .description(
      `run one host hook: ${HOOK_EVENTS.join(', ')} (reads the host's JSON on stdin; always exits 0)`,
    )
    .argument('<event>')
    .option('--host <host>', 'claude-code, codex or generic', DEFAULT_HOOK_HOST)
    .allowUnknownOption()
    .action((event: string, o: { host: string }) =>
      hookCommand({
        event,
        host: o.host,
        store: c.globals().store,
        db: c.globals().db,
        tenant: c.globals().tenant,
        config: c.globals().config,
        env: c.io.env,
        cwd: c.io.cwd,
        stdout: c.io.stdout,
      }),
    );

  c.program
    .command('distill')
    .description('learn memories from archived session transcripts through the write path')
    .option('--session <id>', 'the session to distil')
    .option('--pending', 'distil every session with undistilled transcript or pending operations')
    .addOption(
      new Option('--host <host>', 'the host that recorded the session')
        .choices(['claude-code', 'codex', 'generic'])
        .default('claude-code'),
    )
    .addOption(
      new Option(
        '--executor <kind>',
        "the model runner for this run (host: each session's host decides)",
      ).choices([...EXECUTOR_CHOICES]),
    )
    .option(
      '--command <prog>',
      'the program the command executor runs (prompt on stdin, JSON lines out)',
    )
    .option('--dry-run', 'print the parsed operations without applying them')
    .option(
      '--status',
      "show each host's executor, the cost caps and today's spend; distil nothing",
    )
    .option('--handoff', 'allow one handoff memory (the session is ending or compacting)')
    .option(
      '--single-flight',
      'run only if no distiller holds this session; otherwise mark it pending',
    )
    .action(
      async (o: {
        session?: string;
        pending?: boolean;
        host: Host;
        executor?: string;
        command?: string;
        dryRun?: boolean;
        handoff?: boolean;
        singleFlight?: boolean;
        status?: boolean;
      }) => {
        const loaded =
          o.executor !== undefined || o.command !== undefined
            ? loadSettings({ ...c.globals(), executor: o.executor, command: o.command }, c.io.env)
            : c.settings();
        if (o.status) {
          const { distillStatus, formatDistillStatus } = await import('../distill/status.js');
          const engine = await c.engine();
          const st = await distillStatus(engine, loaded, c.io.env);
          c.out(st, () => formatDistillStatus(st));
          return;
        }
        if (!o.session === !o.pending)
          throw new MnemeError('invalid', 'pass --session ID or --pending', {
            hint: 'list archived sessions with `mneme distill --pending --dry-run`',
          });
        const root = localRoot(c.globals(), c.io.env);
        const opened = await openArchive({ settings: c.settings(), env: c.io.env });
        const sessions = opened.archive;
        const { distillSettings, makeExecutor } = await import('../distill/executors.js');
        const { choiceText, executorFor } = await import('../distill/choice.js');
        const targets: SessionRef[] = [];
        // Each session's own binding, as its hook recorded it.
        const metas = new Map<SessionRef, SessionMeta | null>();
        const reports: DistillReport[] = [];
        /** Sessions whose host's executor is off: archived, not distilled. */
        const off: { host: Host; session: string; setting: string }[] = [];
        try {
          if (o.session) targets.push({ host: o.host, session: safeSessionName(o.session) });
          else
            for (const ref of await sessions.archivedSessions())
              if (await hasWork(sessions, ref)) targets.push(ref);
          for (const ref of targets)
            metas.set(ref, await sessions.readState<SessionMeta>('sessions', ref));
        } finally {
          await opened.close();
        }
        for (const ref of targets) {
          const settings = distillSettings(loaded, ref.host);
          if (!settings) {
            off.push({ ...ref, setting: choiceText(executorFor(loaded, ref.host)) });
            continue;
          }
          const runOnce = async (handoff: boolean) => {
            const started = Date.now();
            const meta = metas.get(ref) ?? null;
            const binding = meta
              ? { project: meta.project, identity: meta.identity }
              : bindProject(c.io.cwd);
            const engine = await openEngine({
              settings: c.settings(),
              env: c.io.env,
              binding,
              surface: 'agent',
            });
            try {
              const report = await engine.distill(
                null,
                makeExecutor(settings, c.io.env, meta?.cwd),
                {
                  host: ref.host,
                  session: ref.session,
                  handoff,
                  dryRun: o.dryRun === true,
                  limits: settings.limits,
                },
              );
              reports.push(report);
              appendHookLog(root, {
                at: new Date().toISOString(),
                event: 'distill',
                host: ref.host,
                session: ref.session,
                ms: Date.now() - started,
                outcome: report.error ? 'error' : 'distilled',
                pid: process.pid,
                ...(report.error ? { error: report.error } : {}),
                detail: summary(report),
              });
            } finally {
              await engine.close();
            }
          };
          if (!o.singleFlight || o.dryRun) {
            await runOnce(o.handoff === true);
            continue;
          }
          const flight = flightFiles(root, ref);
          if (!tryAcquire(flight)) {
            markPending(flight, o.handoff === true);
            appendHookLog(root, {
              at: new Date().toISOString(),
              event: 'distill',
              host: ref.host,
              session: ref.session,
              ms: 0,
              outcome: 'coalesced',
              pid: process.pid,
            });
            continue;
          }
          let handoff = o.handoff === true;
          for (;;) {
            try {
              await runOnce(handoff);
            } finally {
              release(flight);
            }
            // A trigger that came while we ran left a marker: take the lock again and go on.
            if (!tryAcquire(flight)) break;
            const pending = takePending(flight);
            if (!pending) {
              release(flight);
              break;
            }
            handoff = pending.handoff;
          }
        }
        c.out(
          { reports, ...(off.length ? { off } : {}) },
          () =>
            [
              ...reports.map(formatReport),
              ...off.map(
                (x) =>
                  `session ${x.host}/${x.session}: not distilled, the distiller is off for ${x.host} sessions (${x.setting}); pass --executor KIND to run it once, or see docs/configuration.md`,
              ),
            ].join('\n\n') || 'nothing to distil',
        );
        if (reports.some((r) => r.error)) throw new ExitCode(1);
      },
    );

  c.program
    .command('trace')
    .description('where a memory came from: its provenance (archived messages) and journal')
    .argument('<id>')
    .action(async (id: string) => {
      const engine = await c.engine();
      const t = await engine.trace(id);
      c.out(t, () => {
        const out: string[] = [];
        for (const r of t.revisions) {
          out.push(
            `rev ${r.rev} ${r.op} · ${r.status} · trust ${r.trust} · ${r.actor.kind}${r.actor.session ? ` (session ${r.actor.session})` : ''} · ${r.recorded_at}`,
          );
          out.push(`  ${r.abstract}`);
          for (const p of r.provenance) {
            out.push(`  ← ${p.pointer}`);
            if (p.session?.missing) out.push(`      (${p.session.missing})`);
            for (const m of p.session?.messages ?? [])
              out.push(`      ${m.line} ${m.role}: ${m.text.replace(/\s+/g, ' ').slice(0, 300)}`);
          }
        }
        out.push('journal:');
        for (const e of t.journal)
          out.push(
            `  #${e.seq} ${e.at} ${e.actor.kind} ${e.op}${e.rev ? ` rev ${e.rev}` : ''}${e.reason ? ` — ${e.reason}` : ''}`,
          );
        return out.join('\n');
      });
    });
}

async function hasWork(sessions: SessionStore, ref: SessionRef): Promise<boolean> {
  const done = (await sessions.readState<{ line: number }>('distilled', ref))?.line ?? 0;
  const pending = (await sessions.readState<unknown[]>('pending', ref)) ?? [];
  return (
    (await sessions.archiveLineCount(ref)) > done ||
    pending.length > 0 ||
    (await sessions.readState('inflight', ref)) !== null
  );
}

function summary(r: DistillReport): Record<string, unknown> {
  return {
    batches: r.batches.length,
    applied: r.applied.length,
    refused: r.refused.length,
    malformed: r.malformed.length,
    skipped: r.skipped,
    retried: r.retried,
    ...(r.lookups.answered || r.lookups.stopped ? { lookups: r.lookups } : {}),
    ...(r.capped ? { capped: r.capped } : {}),
  };
}

function formatReport(r: DistillReport): string {
  const lines = [`session ${r.host}/${r.session}: ${r.batches.length} batch(es)`];
  if (r.dryRun) {
    lines.push(`dry run — ${r.dryRun.length} operation(s), nothing applied:`);
    for (const x of r.dryRun) lines.push(`  line ${x.line}: ${JSON.stringify(x.op)}`);
  }
  for (const a of r.applied) lines.push(`  applied ${a.op} ${a.id} rev ${a.rev}`);
  for (const x of r.refused)
    lines.push(`  refused ${x.op}${x.line ? ` (line ${x.line})` : ''}: ${x.reason}`);
  if (r.malformed.length)
    lines.push(
      `  ${r.malformed.length} malformed line(s): ${r.malformed.map((m) => `${m.line} ${m.problem}`).join('; ')}`,
    );
  if (r.skipped) lines.push(`  ${r.skipped} skip(s)`);
  const l = r.lookups;
  if (l.answered || l.stopped)
    lines.push(
      `  lookups: ${l.answered} answered in ${l.rounds} executor run(s), ${l.joined} memory(ies) joined the sheet, ${l.stopped} stopped past the last round, ${l.ignored} line(s) of a lookup round ignored`,
    );
  if (r.retried.applied || r.retried.dropped)
    lines.push(`  retried pending: ${r.retried.applied} applied, ${r.retried.dropped} dropped`);
  if (r.capped) lines.push(`  capped: ${r.capped}`);
  if (r.error) lines.push(`  error: ${r.error}`);
  return lines.join('\n');
}
