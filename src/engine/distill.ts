// Distillation (DESIGN §5 Distil): batches of the archived transcript past the distilled
// watermark go to an executor (a model) with a reconcile sheet; its operation lines are checked
// (handles must be on the sheet, evidence must exist in the batch) and the rest go through the
// one write path as the distiller, at trust `claimed` at most, with provenance into the archive.
// Crash safety: the parsed operations are written in-flight before apply and replayed with the
// same idempotency keys; the watermark advances only after apply.
// Lookups: an output with lookup lines is answered (distill-lookups.ts) and the executor asked
// again, at most `maxRounds` runs per batch, each one a run the cost caps count. The output of
// the last round is the answer: its lookups are stopped (counted), its other lines processed.
import { canonicalJson, sha256 } from '../core/hash.js';
import { parseModelOutput, type ModelOp, type ParsedOutput } from '../core/distill-ops.js';
import { deriveSlug } from '../core/slug.js';
import { messageOf, type Host } from '../core/transcript.js';
import type { Actor } from '../core/types.js';
import type { SessionRef, SessionStore } from '../store/sessions.js';
import { applyEach } from './apply.js';
import type { EngineContext } from './context.js';
import { answerLookups } from './distill-lookups.js';
import {
  buildPrompt,
  buildSheet,
  roundPrompt,
  type BatchMessage,
  type Sheet,
} from './distill-prompt.js';
import {
  addSpend,
  DISTILL_DEFAULTS,
  spendOf,
  type DistillLimits,
  type Executor,
} from './distill-limits.js';

export { DISTILL_DEFAULTS, type DistillLimits, type Executor } from './distill-limits.js';

export interface DistillOptions {
  host: Host;
  session: string;
  /** Allow one handoff memory (PreCompact / SessionEnd). */
  handoff: boolean;
  dryRun: boolean;
  limits: DistillLimits;
}

export interface Refusal {
  line: number | null;
  op: string;
  reason: string;
}

export interface DistillReport {
  session: string;
  host: Host;
  batches: { from: number; to: number; messages: number }[];
  applied: { op: string; id: string; rev: number }[];
  refused: Refusal[];
  /** Conflicting values held for a person as proposals. */
  held: { line: number; op: string; proposal: string }[];
  malformed: { line: number; problem: string }[];
  skipped: number;
  retried: { applied: number; dropped: number };
  capped: string | null;
  dryRun: { line: number; op: ModelOp }[] | null;
  error: string | null;
  lookups: LookupReport;
}

/** What the distiller's lookups did in one invocation (all batches). */
export interface LookupReport {
  /** Executor runs (every round of every batch). */
  rounds: number;
  /** Lookup lines answered. */
  answered: number;
  /** Memories that joined a reconcile sheet through an answer. */
  joined: number;
  /** Lookup lines of a last round: not answered (the model asked for one round too many). */
  stopped: number;
  /** Non-lookup lines of an output that asked lookups (it was asked again instead). */
  ignored: number;
}

interface PlannedOp {
  engineOp: Record<string, unknown> | null;
  origin: { line: number; op: string };
}

interface Inflight {
  to: number;
  ops: PlannedOp[];
}

interface PendingOp extends PlannedOp {
  attempts: number;
  reason: string;
}

const HOUR = 3_600_000;

