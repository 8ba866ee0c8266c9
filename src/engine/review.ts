// The review queue (invariant 9): proposals are opened by the system or by agents, and decided
// only by a person. Accepting applies the proposal's drafted ops through the same write path;
// rejecting a proposed value arms a tombstone so it does not come back.
import { MnemeError } from '../core/errors.js';
import { newMemoryId } from '../core/ids.js';
import type { Proposal, ProposalKind } from '../core/proposal.js';
import { toRevision } from '../core/revision.js';
import { textDiff } from '../core/text-diff.js';
import type { ScreenFinding } from '../core/screen.js';
import type { Actor, Revision, RevisionView } from '../core/types.js';
import { loadCurrent, revisionHash, type Built } from './build.js';
import { readableScopes, type EngineContext } from './context.js';
import { armTombstone, passGates } from './gates.js';
import type { ApplyResult, DecideOp, Op, ProposeOp } from './ops.js';
import { journalBody } from './journal-body.js';
import { checkMaintenanceActor } from './maintenance-ops.js';
import { planDecision, refuseBlocked } from './proposal-plan.js';

/** Kinds whose decision effects are derived from the kind (human-only: release, confirm, lift). */
const DERIVED_KINDS = new Set(['quarantine', 'external_edit', 'confirm', 'lift']);

const newProposalId = (ctx: EngineContext) => `prop_${newMemoryId(ctx.clock()).slice(4)}`;

function proposal(
  ctx: EngineContext,
  kind: ProposalKind,
  scope: string,
  targets: string[],
  summary: string,
  accept: unknown[],
  reject: unknown[],
  evidence: string[],
  diff: string,
  createdBy: Actor,
  now: string,
): Proposal {
  return {
    id: newProposalId(ctx),
    kind,
    scope,
    targets,
    summary: summary.slice(0, 500),
    draft: { accept, reject },
    evidence,
    diff,
    created_by: createdBy,
    created_at: now,
    state: 'pending',
    decided_by: null,
    decided_at: null,
    reason: null,
  };
}

export { textDiff };

const show = (r: Pick<Revision, 'abstract' | 'body'>) =>
  r.body ? `${r.abstract}\n\n${r.body}` : r.abstract;

export function conflictProposal(
  ctx: EngineContext,
  existing: RevisionView,
  candidate: Revision,
  actor: Actor,
  now: string,
): Proposal {
  return proposal(
    ctx,
    'conflict',
    existing.scope,
    [existing.id],
    `${actor.kind} wrote a different value for "${existing.fields.subject ?? existing.abstract}": "${candidate.abstract}"`,
    [
      {
        op: 'supersede',
        id: existing.id,
        abstract: candidate.abstract,
        body: candidate.body,
        fields: candidate.fields,
        reason: 'accepted conflicting value in review',
      },
    ],
    [],
    [`memory:${existing.id}#${existing.rev}`, ...candidate.provenance],
    textDiff(show(existing), show(candidate)),
    actor,
    now,
  );
}

export function quarantineProposal(
  ctx: EngineContext,
  r: Revision,
  findings: ScreenFinding[],
  actor: Actor,
  now: string,
): Proposal {
  const rules = [...new Set(findings.filter((f) => f.kind === 'injection').map((f) => f.rule))];
  return proposal(
    ctx,
    'quarantine',
    r.scope,
    [r.id],
    `screening quarantined ${r.id} (${rules.join(', ')}): release it, or reject it to retract and keep it out`,
    // Both sides are derived from the kind when a person decides (proposal-plan.ts).
    [],
    [],
    findings.filter((f) => f.kind === 'injection').map((f) => `screen:${f.rule}: ${f.excerpt}`),
    show(r),
    actor,
    now,
  );
}

export function externalEditProposal(
  ctx: EngineContext,
  before: RevisionView,
  edited: Revision,
  now: string,
): Proposal {
  return proposal(
    ctx,
    'external_edit',
    edited.scope,
    [edited.id],
    `${edited.id} was edited outside mneme`,
    [], // accepting confirms the edit: derived from the kind when a person decides
    [
      {
        op: 'correct',
        id: edited.id,
        abstract: before.abstract,
        body: before.body,
        fields: before.fields,
        reason: 'hand edit rejected in review',
      },
    ],
    edited.provenance,
    textDiff(show(before), show(edited)),
    { kind: 'system' },
    now,
  );
}

