// The gates every candidate revision passes before it is stored (invariants 7, 8, 12):
// screening (secrets redacted in place, prompt-injection quarantined) and the tombstone check
// (a rejected value is refused, however it is spelled). Both run inside the write lock.
import { MnemeError } from '../core/errors.js';
import { matchTombstone, normalizeValue, tombstoneKey, type Tombstone } from '../core/normalize.js';
import { screenText, type ScreenFinding } from '../core/screen.js';
import type { Actor, Revision } from '../core/types.js';
import type { EngineContext } from './context.js';
import { guardingScopes } from './rejected-here.js';

export interface GateOutcome {
  revision: Revision;
  redacted: string[];
  quarantined: boolean;
  findings: ScreenFinding[];
}

export function screenRevision(candidate: Revision): GateOutcome {
  const findings: ScreenFinding[] = [];
  const screen = (text: string) => {
    const r = screenText(text);
    findings.push(...r.findings);
    return r.text;
  };
  const revision: Revision = {
    ...candidate,
    abstract: screen(candidate.abstract),
    body: screen(candidate.body),
    fields: Object.fromEntries(Object.entries(candidate.fields).map(([k, v]) => [k, screen(v)])),
    tags: candidate.tags.map(screen),
  };
  const injection = findings.filter((f) => f.kind === 'injection');
  if (injection.length > 0) {
    revision.quarantine = [...new Set(injection.map((f) => f.rule))].join(', ');
    revision.review = 'pending';
  }
  const redacted = [...new Set(findings.filter((f) => f.kind === 'secret').map((f) => f.rule))];
  return { revision, redacted, quarantined: injection.length > 0, findings };
}

/** Refuses a value that matches an armed tombstone of its scope. */
export async function checkTombstones(
  ctx: EngineContext,
  scope: string,
  texts: string[],
): Promise<void> {
  const tombstones = await ctx.store.tombstones([scope]);
  if (tombstones.length === 0) return;
  for (const text of texts) {
    const hit = matchTombstone(tombstones, scope, text);
    if (hit) {
      throw new MnemeError(
        'refused',
        `this value was rejected before and may not be written again ("${hit.value_norm.slice(0, 80)}", rejected ${hit.at.slice(0, 10)} by ${hit.actor.kind}${hit.reason ? `: ${hit.reason}` : ''})`,
        {
          hint: 'write a different value; only a person can allow a rejected value again',
          details: { tombstone: hit.key },
        },
      );
    }
  }
}

export async function passGates(
  ctx: EngineContext,
  candidate: Revision,
  opts: { tombstones: boolean; screen: boolean },
): Promise<GateOutcome> {
  const out =
    opts.screen && candidate.status === 'active'
      ? screenRevision(candidate)
      : { revision: candidate, redacted: [], quarantined: false, findings: [] };
  if (candidate.status === 'active' && opts.tombstones) {
    // The value's own scope, and every other scope whose readers would be served it.
    for (const scope of guardingScopes(ctx, candidate.scope))
      await checkTombstones(ctx, scope, [candidate.abstract, out.revision.abstract]);
  }
  return out;
}

export function armTombstone(
  value: string,
  scope: string,
  actor: Actor,
  at: string,
  fromOp: string,
  memory: string | null,
  reason: string | null,
): Tombstone {
  return {
    key: tombstoneKey(scope, value),
    scope,
    kind: 'value',
    value_norm: normalizeValue(value),
    reason,
    actor,
    at,
    from_op: fromOp,
    memory,
  };
}
