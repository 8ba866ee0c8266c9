// The review queue (invariant 9): proposals are opened by the system or by agents, and decided
// only by a person. Accepting applies the proposal's drafted ops through the same write path;
// rejecting a proposed value arms a tombstone so it does not come back.
import { MnemeError } from '../core/errors.js';
import { newMemoryId } from '../core/ids.js';
import { normalizeValue } from '../core/normalize.js';
import type { Proposal, ProposalKind } from '../core/proposal.js';
import { toRevision } from '../core/revision.js';
import type { ScreenFinding } from '../core/screen.js';
import type { Actor, Revision, RevisionView } from '../core/types.js';
import { loadCurrent, revisionHash, type Built } from './build.js';
import { readableScopes, type EngineContext } from './context.js';
import { armTombstone } from './gates.js';
import type { ApplyResult, DecideOp, Op, ProposeOp } from './ops.js';
import { journalBody } from './journal-body.js';

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

export function textDiff(before: string, after: string): string {
  const a = before.split('\n');
  const b = after.split('\n');
  const out: string[] = [];
  const max = Math.max(a.length, b.length);
  for (let i = 0; i < max; i++) {
    if (a[i] === b[i]) out.push(`  ${a[i]}`);
    else {
      if (a[i] !== undefined) out.push(`- ${a[i]}`);
      if (b[i] !== undefined) out.push(`+ ${b[i]}`);
    }
  }
  return out.join('\n');
}

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
    [{ op: 'release', id: r.id, expected_rev: r.rev }],
    [{ op: 'retract', id: r.id, reject: true, reason: 'quarantine rejected in review' }],
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
    [{ op: 'confirm', id: edited.id, expected_rev: edited.rev }],
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

export async function applyPropose(
  ctx: EngineContext,
  op: ProposeOp,
  actor: Actor,
  now: string,
  req: string,
): Promise<ApplyResult> {
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
    op.diff ?? '',
    actor,
    now,
  );
  const entry = await ctx.store.commit({
    body: journalBody(op, actor, now, req, 'propose', null, null, null, {
      proposal: p.id,
      kind: p.kind,
      targets: p.targets,
    }),
    revision: null,
    proposal: p,
  });
  return { op: 'propose', id: op.targets[0] ?? '', rev: 0, seq: entry.seq, proposal: p.id };
}

/**
 * A person's decision. Accept applies the drafted ops through the write path (as the person);
 * reject applies the reject drafts, and for a conflict arms a tombstone on the proposed value.
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
  const draft = (p.draft ?? { accept: [], reject: [] }) as {
    accept?: unknown[];
    reject?: unknown[];
  };
  const ops = (op.decision === 'accept' ? draft.accept : draft.reject) ?? [];
  const { Op: OpSchema } = await import('./ops.js');
  const results: ApplyResult[] = [];
  for (const raw of ops) {
    const parsed = OpSchema.safeParse(raw);
    if (!parsed.success)
      throw new MnemeError('corrupt', `proposal ${p.id} holds a malformed draft op`, {
        hint: 'reject it',
      });
    results.push(await applyOp(parsed.data));
  }
  let tombstone = undefined;
  if (op.decision === 'reject' && p.kind === 'conflict') {
    const value = (draft.accept?.[0] as { abstract?: string } | undefined)?.abstract;
    if (value && normalizeValue(value) !== '')
      tombstone = {
        arm: armTombstone(
          value,
          p.scope,
          actor,
          now,
          'review',
          p.targets[0] ?? null,
          op.reason ?? 'rejected in review',
        ),
      };
  }
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
      decision: op.decision,
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