/** confirm (trust → confirmed) and release (quarantine lifted): a new revision of the same value. */
export async function applyConfirm(
  ctx: EngineContext,
  op: Extract<Op, { op: 'confirm' | 'release' }>,
  actor: Actor,
  now: string,
): Promise<Built> {
  const cur = await loadCurrent(ctx, op.id, op.expected_rev);
  if (op.op === 'release' && cur.quarantine === null) {
    return { op: op.op, id: cur.id, rev: cur.rev, seq: null, unchanged: true };
  }
  const candidate: Revision = {
    ...toRevision(cur),
    rev: cur.rev + 1,
    op: 'confirm',
    trust: op.op === 'confirm' ? 'confirmed' : cur.trust,
    review: 'none',
    quarantine: op.op === 'release' ? null : cur.quarantine,
    recorded_at: now,
    actor,
    provenance: [...cur.provenance.filter((p) => p !== 'user'), 'user'],
    reason:
      op.reason ??
      (op.op === 'confirm' ? 'confirmed by a person' : 'released from quarantine by a person'),
  };
  // Releasing keeps the text as screened; the screen is not re-run on a person's release.
  return { candidate, before: cur, skipScreen: op.op === 'release' };
}

export async function applyLift(
  ctx: EngineContext,
  op: Extract<Op, { op: 'lift' }>,
  actor: Actor,
  now: string,
  req: string,
): Promise<ApplyResult> {
  if (!readableScopes(ctx.binding).includes(op.scope)) {
    throw new MnemeError('not_found', `no tombstone in scope ${op.scope} from here`, {
      hint: 'run from the project the tombstone belongs to',
    });
  }
  const t = (await ctx.store.tombstones([op.scope])).find((x) => x.key === op.key);
  if (!t)
    throw new MnemeError('not_found', `no armed tombstone ${op.key.slice(0, 12)}… in ${op.scope}`, {
      hint: 'list them with `mneme tombstone list`',
    });
  const entry = await ctx.store.commit({
    body: journalBody(op, actor, now, req, 'lift', null, null, null, {
      tombstone_key: op.key,
      scope: op.scope,
      value: t.value_norm,
    }),
    revision: null,
    tombstone: { lift: { key: op.key, scope: op.scope } },
  });
  return { op: 'lift', id: t.memory ?? '', rev: 0, seq: entry.seq };
}

/**
 * An import re-opens a bundle's conflict only in mneme's own shape — one supersede of one memory
 * it can write — and only for a value that passes this store's screen and tombstones now.
 */
async function checkImportedConflict(
  ctx: EngineContext,
  op: ProposeOp,
  actor: Actor,
  now: string,
): Promise<string> {
  const step = op.accept[0];
  const target = op.targets[0];
  if (
    op.kind !== 'conflict' ||
    op.targets.length !== 1 ||
    op.accept.length !== 1 ||
    (op.reject ?? []).length !== 0 ||
    step?.op !== 'supersede' ||
    step.id !== target
  )
    throw new MnemeError('refused', 'an import re-opens only a conflict over one memory it wrote', {
      hint: 'run `mneme sleep` and `mneme fsck` here to find what else needs a decision',
    });
  const cur = await loadCurrent(ctx, step.id, undefined);
  const candidate: Revision = {
    ...toRevision(cur),
    abstract: step.abstract ?? cur.abstract,
    body: step.body ?? cur.body,
    fields: { ...cur.fields, ...(step.fields ?? {}) },
    recorded_at: now,
    actor,
  };
  const gated = await passGates(ctx, candidate, {
    tombstones: true,
    screen: true,
    before: toRevision(cur),
  });
  if (gated.quarantined)
    throw new MnemeError('refused', 'the imported proposed value fails screening', {
      hint: 'it was not opened for review',
    });
  // The whole change, body and fields included, for the person who decides.
  return textDiff(show(cur), show(candidate));
}

