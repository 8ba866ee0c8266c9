// What a decision on a proposal will do, derived by mneme when the person decides (invariants 9
// and 14). A proposal stores only its kind, its targets and the ordinary steps its proposer could
// have applied itself (PlanStep); every human-only effect — releasing a quarantine, raising a
// memory to `confirmed` — is derived here from the kind and the targets' state now, never read
// from a stored payload. The review surfaces show `effects` from the same plan that is applied.
import { MnemeError } from '../core/errors.js';
import { sha256 } from '../core/hash.js';
import { isMemoryId } from '../core/ids.js';
import { normalizeValue } from '../core/normalize.js';
import type { Proposal } from '../core/proposal.js';
import type { RevisionView } from '../core/types.js';
import { readableScopes, type EngineContext } from './context.js';
import { PlanStep, type Op } from './ops.js';

export type Decision = 'accept' | 'reject';

export interface DecisionPlan {
  decision: Decision;
  /** The ops the write path applies, as the deciding person, in order. */
  ops: Op[];
  /** The value a rejected conflict keeps out (a tombstone armed with the decision). */
  tombstone: string | null;
  /** Every change the decision makes, in plain words, in the order they happen. */
  effects: string[];
  /** sha256 of the effects: a decision is refused if what it would do changed since shown. */
  hash: string;
  /** Why this side cannot be decided as it stands (a stale or malformed proposal). */
  blocked: string | null;
}

const q = (s: string) => `"${s.length > 120 ? `${s.slice(0, 117)}…` : s}"`;

async function current(ctx: EngineContext, id: string): Promise<RevisionView | null> {
  if (!isMemoryId(id)) return null;
  const lineage = await ctx.store.getLineage(id);
  const cur = lineage?.[lineage.length - 1];
  return cur && readableScopes(ctx.binding).includes(cur.scope) ? cur : null;
}

const confirmedNote = (cur: RevisionView) =>
  cur.trust === 'confirmed' ? ' — overriding a value a person confirmed' : '';

/** What else a revise step changes besides the abstract: body, fields, tags, validity, links. */
function alsoChanges(cur: RevisionView, s: Extract<PlanStep, { op: 'supersede' | 'correct' }>) {
  const parts: string[] = [];
  if (s.body !== undefined && s.body !== cur.body)
    parts.push(
      s.body === '' ? 'empties its body' : `sets its body to ${q(s.body.replace(/\s+/g, ' '))}`,
    );
  for (const [k, v] of Object.entries(s.fields ?? {}))
    if (cur.fields[k] !== v) parts.push(`sets field ${k} to ${q(v)}`);
  if (s.tags !== undefined && s.tags.join(',') !== cur.tags.join(','))
    parts.push(`sets its tags to ${q(s.tags.join(', '))}`);
  if (s.valid_from !== undefined) parts.push(`makes it valid from ${s.valid_from}`);
  if (s.valid_to !== undefined) parts.push(`makes it valid to ${s.valid_to ?? 'open-ended'}`);
  if (s.applies_to !== undefined) parts.push(`makes it apply to ${q(s.applies_to.join(', '))}`);
  if (s.links !== undefined && s.links.length > 0)
    parts.push(
      `adds ${s.links.length} link(s): ${s.links.map((l) => `${l.rel} ${l.target}`).join(', ')}`,
    );
  if (s.source !== undefined) parts.push(`binds it to ${s.source}`);
  return parts.length ? `, and ${parts.join(', ')}` : '';
}

/** Plain words for one ordinary step, against the target's state now. */
async function describeStep(ctx: EngineContext, p: Proposal, s: PlanStep): Promise<string> {
  if (s.op === 'remember') {
    const scope = s.global ? 'global' : p.scope;
    return `adds a new ${s.type} memory in ${scope}: ${q(s.abstract)}`;
  }
  const cur = await current(ctx, s.id);
  if (!cur) return `${s.op}s ${s.id}, which does not exist here (the step will fail)`;
  if (cur.status !== 'active')
    return `${s.op}s ${s.id}, which is already ${cur.state} (the step will fail)`;
  switch (s.op) {
    case 'supersede':
      return `replaces ${s.id} ${q(cur.abstract)} with ${q(s.abstract ?? cur.abstract)}${alsoChanges(cur, s)} (the old value stays in history)${confirmedNote(cur)}`;
    case 'correct':
      return `marks ${s.id}'s value ${q(cur.abstract)} as wrong, replaces it with ${q(s.abstract ?? cur.abstract)}${alsoChanges(cur, s)}, and arms a tombstone so the old value cannot be written again${confirmedNote(cur)}`;
    case 'retract':
      return `withdraws ${s.id} ${q(cur.abstract)}${s.reject ? ' and arms a tombstone so its value cannot be written again' : ''}${confirmedNote(cur)}`;
    case 'link':
      return `links ${s.id} (${s.rel}) to ${s.target}`;
  }
}

