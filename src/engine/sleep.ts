// Sleep (DESIGN §5 Manage): the rule-only steps are applied through the write path as actor
// `sleep` — weights recomputed from the usage log (journaled as a `sleep_pass` with its
// watermark), co-recall links, exact-duplicate retraction — and every inferred step (merge,
// contradiction, split, retraction of unused memories) only opens a proposal, capped per kind.
// Everything is grouped by scope: nothing is linked, merged or compared across scopes. A second
// pass with no new usage finds nothing to do (same watermark, links present, proposals exist).
import { draftMerge, normalizedValue, splitParts, subjectOf } from '../core/consolidate.js';
import { contentKey, nearDuplicate } from '../core/normalize.js';
import { GLOBAL_SCOPE } from '../core/scope.js';
import type { Actor, RevisionView } from '../core/types.js';
import {
  DEFAULT_WEIGHT_PARAMS,
  computeWeights,
  everUsed,
  weightWatermark,
} from '../core/weight.js';
import { applyEach } from './apply.js';
import { readableScopes, type EngineContext } from './context.js';
import { textDiff } from './review.js';

export const SLEEP_ACTOR: Actor = { kind: 'sleep', surface: 'sleep' };

export interface SleepConfig {
  /** Proposals opened per kind per pass. */
  caps: { merge: number; conflict: number; split: number; retract: number };
  /** Times two memories must be recalled together before they are linked. */
  coRecallMin: number;
  /** Links added per pass at most. */
  maxLinks: number;
  /** Age (days) after which a never-used memory at the weight floor is proposed for retraction. */
  retractAfterDays: number;
}

export const DEFAULT_SLEEP: SleepConfig = {
  caps: { merge: 5, conflict: 5, split: 5, retract: 5 },
  coRecallMin: 3,
  maxLinks: 50,
  retractAfterDays: 180,
};

export interface SleepOptions {
  dryRun?: boolean;
  config?: Partial<Omit<SleepConfig, 'caps'>> & { caps?: Partial<SleepConfig['caps']> };
}

export interface Moved {
  id: string;
  from: number;
  to: number;
}
export interface Step {
  kind: string;
  targets: string[];
  why: string;
  applied: boolean;
  proposal?: string;
  error?: string;
}

export interface SleepResult {
  at: string;
  scopes: string[];
  dryRun: boolean;
  memories: number;
  weightsAt: string;
  weights: Moved[];
  steps: Step[];
  /** Whether this pass changed anything in the store. */
  changed: boolean;
}

const pairKey = (a: string, b: string) => (a < b ? `${a} ${b}` : `${b} ${a}`);