export async function applyPropose(
  ctx: EngineContext,
  op: ProposeOp,
  actor: Actor,
  now: string,
  req: string,
): Promise<ApplyResult> {
  let diff = op.diff ?? '';
  if (actor.kind === 'import') diff = await checkImportedConflict(ctx, op, actor, now);
  else checkMaintenanceActor(op.op, actor);
  if (DERIVED_KINDS.has(op.kind))
    throw new MnemeError(
      'refused',
      `a ${op.kind} proposal is opened only by the write path, from what this store checked`,
      { hint: 'screening, hand-edit detection and confirmation open these themselves' },
    );
  const scope = op.scope ?? ctx.binding.project ?? 'global';
  if (!readableScopes(ctx.binding).includes(scope))
    throw new MnemeError('refused', `cannot propose in scope ${scope} from here`);
  for (const id of op.targets) if (id.startsWith('mem_')) await loadCurrent(ctx, id, undefined);
  const p = proposal(
    ctx,
    op.kind,
    scope,
    op.targets,
    op.summary,
    op.accept,
    op.reject ?? [],
    op.evidence ?? [],
    diff,
    actor,
    now,
  );
  const entry = await ctx.store.commit({
    body: journalBody(op, actor, now, req, 'propose', null, null, null, {
      proposal: p.id,
      kind: p.kind,
      targets: p.targets,
      scope: p.scope,
    }),
    revision: null,
    proposal: p,
  });
  return { op: 'propose', id: op.targets[0] ?? '', rev: 0, seq: entry.seq, proposal: p.id };
}

/**
 * A person's decision. The ops applied are the plan derived now from the proposal's kind,
 * targets and ordinary steps (proposal-plan.ts), the same plan the review surface showed; when
 * the decision carries the hash of the effects shown and they changed since, it is refused.
 */
export async function applyDecide(
  ctx: EngineContext,
  op: DecideOp,
  actor: Actor,
  now: string,
  req: string,
  applyOp: (o: Op) => Promise<ApplyResult>,
): Promise<ApplyResult> {
  const [p] = await ctx.store.proposals({ id: op.proposal, scopes: readableScopes(ctx.binding) });
  if (!p)
    throw new MnemeError('not_found', `no proposal ${op.proposal} in this project or global`, {
      hint: 'list them with `mneme proposals`',
    });
  if (p.state !== 'pending')
    throw new MnemeError('refused', `proposal ${p.id} was already ${p.state}`);
  const plan = await planDecision(ctx, p, op.decision);
  refuseBlocked(p, plan);
  if (op.effects !== undefined && op.effects !== plan.hash)
    throw new MnemeError(
      'conflict',
      `what ${op.decision}ing ${p.id} would do changed since it was shown; nothing was applied`,
      { hint: 'review it again: the effects listed now are the ones that will apply' },
    );
  const results: ApplyResult[] = [];
  for (const o of plan.ops) results.push(await applyOp(o));
  const tombstone = plan.tombstone
    ? {
        arm: armTombstone(
          plan.tombstone,
          p.scope,
          actor,
          now,
          'review',
          p.targets[0] ?? null,
          op.reason ?? 'rejected in review',
        ),
      }
    : undefined;
  const decided: Proposal = {
    ...p,
    state: op.decision === 'accept' ? 'accepted' : 'rejected',
    decided_by: actor,
    decided_at: now,
    reason: op.reason ?? null,
  };
  const entry = await ctx.store.commit({
    body: journalBody(op, actor, now, req, 'decide', null, null, null, {
      proposal: p.id,
      kind: p.kind,
      scope: p.scope,
      decision: op.decision,
      effects: plan.effects,
      applied: results.map((r) => ({ op: r.op, id: r.id, rev: r.rev })),
    }),
    revision: null,
    proposal: decided,
    ...(tombstone ? { tombstone } : {}),
  });
  return {
    op: 'decide',
    id: p.targets[0] ?? '',
    rev: results[results.length - 1]?.rev ?? 0,
    seq: entry.seq,
    proposal: p.id,
  };
}

export { revisionHash };