/** The stored ordinary steps of one side, each checked against the step vocabulary. */
function storedSteps(p: Proposal, decision: Decision): { steps: PlanStep[]; bad: string | null } {
  const draft = (p.draft ?? {}) as { accept?: unknown; reject?: unknown };
  const raw = draft[decision];
  const list = Array.isArray(raw) ? raw : [];
  const steps: PlanStep[] = [];
  for (const r of list) {
    const parsed = PlanStep.safeParse(r);
    if (!parsed.success) {
      const op = (r as { op?: unknown } | null)?.op;
      return {
        steps: [],
        bad: `it holds a "${typeof op === 'string' ? op.slice(0, 40) : 'malformed'}" step a proposal may not carry`,
      };
    }
    steps.push(parsed.data);
  }
  return { steps, bad: null };
}

/** What accepting or rejecting `p` does now. Pure with respect to the store: reads only. */
export async function planDecision(
  ctx: EngineContext,
  p: Proposal,
  decision: Decision,
): Promise<DecisionPlan> {
  const ops: Op[] = [];
  const effects: string[] = [];
  let tombstone: string | null = null;
  let blocked: string | null = null;
  const target = p.targets[0] ?? '';
  const derived = p.kind === 'quarantine' || p.kind === 'external_edit' || p.kind === 'confirm';

  if (derived && decision === 'accept') {
    const cur = await current(ctx, target);
    if (!cur || cur.status !== 'active') {
      blocked = `${target} is not an active memory here any more`;
    } else if (p.kind === 'quarantine') {
      if (cur.quarantine === null) effects.push(`nothing: ${cur.id} is no longer quarantined`);
      else {
        ops.push({ op: 'release', id: cur.id, expected_rev: cur.rev });
        effects.push(
          `releases ${cur.id} from quarantine (screening found: ${cur.quarantine}); its text ${q(cur.abstract)} becomes servable to agents and may be injected`,
        );
      }
    } else if (p.kind === 'external_edit' && cur.actor.kind !== 'external') {
      blocked = `${cur.id} changed after the hand edit (rev ${cur.rev} is by ${cur.actor.kind}); reject this proposal`;
    } else {
      ops.push({ op: 'confirm', id: cur.id, expected_rev: cur.rev });
      effects.push(
        `raises ${cur.id} to confirmed (trust ${cur.trust} → confirmed), keeping its text ${q(cur.abstract)}`,
      );
    }
  } else if (p.kind === 'quarantine' && decision === 'reject') {
    const cur = await current(ctx, target);
    if (!cur || cur.status !== 'active') effects.push(`nothing: ${target} is no longer active`);
    else {
      const step: PlanStep = {
        op: 'retract',
        id: cur.id,
        reject: true,
        reason: 'quarantine rejected in review',
      };
      ops.push(step);
      effects.push(await describeStep(ctx, p, step));
    }
  } else if (p.kind === 'lift') {
    blocked = 'a tombstone is lifted with `mneme tombstone lift`, not through a proposal';
  } else {
    const { steps, bad } = storedSteps(p, decision);
    if (bad) blocked = `proposal ${p.id} cannot be applied: ${bad}; reject it`;
    for (const s of steps) {
      ops.push(s);
      effects.push(await describeStep(ctx, p, s));
    }
    if (decision === 'reject' && p.kind === 'conflict' && !bad) {
      // The proposed value is the conflict's first step, even when a later one is malformed.
      const raw = ((p.draft ?? {}) as { accept?: unknown }).accept;
      const first = PlanStep.safeParse(Array.isArray(raw) ? raw[0] : undefined);
      const value = first.success && 'abstract' in first.data ? first.data.abstract : undefined;
      if (value && normalizeValue(value) !== '') {
        tombstone = value;
        effects.push(
          `arms a tombstone in ${p.scope} on the proposed value ${q(value)}, so it cannot be written again`,
        );
      }
    }
  }
  if (!blocked) {
    effects.push(
      `marks ${p.id} ${decision === 'accept' ? 'accepted' : 'rejected'} in the journal, as you`,
    );
  }
  return {
    decision,
    ops,
    tombstone,
    effects,
    hash: sha256(JSON.stringify({ decision, effects, blocked })).slice(0, 32),
    blocked,
  };
}

/** Both sides of a pending proposal, for a review surface to show before the decision. */
export async function reviewPlan(ctx: EngineContext, p: Proposal) {
  return {
    accept: await planDecision(ctx, p, 'accept'),
    reject: await planDecision(ctx, p, 'reject'),
  };
}

export function refuseBlocked(p: Proposal, plan: DecisionPlan): void {
  if (plan.blocked)
    throw new MnemeError('refused', `cannot ${plan.decision} ${p.id}: ${plan.blocked}`, {
      hint:
        plan.decision === 'accept'
          ? 'reject the proposal instead, or make the change yourself'
          : 'accept it, or leave it pending',
    });
}