export async function sleep(ctx: EngineContext, opts: SleepOptions = {}): Promise<SleepResult> {
  const cfg: SleepConfig = {
    ...DEFAULT_SLEEP,
    ...opts.config,
    caps: { ...DEFAULT_SLEEP.caps, ...opts.config?.caps },
  };
  const dry = opts.dryRun === true;
  const now = ctx.clock().toISOString();
  const scopes = readableScopes(ctx.binding);
  const memories = await ctx.store.listCurrent(scopes);
  const byId = new Map(memories.map((m) => [m.id, m]));
  const usage = (await ctx.store.usage()).filter((e) => e.ids.some((id) => byId.has(id)));
  const steps: Step[] = [];

  // 1. Weights: a pure function of the usage log up to the watermark (core/weight.ts).
  const weightsAt = weightWatermark(now, usage);
  const next = computeWeights(usage, memories, weightsAt);
  const cached = await ctx.store.weights([...byId.keys()]);
  const weights: Moved[] = [];
  for (const [id, w] of next) {
    const from = cached.get(id) ?? 1;
    if (Math.abs(from - w) > 1e-9 || (!cached.has(id) && w !== 1))
      weights.push({ id, from, to: w });
  }

  // 2. Co-recall links, same scope only.
  const together = new Map<string, number>();
  for (const e of usage) {
    if (e.kind !== 'recall') continue;
    const top = [...new Set(e.ids)].filter((id) => byId.has(id)).slice(0, 5);
    for (let i = 0; i < top.length; i++)
      for (let j = i + 1; j < top.length; j++) {
        const k = pairKey(top[i]!, top[j]!);
        together.set(k, (together.get(k) ?? 0) + 1);
      }
  }
  const linkOps: { a: RevisionView; b: RevisionView; n: number }[] = [];
  for (const [k, n] of [...together].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))) {
    if (n < cfg.coRecallMin || linkOps.length >= cfg.maxLinks) continue;
    const [ia, ib] = k.split(' ');
    const a = byId.get(ia!);
    const b = byId.get(ib!);
    if (!a || !b || a.scope !== b.scope) continue;
    const linked = (x: RevisionView, y: RevisionView) =>
      x.links.some((l) => l.target === y.id && l.rel === 'relates_to');
    if (linked(a, b) || linked(b, a)) continue;
    linkOps.push({ a, b, n });
  }

  // 3. Exact duplicates (same scope, type and normalised value): the newer one is retracted.
  const byValue = new Map<string, RevisionView[]>();
  for (const m of memories) {
    const k = `${m.scope}\u0000${m.type}\u0000${normalizedValue(m)}`;
    byValue.set(k, [...(byValue.get(k) ?? []), m]);
  }
  const dupRetracts: { keep: RevisionView; drop: RevisionView }[] = [];
  for (const group of byValue.values()) {
    if (group.length < 2) continue;
    const sorted = [...group].sort((x, y) =>
      x.valid_from < y.valid_from ? -1 : x.valid_from > y.valid_from ? 1 : x.id < y.id ? -1 : 1,
    );
    for (const drop of sorted.slice(1)) dupRetracts.push({ keep: sorted[0]!, drop });
  }
  const dropped = new Set(dupRetracts.map((d) => d.drop.id));

  // 4. Inferred steps → proposals, capped per kind, never twice for the same targets.
  const existing = await ctx.store.proposals({ scopes });
  const proposed = new Set(existing.map((p) => `${p.kind}:${[...p.targets].sort().join(',')}`));
  const proposals: { kind: keyof SleepConfig['caps']; op: Record<string, unknown>; why: string }[] =
    [];
  const count = { merge: 0, conflict: 0, split: 0, retract: 0 };
  const propose = (
    kind: keyof SleepConfig['caps'],
    targets: string[],
    scope: string,
    summary: string,
    accept: unknown[],
    diff: string,
    evidence: string[],
  ) => {
    const key = `${kind}:${[...targets].sort().join(',')}`;
    if (proposed.has(key) || count[kind] >= cfg.caps[kind]) return;
    proposed.add(key);
    count[kind]++;
    proposals.push({
      kind,
      why: summary,
      op: {
        op: 'propose',
        kind: kind === 'conflict' ? 'conflict' : kind,
        targets,
        scope,
        summary: summary.slice(0, 500),
        accept,
        reject: [],
        evidence,
        diff: diff.slice(0, 60_000),
      },
    });
  };
  const live = memories.filter((m) => !dropped.has(m.id) && m.review === 'none');
  const show = (m: RevisionView) => (m.body ? `${m.abstract}\n\n${m.body}` : m.abstract);

  // Near-duplicates share their content words, so grouping on contentKey finds them in one pass.
  const byContent = new Map<string, RevisionView[]>();
  for (const m of live) {
    const k = contentKey(m.scope, m.abstract);
    if (k)
      byContent.set(`${m.type}\u0000${k}`, [...(byContent.get(`${m.type}\u0000${k}`) ?? []), m]);
  }
  for (const group of byContent.values()) {
    for (let i = 0; i + 1 < group.length; i++) {
      const keep = group[i]!;
      const fold = group[i + 1]!;
      if (normalizedValue(keep) === normalizedValue(fold)) continue;
      const nd = nearDuplicate(keep.abstract, fold.abstract);
      if (!nd.match) continue;
      const merged = draftMerge(keep, fold);
      propose(
        'merge',
        [keep.id, fold.id],
        keep.scope,
        `near-duplicates (${nd.reason}, similarity ${nd.similarity}): merge ${fold.id} into ${keep.id}`,
        [
          {
            op: 'supersede',
            id: keep.id,
            abstract: merged.abstract,
            body: merged.body,
            reason: `merged ${fold.id} (sleep proposal)`,
          },
          { op: 'retract', id: fold.id, reason: `merged into ${keep.id}` },
        ],
        textDiff(`${show(keep)}\n---\n${show(fold)}`, `${merged.abstract}\n\n${merged.body}`),
        [`memory:${keep.id}#${keep.rev}`, `memory:${fold.id}#${fold.rev}`],
      );
    }
  }
  // Contradictions: same scope, same subject, different value.
  const bySubject = new Map<string, RevisionView[]>();
  for (const m of live) {
    const s = subjectOf(m);
    if (s)
      bySubject.set(`${m.scope}\u0000${s}`, [...(bySubject.get(`${m.scope}\u0000${s}`) ?? []), m]);
  }
  for (const [k, group] of bySubject) {
    if (group.length < 2) continue;
    const sorted = [...group].sort((x, y) => (x.recorded_at < y.recorded_at ? -1 : 1));
    const newer = sorted[sorted.length - 1]!;
    for (const older of sorted.slice(0, -1)) {
      if (normalizedValue(older) === normalizedValue(newer)) continue;
      propose(
        'conflict',
        [older.id, newer.id],
        older.scope,
        `"${older.abstract}" and "${newer.abstract}" say different things about "${k.split('\u0000')[1]}": retract the older one?`,
        [{ op: 'retract', id: older.id, reason: `contradicted by ${newer.id} (sleep proposal)` }],
        textDiff(show(older), show(newer)),
        [`memory:${older.id}#${older.rev}`, `memory:${newer.id}#${newer.rev}`],
      );
    }
  }
  // Splits: one memory whose body holds several facts about different subjects.
  for (const m of live) {
    const parts = splitParts(m.body);
    if (parts.length === 0) continue;
    propose(
      'split',
      [m.id],
      m.scope,
      `${m.id} holds ${parts.length} separate facts: split it into ${parts.length} memories`,
      [
        ...parts.map((p) => ({
          op: 'remember',
          type: m.type,
          abstract: p.slice(0, 240),
          tags: m.tags,
          global: m.scope === GLOBAL_SCOPE,
          reason: `split from ${m.id} (sleep proposal)`,
        })),
        { op: 'retract', id: m.id, reason: 'split into separate memories' },
      ],
      `${show(m)}\n---\n${parts.map((p) => `+ ${p}`).join('\n')}`,
      [`memory:${m.id}#${m.rev}`],
    );
  }
  // Never used, at the weight floor, and older than the configured age.
  const used = everUsed(usage, weightsAt);
  const ageCut = new Date(Date.parse(now) - cfg.retractAfterDays * 86_400_000).toISOString();
  for (const m of live) {
    if (used.has(m.id) || m.recorded_at > ageCut) continue;
    if ((next.get(m.id) ?? 1) > DEFAULT_WEIGHT_PARAMS.floor) continue;
    propose(
      'retract',
      [m.id],
      m.scope,
      `${m.id} was never recalled, read or cited since ${m.recorded_at.slice(0, 10)} and is at the weight floor`,
      [{ op: 'retract', id: m.id, reason: 'never used (sleep proposal)' }],
      show(m),
      [`memory:${m.id}#${m.rev}`, `weight:${next.get(m.id)}`],
    );
  }

  // Apply: links and duplicate retractions (rule-only), proposals, then the pass record.
  const ops: { step: Step; op: Record<string, unknown> }[] = [
    ...linkOps.map(({ a, b, n }) => ({
      step: {
        kind: 'link',
        targets: [a.id, b.id],
        why: `recalled together ${n} times`,
        applied: false,
      },
      op: {
        op: 'link',
        id: a.id,
        rel: 'relates_to',
        target: b.id,
        reason: `co-recalled ${n} times`,
        provenance: a.provenance,
      },
    })),
    ...dupRetracts.map(({ keep, drop }) => ({
      step: {
        kind: 'duplicate',
        targets: [drop.id, keep.id],
        why: `same ${drop.type} value as ${keep.id} (older, kept)`,
        applied: false,
      },
      op: { op: 'retract', id: drop.id, reason: `merged: exact duplicate of ${keep.id}` },
    })),
    ...proposals.map((p) => ({
      step: {
        kind: `propose ${p.kind}`,
        targets: p.op.targets as string[],
        why: p.why,
        applied: false,
      },
      op: p.op,
    })),
  ];
  let changed = false;
  if (!dry && ops.length > 0) {
    const settled = await applyEach(
      ctx,
      ops.map((o) => o.op),
      SLEEP_ACTOR,
    );
    settled.forEach((s, i) => {
      const step = ops[i]!.step;
      if (s.ok) {
        step.applied = s.result.unchanged !== true;
        if (s.result.proposal) step.proposal = s.result.proposal;
        changed ||= step.applied;
      } else step.error = s.error.message;
    });
  }
  steps.push(...ops.map((o) => o.step));
  if (!dry && weights.length > 0) {
    const [pass] = await applyEach(
      ctx,
      [
        {
          op: 'sleep_pass',
          weights_at: weightsAt,
          scopes,
          changed: {
            weights: weights.length,
            links: steps.filter((s) => s.kind === 'link' && s.applied).length,
            duplicates: steps.filter((s) => s.kind === 'duplicate' && s.applied).length,
            proposals: steps.filter((s) => s.proposal).length,
          },
        },
      ],
      SLEEP_ACTOR,
    );
    // The weights live only in the journaled pass: a refused pass changed nothing.
    if (pass && !pass.ok) throw pass.error;
    changed = true;
  }
  return {
    at: now,
    scopes,
    dryRun: dry,
    memories: memories.length,
    weightsAt,
    weights,
    steps,
    changed,
  };
}