export async function distillSession(
  ctx: EngineContext,
  sessions: SessionStore,
  executor: Executor,
  opts: DistillOptions,
): Promise<DistillReport> {
  const ref: SessionRef = { host: opts.host, session: opts.session };
  const actor: Actor = { kind: 'distiller', host: opts.host, session: opts.session };
  const report: DistillReport = {
    session: opts.session,
    host: opts.host,
    batches: [],
    applied: [],
    refused: [],
    held: [],
    malformed: [],
    skipped: 0,
    retried: { applied: 0, dropped: 0 },
    capped: null,
    dryRun: opts.dryRun ? [] : null,
    error: null,
    lookups: { rounds: 0, answered: 0, joined: 0, stopped: 0, ignored: 0 },
  };
  const newlyRefused: PendingOp[] = [];

  /**
   * False when the store refuses every write (its journal chain does not verify): nothing is
   * counted as refused, and the in-flight batch and pending ops stay as they were, so the run
   * after a person's repair applies them (same idempotency keys) instead of dropping them.
   */
  const applyPlanned = async (planned: PlannedOp[], attempts: number): Promise<boolean> => {
    if (planned.length === 0) return true;
    const settled = await applyEach(
      ctx,
      planned.map((p) => p.engineOp ?? {}),
      actor,
    );
    const halted = settled.find((s) => !s.ok && s.error.details?.chain === 'broken');
    if (halted && !halted.ok) {
      report.error = `the store accepts no write: ${halted.error.message}`;
      return false;
    }
    settled.forEach((s, i) => {
      const p = planned[i]!;
      if (s.ok) {
        if (!s.result.unchanged && !s.result.replayed)
          report.applied.push({ op: s.result.op, id: s.result.id, rev: s.result.rev });
      } else if (typeof s.error.details?.proposal === 'string') {
        // A conflicting value is already kept for a person in a proposal: not retried.
        report.held.push({
          line: p.origin.line,
          op: p.origin.op,
          proposal: s.error.details.proposal,
        });
      } else {
        const reason = s.error.message;
        report.refused.push({ line: p.origin.line, op: p.origin.op, reason });
        // A restated purged value is not kept for a retry: pending output would hold it again.
        if (s.error.details?.purged !== true) newlyRefused.push({ ...p, attempts, reason });
      }
    });
    return true;
  };

  if (!opts.dryRun) {
    // 1. Finish a batch a crash left in flight (same idempotency keys: no duplicates).
    const inflight = await sessions.readState<Inflight>('inflight', ref);
    if (inflight && Array.isArray(inflight.ops)) {
      if (!(await applyPlanned(inflight.ops, 1))) return report;
      await sessions.writeState('distilled', ref, {
        line: inflight.to,
        at: ctx.clock().toISOString(),
      });
      await sessions.removeState('inflight', ref);
    }
    // 2. Retry what was refused last time, once; then drop it (the refusal is journaled).
    const pending = (await sessions.readState<PendingOp[]>('pending', ref)) ?? [];
    const retry = pending.filter((p) => p.attempts < 2 && p.engineOp);
    const before = report.applied.length;
    const refusedBefore = newlyRefused.length;
    if (!(await applyPlanned(retry, 2))) {
      await sessions.writeState('pending', ref, [...pending, ...newlyRefused]);
      return report;
    }
    report.retried.applied = report.applied.length - before;
    // Second failures are dropped, not kept.
    const dropped = newlyRefused.splice(refusedBefore);
    report.retried.dropped = dropped.length + (pending.length - retry.length);
    await sessions.writeState('pending', ref, newlyRefused);
  }

  let watermark = (await sessions.readState<{ line: number }>('distilled', ref))?.line ?? 0;
  const total = await sessions.archiveLineCount(ref);
  for (let b = 0; b < opts.limits.maxBatches && watermark < total; b++) {
    const lines = await sessions.readArchive(ref, watermark + 1);
    const messages: BatchMessage[] = [];
    let chars = 0;
    let last = watermark;
    const perMessage = Math.max(500, Math.floor(opts.limits.maxBatchChars / 2));
    for (const l of lines) {
      const m = messageOf(l.raw);
      if (m) {
        const text =
          m.text.length > perMessage ? `${m.text.slice(0, perMessage)} […truncated]` : m.text;
        if (messages.length > 0 && chars + text.length > opts.limits.maxBatchChars) break;
        chars += text.length;
        messages.push({ ...m, text, n: messages.length + 1, line: l.line });
      }
      last = l.line;
    }
    if (messages.length === 0) {
      if (!opts.dryRun)
        await sessions.writeState('distilled', ref, { line: last, at: ctx.clock().toISOString() });
      watermark = last;
      continue;
    }
    const batchText = messages.map((m) => m.text).join('\n');
    const sheet = await buildSheet(ctx, batchText, opts.limits.sheetSize);
    const base = buildPrompt({
      messages,
      sheet,
      types: ctx.registry.names().filter((t) => opts.handoff || t !== 'handoff'),
      handoff: opts.handoff ? { session: opts.session } : null,
      today: ctx.clock().toISOString().slice(0, 10),
      rounds: rounds(opts.limits),
    });
    const parsed = await converse(ctx, sessions, executor, opts, report, base, sheet);
    if (!parsed) break;
    const from = messages[0]!.line;
    report.batches.push({ from, to: last, messages: messages.length });
    const planned: PlannedOp[] = [];
    let handoffs = 0;
    for (const { line, op } of parsed.ops) {
      if (op.op === 'skip') {
        report.skipped++;
        continue;
      }
      if (opts.dryRun) {
        report.dryRun!.push({ line, op });
        continue;
      }
      // Refused before apply: kept in pending for the record, never retried (it cannot succeed).
      const refuse = (reason: string) => {
        report.refused.push({ line, op: op.op, reason });
        newlyRefused.push({ engineOp: null, origin: { line, op: op.op }, attempts: 2, reason });
      };
      const ranges = op.evidence;
      const bad = ranges.find(([a, c]) => a < 1 || c < a || c > messages.length);
      if (bad) {
        refuse(
          `evidence [${bad[0]},${bad[1]}] is not a range of messages 1-${messages.length} of this batch`,
        );
        continue;
      }
      const provenance = ranges.map(
        ([a, c]) =>
          `session:${opts.host}/${opts.session}#${messages[a - 1]!.line}-${messages[c - 1]!.line}`,
      );
      const key = `distill:${opts.host}/${opts.session}#${from}-${last}:${line}:${sha256(canonicalJson(op)).slice(0, 12)}`;
      const reason = `distilled from session ${opts.host}/${opts.session}`;
      let engineOp: Record<string, unknown>;
      if (op.op === 'new') {
        if (op.type === 'handoff') {
          if (!opts.handoff) {
            refuse('a handoff is written only at PreCompact or SessionEnd');
            continue;
          }
          if (++handoffs > 1) {
            refuse('at most one handoff per session');
            continue;
          }
          engineOp = await handoffOp(ctx, op, opts.session);
        } else {
          engineOp = {
            op: 'remember',
            type: op.type,
            abstract: op.abstract,
            body: op.body,
            fields: op.fields,
            tags: op.tags,
            valid_from: op.valid_from,
          };
        }
      } else {
        const target = sheetTarget(sheet.handles, op.handle);
        if (!target) {
          refuse(
            op.handle.startsWith('mem_')
              ? `${op.handle} is not on the reconcile sheet (a lookup answer that shows it with a handle puts it there)`
              : `handle ${op.handle} is not on the reconcile sheet`,
          );
          continue;
        }
        engineOp =
          op.op === 'retract'
            ? { op: 'retract', id: target, reason: op.reason ? op.reason.slice(0, 900) : reason }
            : {
                op: 'supersede',
                id: target,
                abstract: op.abstract,
                body: op.body,
                fields: op.fields,
                tags: op.tags,
                ...(op.op === 'supersede' && op.valid_from ? { valid_from: op.valid_from } : {}),
              };
      }
      engineOp.provenance = provenance;
      engineOp.idempotency_key = key;
      if (engineOp.reason === undefined) engineOp.reason = reason;
      planned.push({ engineOp, origin: { line, op: op.op } });
    }
    if (opts.dryRun) {
      watermark = last;
      continue;
    }
    await sessions.writeState('inflight', ref, { to: last, ops: planned } satisfies Inflight);
    if (!(await applyPlanned(planned, 1))) return report;
    await sessions.writeState('pending', ref, newlyRefused);
    await sessions.writeState('distilled', ref, { line: last, at: ctx.clock().toISOString() });
    await sessions.removeState('inflight', ref);
    watermark = last;
  }
  return report;
}

