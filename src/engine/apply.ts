// The one write path (invariant 2). Every mutation from every surface arrives here as an Op:
// validate → scope → idempotency → build the candidate → gates (screening, tombstones) →
// optimistic revision check → trust from the actor → commit (files, journal, index), all under
// the store lock. Refusals are journaled too, and a refused value leaves no memory behind.
import { MnemeError } from '../core/errors.js';
import { isMemoryId } from '../core/ids.js';
import { GLOBAL_SCOPE } from '../core/scope.js';
import type { JournalBody } from '../core/journal.js';
import { journalBody, requestHash } from './journal-body.js';
import { normalizeValue, tombstoneMatcher } from '../core/normalize.js';
import type { Actor, Revision } from '../core/types.js';
import {
  buildExternalEdit,
  buildImport,
  buildLink,
  buildRemember,
  buildRetract,
  buildRevise,
  revisionHash,
  type Built,
} from './build.js';
import { readableScopes, type EngineContext } from './context.js';
import { withArtifactFindings } from './artifacts.js';
import { armTombstone, passGates } from './gates.js';
import { purgeKeyed } from './rejected-here.js';
import { applyCheckSource, buildRevalidate } from './drift.js';
import { buildQuarantine, checkMaintenanceActor, journalOnly } from './maintenance-ops.js';
import { HUMAN_ONLY_OPS, Op, payloadRefusal, type ApplyResult } from './ops.js';
import {
  applyConfirm,
  applyDecide,
  applyLift,
  applyPropose,
  conflictProposal,
  quarantineProposal,
  externalEditProposal,
} from './review.js';

export type Settled = { ok: true; result: ApplyResult } | { ok: false; error: MnemeError };

/** Applies ops one by one (each its own commit) and reports each outcome. */
export async function applyEach(
  ctx: EngineContext,
  ops: unknown[],
  actor: Actor,
): Promise<Settled[]> {
  const parsed = ops.map(parseOp);
  return ctx.store.withWriteLock(async () => {
    const out: Settled[] = [];
    for (const op of parsed) {
      try {
        if (op instanceof MnemeError) throw op;
        out.push({ ok: true, result: await applyLocked(ctx, op, actor) });
      } catch (e) {
        const err = e instanceof MnemeError ? e : new MnemeError('internal', (e as Error).message);
        // A store whose journal chain does not verify journals nothing, refusals included.
        const chainBroken = err.details?.chain === 'broken';
        if (
          (err.code === 'refused' || err.code === 'conflict') &&
          err.details?.journaled !== true &&
          !chainBroken
        )
          await journalRefusal(ctx, op, actor, err);
        out.push({ ok: false, error: err });
      }
    }
    return out;
  });
}

/** Applies ops and throws the first failure (for single-request surfaces). */
export async function apply(
  ctx: EngineContext,
  ops: unknown[],
  actor: Actor,
): Promise<ApplyResult[]> {
  const settled = await applyEach(ctx, ops, actor);
  const failed = settled.find((s) => !s.ok);
  if (failed && !failed.ok) throw failed.error;
  return settled.map((s) => (s as { ok: true; result: ApplyResult }).result);
}

function parseOp(raw: unknown): Op | MnemeError {
  const r = Op.safeParse(raw);
  return r.success ? r.data : payloadRefusal(Op, r.error, 'operation');
}

function refusedScope(ctx: EngineContext, op: Op | MnemeError): string {
  const own = ctx.binding.project ?? GLOBAL_SCOPE;
  if (op instanceof MnemeError) return own;
  if (op.op === 'remember') return op.global ? GLOBAL_SCOPE : own;
  if ('scope' in op && typeof op.scope === 'string') return op.scope;
  if (op.op === 'import') return op.revision.scope;
  return own;
}

async function journalRefusal(
  ctx: EngineContext,
  op: Op | MnemeError,
  actor: Actor,
  err: MnemeError,
) {
  const target = !(op instanceof MnemeError) && 'id' in op && isMemoryId(op.id) ? op.id : null;
  const lineage = target ? await ctx.store.getLineage(target) : null;
  const body: JournalBody = {
    at: ctx.clock().toISOString(),
    actor,
    op: 'refuse',
    target: target && lineage ? { id: target, scope: lineage[0]!.scope } : null,
    before: null,
    after: null,
    reason: err.message,
    idem: null,
    req: op instanceof MnemeError ? null : requestHash(op),
    data: {
      refused: op instanceof MnemeError ? 'unknown' : op.op,
      code: err.code,
      // The scope the refused write was for: `mneme log` shows it only to readers of that scope.
      scope: target && lineage ? lineage[0]!.scope : refusedScope(ctx, op),
      ...(err.details ?? {}),
    },
  };
  await ctx.store.commit({ body, revision: null });
}

/**
 * A memory file edited by hand since its last revision is never silently overwritten: the edit
 * is recorded first (external_edit: actor external, untrusted, review pending, with a proposal)
 * and the write that would have replaced it is refused so its author can look again.
 */