/** The readable report of a pass: what moved, what was proposed, and why. */
export function sleepReport(r: SleepResult): string {
  const lines = [
    `# Sleep pass ${r.at}${r.dryRun ? ' (dry run: nothing written)' : ''}`,
    '',
    `Scopes: ${r.scopes.join(', ')} · ${r.memories} current memories · weights as of ${r.weightsAt}`,
    '',
    `## Weights (${r.weights.length} moved)`,
    '',
  ];
  if (r.weights.length === 0) lines.push('Nothing moved: no new usage since the last pass.');
  for (const w of [...r.weights]
    .sort((a, b) => Math.abs(b.to - b.from) - Math.abs(a.to - a.from))
    .slice(0, 50))
    lines.push(`- ${w.id}: ${w.from.toFixed(3)} → ${w.to.toFixed(3)}`);
  if (r.weights.length > 50) lines.push(`- … and ${r.weights.length - 50} more`);
  const section = (title: string, pred: (s: Step) => boolean) => {
    const xs = r.steps.filter(pred);
    lines.push('', `## ${title} (${xs.length})`, '');
    if (xs.length === 0) lines.push('None.');
    for (const s of xs)
      lines.push(
        `- ${s.targets.join(' + ')}: ${s.why}${s.proposal ? ` → ${s.proposal}` : ''}${s.error ? ` (not applied: ${s.error})` : r.dryRun ? ' (would apply)' : s.applied ? '' : ' (already done)'}`,
      );
  };
  section('Links added (recalled together)', (s) => s.kind === 'link');
  section('Exact duplicates retracted (the older memory is kept)', (s) => s.kind === 'duplicate');
  section('Proposed for review (nothing changes until a person decides)', (s) =>
    s.kind.startsWith('propose'),
  );
  lines.push(
    '',
    r.changed
      ? 'This pass changed the store; see `mneme log --actor sleep`.'
      : 'This pass changed nothing.',
  );
  return `${lines.join('\n')}\n`;
}