/** Today's spend (shared state `spend`, one UTC day kept), after one executor run. */
async function countSpend(
  ctx: EngineContext,
  sessions: SessionStore,
  host: Host,
  promptChars: number,
  outputChars: number,
): Promise<void> {
  const day = ctx.clock().toISOString().slice(0, 10);
  const spend = spendOf(await sessions.readShared('spend'), day);
  await sessions.writeShared('spend', addSpend(spend, host, { promptChars, outputChars }));
}

/** The distiller's use of its caps: executor runs in the last hour, and today's spend. */
export async function distillUsage(ctx: EngineContext, sessions: SessionStore) {
  const now = ctx.clock();
  const runs = ((await sessions.readShared<number[]>('runs')) ?? []).filter(
    (t) => typeof t === 'number' && now.getTime() - t < HOUR,
  );
  return {
    runsLastHour: runs.length,
    today: spendOf(await sessions.readShared('spend'), now.toISOString().slice(0, 10)),
  };
}

/** The memory a handle names: an hN of the sheet, or the id of a memory on the sheet. */
function sheetTarget(handles: Map<string, { id: string }>, h: string): string | null {
  if (!h.startsWith('mem_')) return handles.get(h)?.id ?? null;
  for (const v of handles.values()) if (v.id === h) return h;
  return null;
}

