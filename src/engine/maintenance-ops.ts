// The write path's maintenance ops: `quarantine` (fsck withholds a memory whose stored text
// fails today's screen — it only ever restricts, and a person may release it), and the
// journal-only records `sleep_pass` (a pass's weight watermark, which rebuild replays) and
// `fsck_fix` (the checkpoint that lets an interrupted `fsck --fix` resume without repeating).
import { MnemeError } from '../core/errors.js';
import { toRevision } from '../core/revision.js';
import type { Actor, Revision } from '../core/types.js';
import { loadCurrent, type Built } from './build.js';
import { readableScopes, type EngineContext } from './context.js';
import { journalBody } from './journal-body.js';
import type { ApplyResult, Op, QuarantineOp } from './ops.js';

const ALLOWED: Record<string, Set<string>> = {
  quarantine: new Set(['fsck', 'sleep', 'system', 'human']),
  sleep_pass: new Set(['sleep']),
  fsck_fix: new Set(['fsck']),
  // Agents' conflicting writes, screening and hand edits open proposals inside the write path;
  // only maintenance opens one as an op, so no agent, bundle or model writes a proposal's steps.
  propose: new Set(['sleep', 'fsck', 'system']),
};

export function checkMaintenanceActor(op: string, actor: Actor): void {
  if (!ALLOWED[op]?.has(actor.kind))
    throw new MnemeError('refused', `"${op}" is recorded only by mneme's own maintenance`, {
      hint:
        op === 'quarantine'
          ? 'run `mneme fsck`'
          : op === 'propose'
            ? 'write the change you mean (remember, supersede, correct, retract): a conflict with a value a person must decide is held for review by the write path itself'
            : `run \`mneme ${op.split('_')[0]}\``,
    });
}

export async function buildQuarantine(
  ctx: EngineContext,
  op: QuarantineOp,
  actor: Actor,
  now: string,
): Promise<Built> {
  const cur = await loadCurrent(ctx, op.id, op.expected_rev);
  const rules = [...new Set([...(cur.quarantine?.split(', ') ?? []), ...op.rules])].join(', ');
  if (cur.quarantine === rules)
    return { op: op.op, id: cur.id, rev: cur.rev, seq: null, unchanged: true };
  const candidate: Revision = {
    ...toRevision(cur),
    rev: cur.rev + 1,
    op: 'quarantine',
    quarantine: rules,
    review: 'pending',
    recorded_at: now,
    actor,
    provenance: cur.provenance,
    reason: op.reason ?? `stored text fails today's screen (${op.rules.join(', ')})`,
  };
  return { candidate, before: cur, skipScreen: true };
}

export async function journalOnly(
  ctx: EngineContext,
  op: Extract<Op, { op: 'sleep_pass' | 'fsck_fix' }>,
  actor: Actor,
  now: string,
  req: string,
): Promise<ApplyResult> {
  const scopes = readableScopes(ctx.binding);
  const data: Record<string, unknown> =
    op.op === 'sleep_pass'
      ? {
          weights_at: op.weights_at,
          scopes: op.scopes.filter((s) => scopes.includes(s)),
          changed: op.changed,
          ...(op.report ? { report: op.report } : {}),
        }
      : {
          issue: op.issue,
          fix: op.fix,
          scopes,
          ...(op.memory ? { memory: op.memory } : {}),
          ...(op.result ? { result: op.result } : {}),
        };
  const entry = await ctx.store.commit({
    body: journalBody(op, actor, now, req, op.op, null, null, null, data),
    revision: null,
  });
  return { op: op.op, id: op.op === 'fsck_fix' ? (op.memory ?? '') : '', rev: 0, seq: entry.seq };
}
