// The gates every candidate revision passes before it is stored (invariants 7, 8, 12):
// screening (secrets redacted in place, prompt-injection quarantined) and the tombstone check
// (a rejected value is refused, however it is spelled, in the abstract or repeated in the body,
// a field or a tag). Both run inside the write lock.
import { MnemeError } from '../core/errors.js';
import {
  tombstoneMatcher,
  normalizeValue,
  tombstoneKey,
  tombstoneProbe,
  type Tombstone,
} from '../core/normalize.js';
import { screenText, type ScreenFinding } from '../core/screen.js';
import type { Actor, Revision } from '../core/types.js';
import type { EngineContext } from './context.js';
import { guardingScopes, purgeKeyed } from './rejected-here.js';

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

/** A longer text of a revision that may not carry a rejected value either (a body, a field). */
export interface Passage {
  /** Where it sits, for the refusal message: "the body", 'field "subject"'. */
  where: string;
  text: string;
}

function refusal(hit: Tombstone, where: string | null): MnemeError {
  const what =
    hit.kind === 'purged'
      ? `(a value a person purged on ${hit.at.slice(0, 10)}${hit.reason ? `: ${hit.reason}` : ''})`
      : `("${hit.value_norm.slice(0, 80)}", rejected ${hit.at.slice(0, 10)} by ${hit.actor.kind}${hit.reason ? `: ${hit.reason}` : ''})`;
  if (where === null) {
    return new MnemeError(
      'refused',
      `this value was rejected before and may not be written again ${what}`,
      {
        hint: 'write a different value; only a person can allow a rejected value again',
        details: { tombstone: hit.key, ...(hit.kind === 'purged' ? { purged: true } : {}) },
      },
    );
  }
  return new MnemeError(
    'refused',
    `${where} repeats a value that was rejected before and may not be written again ${what}`,
    {
      hint: `take the rejected value out of ${where}, or write a different one; only a person can allow a rejected value again`,
      details: { tombstone: hit.key, where, ...(hit.kind === 'purged' ? { purged: true } : {}) },
    },
  );
}

/**
 * Refuses a value that matches an armed tombstone of its scope: `values` (an abstract, a tag)
 * must not restate it, `passages` (a body, a field value) must not repeat it anywhere. Reads
 * only the tombstones these texts could run into (the store's lookup index, core/normalize.ts
 * "Indexed lookup"): the same refusals as a scan of them all, at a cost flat in their number.
 */
export async function checkTombstones(
  ctx: EngineContext,
  scope: string,
  values: string[],
  passages: Passage[] = [],
): Promise<void> {
  await judgeTombstones(ctx, await tombstonesFacing(ctx, scope, values, passages));
}

/** What checkTombstones reads: the candidates of one scope, beside what they are judged on. */
interface Facing {
  scope: string;
  values: string[];
  passages: Passage[];
  tombstones: Tombstone[];
}

async function tombstonesFacing(
  ctx: EngineContext,
  scope: string,
  values: string[],
  passages: Passage[],
): Promise<Facing> {
  const probe = tombstoneProbe(
    scope,
    values,
    passages.map((p) => p.text),
  );
  return { scope, values, passages, tombstones: await ctx.store.tombstoneCandidates(scope, probe) };
}

async function judgeTombstones(ctx: EngineContext, f: Facing): Promise<void> {
  const { tombstones, scope, values, passages } = f;
  if (tombstones.length === 0) return;
  const match = tombstoneMatcher(tombstones, scope, await purgeKeyed(ctx, tombstones));
  for (const text of values) {
    const hit = match.value(text);
    if (hit) throw refusal(hit, null);
  }
  for (const p of passages) {
    const hit = match.passage(p.text);
    if (hit) throw refusal(hit, p.where);
  }
}

/**
 * What of a candidate the tombstone check reads besides its abstract: the body, field values and
 * tags, each as written and as screened — only where they change (a body carried over unchanged
 * from the previous revision was checked when it was written; re-reading it on every later edit
 * would block updates to a memory whose older body mentions a value rejected since).
 */
function tombstoneTexts(
  candidate: Revision,
  screened: Revision,
  before: Revision | null,
): { values: string[]; passages: Passage[] } {
  const values = [candidate.abstract, screened.abstract];
  const passages: Passage[] = [];
  if (before === null || before.body !== candidate.body) {
    passages.push({ where: 'the body', text: candidate.body });
    if (screened.body !== candidate.body) passages.push({ where: 'the body', text: screened.body });
  }
  for (const [k, v] of Object.entries(candidate.fields)) {
    if (before?.fields[k] === v) continue;
    passages.push({ where: `field "${k}"`, text: v });
    const s = screened.fields[k];
    if (s !== undefined && s !== v) passages.push({ where: `field "${k}"`, text: s });
  }
  for (const tag of candidate.tags) if (!before?.tags.includes(tag)) values.push(tag);
  return { values, passages };
}

export async function passGates(
  ctx: EngineContext,
  candidate: Revision,
  opts: { tombstones: boolean; screen: boolean; before?: Revision | null },
): Promise<GateOutcome> {
  const out =
    opts.screen && candidate.status === 'active'
      ? screenRevision(candidate)
      : { revision: candidate, redacted: [], quarantined: false, findings: [] };
  if (candidate.status === 'active' && opts.tombstones) {
    const { values, passages } = tombstoneTexts(candidate, out.revision, opts.before ?? null);
    // The value's own scope, and every other scope whose readers would be served it: their
    // lookups asked at once (a store may answer them in one statement), judged in this order.
    const facing = await Promise.all(
      guardingScopes(ctx, candidate.scope).map((scope) =>
        tombstonesFacing(ctx, scope, values, passages),
      ),
    );
    for (const f of facing) await judgeTombstones(ctx, f);
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