/** Executor rounds per batch; a limit without a whole number takes the default, never "unbounded". */
const rounds = (l: DistillLimits) =>
  Number.isInteger(l.maxRounds) ? Math.max(1, l.maxRounds) : DISTILL_DEFAULTS.maxRounds;

/**
 * Takes one executor run from the runs-per-hour cap (across the store), or says why not.
 */
async function takeRun(sessions: SessionStore, now: number, max: number): Promise<string | null> {
  const runs = ((await sessions.readShared<number[]>('runs')) ?? []).filter(
    (t) => typeof t === 'number' && now - t < HOUR,
  );
  if (runs.length >= max)
    return `runs per hour: ${runs.length} of ${max} used; the rest waits for the next run`;
  await sessions.writeShared('runs', [...runs, now]);
  return null;
}

/**
 * One batch's exchange with the executor: round 1 on the prompt, and while its output asks
 * lookups and rounds remain, the answers appended and the executor asked again. Returns the
 * last round's parsed output, or null when the batch stops (a cap, a failed executor): then
 * nothing of it is applied and the watermark stays.
 */
async function converse(
  ctx: EngineContext,
  sessions: SessionStore,
  executor: Executor,
  opts: DistillOptions,
  report: DistillReport,
  base: string,
  sheet: Sheet,
): Promise<ParsedOutput | null> {
  const max = rounds(opts.limits);
  const answers: string[][] = [];
  for (let round = 1; ; round++) {
    const capped = await takeRun(sessions, ctx.clock().getTime(), opts.limits.maxRunsPerHour);
    if (capped) {
      report.capped = capped;
      return null;
    }
    const prompt = roundPrompt(base, answers, round, max);
    let output: string;
    try {
      output = await executor(prompt);
    } catch (e) {
      await countSpend(ctx, sessions, opts.host, prompt.length, 0);
      report.error = `executor failed: ${(e as Error).message}`;
      return null;
    }
    await countSpend(ctx, sessions, opts.host, prompt.length, output.length);
    report.lookups.rounds++;
    const parsed = parseModelOutput(output);
    const at = (line: number) => (round > 1 ? `round ${round}, line ${line}` : `line ${line}`);
    report.malformed.push(
      ...parsed.malformed.map((m) =>
        round > 1 ? { ...m, problem: `${at(m.line)}: ${m.problem}` } : m,
      ),
    );
    if (parsed.lookups.length === 0) return parsed;
    if (round >= max) {
      // The model asked for a round past the last: its lookups are stopped, its answer stands.
      report.lookups.stopped += parsed.lookups.length;
      for (const l of parsed.lookups)
        report.refused.push({
          line: l.line,
          op: 'lookup',
          reason: `round ${round} was the last of ${max} (distill.max_rounds); the lookup was not answered`,
        });
      return parsed;
    }
    report.lookups.ignored += parsed.ops.filter((o) => o.op.op !== 'skip').length;
    const a = await answerLookups(ctx, sheet, parsed.lookups);
    report.lookups.answered += a.answered;
    report.lookups.joined += a.joined.length;
    answers.push(a.lines);
  }
}

/** One handoff per session: a second one supersedes the first (same subject, same slug). */
async function handoffOp(
  ctx: EngineContext,
  op: Extract<ModelOp, { op: 'new' }>,
  session: string,
): Promise<Record<string, unknown>> {
  const fields = { subject: `session ${session}` };
  const schema = ctx.registry.get('handoff');
  const scope = ctx.binding.project ?? 'global';
  const slug = deriveSlug(schema, fields, op.abstract, '');
  const existing = await ctx.store.findLiveBySlug(scope, 'handoff', slug);
  if (existing)
    return { op: 'supersede', id: existing.id, abstract: op.abstract, body: op.body ?? '' };
  return { op: 'remember', type: 'handoff', abstract: op.abstract, body: op.body, fields };
}