async function refuseOverHandEdit(ctx: EngineContext, before: Revision, actor: Actor) {
  const edit = await ctx.store.handEdited(before);
  if (!edit) return;
  const recorded = await applyLocked(
    ctx,
    { op: 'external_edit', id: before.id, text: edit.text, path: edit.path },
    { kind: 'system', surface: 'write' },
  );
  throw new MnemeError(
    'conflict',
    `${before.id} was edited by hand (${edit.path}); the edit was recorded as rev ${recorded.rev} for review before your ${actor.kind} write could overwrite it`,
    {
      hint: `read it again (\`mneme read ${before.id}\`) and retry against rev ${recorded.rev}`,
      details: { current_rev: recorded.rev, proposal: recorded.proposal },
    },
  );
}

/** Applies one op; the caller holds the write lock. Review decisions re-enter here. */
export async function applyLocked(ctx: EngineContext, op: Op, actor: Actor): Promise<ApplyResult> {
  if (HUMAN_ONLY_OPS.has(op.op) && actor.kind !== 'human') {
    throw new MnemeError(
      'refused',
      `"${op.op}" is a decision only a person can make, on a human surface`,
      {
        hint: 'agents may propose changes; a person decides them',
      },
    );
  }
  const req = requestHash(op);
  if (op.idempotency_key) {
    const prior = await ctx.store.findIdempotent(op.idempotency_key);
    if (prior) {
      if (prior.req !== req) {
        throw new MnemeError(
          'conflict',
          `idempotency key "${op.idempotency_key}" was already used for a different request`,
          {
            hint: 'use a new idempotency key for a new request',
          },
        );
      }
      return {
        op: op.op,
        id: prior.target?.id ?? '',
        rev: prior.after?.rev ?? 0,
        seq: prior.seq,
        replayed: true,
      };
    }
  }
  const now = ctx.clock().toISOString();
  let built: Built;
  switch (op.op) {
    case 'remember':
      built = await buildRemember(ctx, op, actor, now);
      break;
    case 'supersede':
    case 'correct':
      built = await buildRevise(ctx, op, actor, now);
      break;
    case 'retract':
      built = await buildRetract(ctx, op, actor, now);
      break;
    case 'link':
      built = await buildLink(ctx, op, actor, now);
      break;
    case 'import':
      built = await buildImport(ctx, op);
      break;
    case 'external_edit':
      built = await buildExternalEdit(ctx, op, now);
      break;
    case 'confirm':
    case 'release':
      built = await applyConfirm(ctx, op, actor, now);
      break;
    case 'lift':
      return applyLift(ctx, op, actor, now, req);
    case 'decide':
      return applyDecide(ctx, op, actor, now, req, (o) => applyLocked(ctx, o, actor));
    case 'propose':
      return applyPropose(ctx, op, actor, now, req);
    case 'check_source':
      return applyCheckSource(ctx, op, actor, now);
    case 'revalidate':
      built = await buildRevalidate(ctx, op, actor, now);
      break;
    case 'quarantine':
      checkMaintenanceActor(op.op, actor);
      built = await buildQuarantine(ctx, op, actor, now);
      break;
    case 'sleep_pass':
    case 'fsck_fix':
      checkMaintenanceActor(op.op, actor);
      return journalOnly(ctx, op, actor, now, req);
    case 'arm': {
      if (!readableScopes(ctx.binding).includes(op.scope))
        throw new MnemeError('refused', `cannot arm a tombstone in scope ${op.scope} from here`);
      const t = armTombstone(op.value, op.scope, actor, now, 'import', null, op.reason ?? null);
      // Its own key, and what the '' gram indexes (purged values among them): flat in how
      // many tombstones the scope holds.
      const armed = await ctx.store.tombstoneCandidates(op.scope, { keys: [t.key], grams: [''] });
      if (armed.some((x) => x.key === t.key))
        return { op: op.op, id: '', rev: 0, seq: null, unchanged: true };
      // A purged value is guarded already, by keyed hashes: arming it again in clear (an older
      // bundle's tombstone) would bring its text back into the store.
      const purged = armed.filter((x) => x.kind === 'purged');
      if (
        purged.length > 0 &&
        tombstoneMatcher(purged, op.scope, await purgeKeyed(ctx, purged)).value(op.value)
      )
        return { op: op.op, id: '', rev: 0, seq: null, unchanged: true };
      const entry = await ctx.store.commit({
        body: journalBody(op, actor, now, req, 'arm', null, null, null, {
          tombstone_key: t.key,
          scope: t.scope,
        }),
        revision: null,
        tombstone: { arm: t },
      });
      return { op: op.op, id: '', rev: 0, seq: entry.seq };
    }
    case 'set_passphrase': {
      const entry = await ctx.store.commit({
        body: journalBody(op, actor, now, req, 'set_passphrase', null, null, null, {
          salt: op.salt,
          hash: op.hash,
        }),
        revision: null,
      });
      return { op: op.op, id: '', rev: 0, seq: entry.seq };
    }
  }
  if (!('candidate' in built)) return built;
  if (built.before && op.op !== 'external_edit' && op.op !== 'import')
    await refuseOverHandEdit(ctx, built.before, actor);
  const isImport = op.op === 'import';
  let gated = await passGates(ctx, built.candidate, {
    tombstones: !isImport || (op.revision.rev === op.final_rev && op.final_active === true),
    screen: built.skipScreen !== true,
    before: built.before,
  });
  if (built.artifact && !built.conflictWith) gated = withArtifactFindings(gated, built.artifact);
  const revision: Revision = gated.revision;

  if (built.conflictWith) {
    // The candidate is kept only inside the proposal; no memory unit is created for it.
    const proposal = conflictProposal(ctx, built.conflictWith, revision, actor, now);
    // A correction proposed over a person's confirmed value is accepted as a correction.
    const confirmed = built.before?.id === built.conflictWith.id;
    if (confirmed && op.op === 'correct') {
      const accept = (proposal.draft as { accept: Record<string, unknown>[] }).accept;
      accept[0] = { ...accept[0], op: 'correct' };
    }
    const entry = await ctx.store.commit({
      body: journalBody(
        op,
        actor,
        now,
        req,
        'propose',
        { id: built.conflictWith.id, scope: built.conflictWith.scope },
        null,
        null,
        { proposal: proposal.id, kind: 'conflict' },
      ),
      revision: null,
      proposal,
    });
    throw new MnemeError(
      'conflict',
      confirmed
        ? `${built.conflictWith.id} was confirmed by a person; your ${op.op} was not applied but held for a person to review (${proposal.id})`
        : `${built.conflictWith.id} already holds a different value for this subject; your value was held for a person to review (${proposal.id})`,
      {
        hint: 'the existing memory stays in effect until a person decides',
        details: {
          existing: built.conflictWith.id,
          proposal: proposal.id,
          seq: entry.seq,
          journaled: true,
        },
      },
    );
  }

  const tombstone =
    op.op === 'correct' &&
    built.before &&
    normalizeValue(built.before.abstract) !== normalizeValue(revision.abstract)
      ? armTombstone(
          built.before.abstract,
          built.before.scope,
          actor,
          now,
          'correct',
          built.before.id,
          op.reason ?? null,
        )
      : op.op === 'retract' && op.reject
        ? armTombstone(
            revision.abstract,
            revision.scope,
            actor,
            now,
            'forget',
            revision.id,
            op.reason ?? null,
          )
        : null;
  const importedQuarantine =
    isImport &&
    !gated.quarantined &&
    revision.quarantine !== null &&
    revision.status === 'active' &&
    op.revision.rev === op.final_rev;
  if (importedQuarantine) revision.review = 'pending';
  const proposal = gated.quarantined
    ? quarantineProposal(ctx, revision, gated.findings, actor, now)
    : importedQuarantine
      ? quarantineProposal(
          ctx,
          revision,
          [
            {
              kind: 'injection' as const,
              rule: revision.quarantine!,
              excerpt: 'quarantined in the store the bundle came from',
            },
          ],
          actor,
          now,
        )
      : op.op === 'quarantine'
        ? quarantineProposal(
            ctx,
            revision,
            op.rules.map((rule, i) => ({
              kind: 'injection' as const,
              rule,
              excerpt: op.evidence?.[i] ?? 'found by fsck with the current screen',
            })),
            actor,
            now,
          )
        : op.op === 'external_edit' && built.before
          ? externalEditProposal(ctx, built.before, revision, now)
          : undefined;
  // The bytes are kept before the journal line that references them (the commit point).
  if (built.artifact)
    await ctx.store.artifacts.put(built.artifact.ref.sha256, built.artifact.bytes);
  const entry = await ctx.store.commit({
    body: journalBody(
      op,
      actor,
      now,
      req,
      op.op === 'retract' && op.reject ? 'forget' : op.op,
      { id: revision.id, scope: revision.scope },
      built.before ? { rev: built.before.rev, hash: revisionHash(built.before) } : null,
      { rev: revision.rev, hash: revisionHash(revision) },
      proposal || built.freshSource || built.artifact
        ? {
            ...(proposal ? { proposal: proposal.id } : {}),
            ...(built.freshSource ? { source_bound: true } : {}),
            ...(built.artifact
              ? { artifact: { sha256: built.artifact.ref.sha256, size: built.artifact.ref.size } }
              : {}),
          }
        : undefined,
    ),
    revision,
    ...(tombstone ? { tombstone: { arm: tombstone } } : {}),
    ...(proposal ? { proposal } : {}),
  });
  return {
    op: op.op,
    id: revision.id,
    rev: revision.rev,
    seq: entry.seq,
    trust: revision.trust,
    ...(gated.quarantined ? { quarantined: true } : {}),
    ...(gated.redacted.length > 0 ? { redacted: gated.redacted } : {}),
    ...(proposal ? { proposal: proposal.id } : {}),
  };
}
