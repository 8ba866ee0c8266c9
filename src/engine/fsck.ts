// fsck (DESIGN §5 Manage): phases in order — integrity (the adapter's own checks: journal chain,
// revision files against their journaled hashes, index against files, orphans, half-done
// writes, hand edits), security (every stored memory re-screened with today's patterns),
// duplicates, quality, tombstone collisions, source drift. Each issue has a stable id (hash of
// phase, memory, kind and revision) and, when one exists, a fix. `fix` applies only the chosen
// issues through the write path as actor `fsck`, each followed by an `fsck_fix` checkpoint entry;
// every fix op carries an idempotency key derived from the issue, so a run killed between the
// fix and its checkpoint replays instead of repeating. Destructive fixes only open proposals.
// The integrity phase is incremental unless `full` (the store skips what is unchanged since it
// was last checked clean, and checkpoints its marks so an interrupted run resumes); the other
// phases read the current memories, already in hand, and run whole.
import { sha256 } from '../core/hash.js';
import { normalizedValue } from '../core/consolidate.js';
import { LIMITS } from '../core/limits.js';
import { tombstoneMatcher, type TombstoneMatcher } from '../core/normalize.js';
import { purgeKeyed } from './rejected-here.js';
import { screenText } from '../core/screen.js';
import type { InjectionRule } from '../core/screen-rules.js';
import type { Actor, RevisionView } from '../core/types.js';
import { applyEach } from './apply.js';
import { artifactFindings } from './fsck-artifacts.js';
import { readableScopes, type EngineContext } from './context.js';
import type { Phase } from './fsck-phases.js';
import { effectiveFreshness, observeSource, persistedFreshness } from './drift.js';

export const FSCK_ACTOR: Actor = { kind: 'fsck', surface: 'fsck' };
export { PHASES, type Phase } from './fsck-phases.js';

export interface FsckIssue {
  id: string;
  phase: Phase;
  severity: 'error' | 'warning' | 'info';
  memory?: string;
  message: string;
  fix?: string;
}

/** How an issue is fixed: ops through the write path, or a cache repair of the index. */
type Plan = { ops: Record<string, unknown>[] } | { reindex: string[] };

export interface FsckOptions {
  /** Injection rules added to today's screen (a pattern learned after memories were stored). */
  extraRules?: readonly InjectionRule[];
  /** Check every revision, not only what changed since the last clean run. */
  full?: boolean;
}

/** What the integrity phase read: lineages checked, and skipped as unchanged since checked clean. */
export interface FsckChecked {
  full: boolean;
  lineages_checked: number;
  lineages_skipped: number;
}

export interface FsckReport {
  issues: FsckIssue[];
  plans: Map<string, Plan>;
  checked: FsckChecked;
}

const issueId = (phase: string, memory: string | undefined, kind: string, rev?: number) =>
  `fsck_${sha256(`${phase}\u0000${memory ?? ''}\u0000${kind}\u0000${rev ?? ''}`).slice(0, 16)}`;

export async function fsck(ctx: EngineContext, opts: FsckOptions = {}): Promise<FsckReport> {
  const issues: FsckIssue[] = [];
  const plans = new Map<string, Plan>();
  const add = (
    phase: Phase,
    kind: string,
    i: Omit<FsckIssue, 'id' | 'phase'>,
    rev?: number,
    plan?: Plan,
  ) => {
    const id = issueId(phase, i.memory, kind, rev);
    if (plans.has(id) || issues.some((x) => x.id === id)) return;
    issues.push({ id, phase, ...i });
    if (plan) plans.set(id, plan);
  };
  const scopes = readableScopes(ctx.binding);
  const memories = await ctx.store.listCurrent(scopes);
  const inScope = new Set(memories.map((m) => m.id));

  // 1. integrity
  const stats = { checked: 0, skipped: 0 };
  const full = opts.full === true;
  for (const f of await ctx.store.integrity({ full, stats })) {
    // Another project's memories are not this run's business (scope is enforced here too).
    if (f.memory && !inScope.has(f.memory)) {
      const lineage = await ctx.store.getLineage(f.memory);
      if (lineage && !scopes.includes(lineage[0]!.scope)) continue;
    }
    let plan: Plan | undefined;
    let fix: string | undefined;
    if (f.kind === 'hand_edit' && f.memory && f.text !== undefined && f.path) {
      plan = { ops: [{ op: 'external_edit', id: f.memory, text: f.text, path: f.path }] };
      fix = 'record the edit as an untrusted revision and open an external_edit proposal';
    } else if ((f.kind === 'index_stale' || f.kind === 'index_missing') && f.memory) {
      plan = { reindex: [f.memory] };
      fix = 're-derive the index rows of this memory from its files';
    } else if (f.kind === 'revision_hash' || f.kind === 'revision_unreadable') {
      fix = undefined; // history is evidence: restore it from a backup, never rewrite it here
    }
    add(
      'integrity',
      f.kind,
      {
        severity: f.severity,
        ...(f.memory ? { memory: f.memory } : {}),
        message: f.message,
        ...(fix ? { fix } : {}),
      },
      f.rev,
      plan,
    );
  }

  // 1b. artifacts: every referenced hash present and intact (fsck-artifacts.ts).
  const withEnded = await ctx.store.listCurrent(scopes, { includeEnded: true });
  for (const f of await artifactFindings(ctx, withEnded))
    add('integrity', f.kind, { severity: 'error', memory: f.memory, message: f.message }, f.rev);

  // 2. security: today's screen over every stored memory.
  for (const m of memories) {
    if (m.quarantine !== null) continue;
    const texts = [m.abstract, m.body, ...Object.values(m.fields), ...m.tags];
    const rules = new Set<string>();
    const evidence: string[] = [];
    let secrets = 0;
    for (const t of texts) {
      const r = screenText(t);
      for (const f of r.findings)
        if (f.kind === 'injection') {
          rules.add(f.rule);
          evidence.push(f.excerpt);
        } else secrets++;
      const folded = t.normalize('NFKC');
      for (const x of opts.extraRules ?? []) {
        const hit = new RegExp(x.pattern.source, x.pattern.flags.replace('g', '')).exec(folded);
        if (hit) {
          rules.add(x.rule);
          evidence.push(folded.slice(Math.max(0, hit.index - 40), hit.index + hit[0].length + 40));
        }
      }
    }
    if (rules.size > 0)
      add(
        'security',
        'injection',
        {
          severity: 'error',
          memory: m.id,
          message: `${m.id} matches today's injection screen (${[...rules].join(', ')})`,
          fix: 'quarantine it (withheld from agents and injection) and open a review proposal',
        },
        m.rev,
        {
          ops: [
            {
              op: 'quarantine',
              id: m.id,
              expected_rev: m.rev,
              rules: [...rules].slice(0, 20),
              evidence: evidence.slice(0, 20).map((e) => e.slice(0, 500)),
            },
          ],
        },
      );
    if (secrets > 0)
      add(
        'security',
        'secret',
        {
          severity: 'warning',
          memory: m.id,
          message: `${m.id} holds ${secrets} value(s) shaped like a secret`,
          fix: 'propose retracting it (a person decides; correct it to keep the rest)',
        },
        m.rev,
        proposeOp('retract', m, `${m.id} holds what looks like a secret`, [
          { op: 'retract', id: m.id, reject: true, reason: 'secret found by fsck' },
        ]),
      );
  }

  // 3. duplicates: same scope, type and normalised value.
  const byValue = new Map<string, RevisionView[]>();
  for (const m of memories) {
    const k = `${m.scope}\u0000${m.type}\u0000${normalizedValue(m)}`;
    byValue.set(k, [...(byValue.get(k) ?? []), m]);
  }
  for (const group of byValue.values()) {
    if (group.length < 2) continue;
    const [keep, ...rest] = [...group].sort((a, b) => (a.valid_from < b.valid_from ? -1 : 1));
    for (const d of rest)
      add(
        'duplicates',
        'exact',
        {
          severity: 'warning',
          memory: d.id,
          message: `${d.id} states exactly what ${keep!.id} states`,
          fix: `propose merging it into ${keep!.id}`,
        },
        d.rev,
        proposeOp(
          'merge',
          d,
          `${d.id} duplicates ${keep!.id}`,
          [{ op: 'retract', id: d.id, reason: `merged: exact duplicate of ${keep!.id}` }],
          [keep!.id],
        ),
      );
  }

  // 4. quality
  for (const m of memories) {
    if (m.abstract.trim() === '')
      add(
        'quality',
        'empty_abstract',
        { severity: 'warning', memory: m.id, message: `${m.id} has an empty abstract` },
        m.rev,
      );
    else if ([...m.abstract].length > LIMITS.abstractChars)
      add(
        'quality',
        'long_abstract',
        {
          severity: 'warning',
          memory: m.id,
          message: `${m.id}'s abstract is over ${LIMITS.abstractChars} characters`,
        },
        m.rev,
      );
    if (m.provenance.length === 0 && !['human', 'sleep', 'fsck', 'system'].includes(m.actor.kind))
      add(
        'quality',
        'no_provenance',
        {
          severity: 'info',
          memory: m.id,
          message: `${m.id} (by ${m.actor.kind}) records no provenance`,
        },
        m.rev,
      );
  }

  // 5. tombstones: an active memory that matches a rejected value of its scope.
  const tombstones = await ctx.store.tombstones(scopes);
  const keyed = tombstones.length > 0 ? await purgeKeyed(ctx, tombstones) : null;
  // One matcher per scope, prepared once (not once per memory).
  const matchers = new Map<string, TombstoneMatcher>();
  const matcherOf = (scope: string) => {
    let m = matchers.get(scope);
    if (!m) matchers.set(scope, (m = tombstoneMatcher(tombstones, scope, keyed)));
    return m;
  };
  if (tombstones.length > 0)
    for (const m of memories) {
      const hit = matcherOf(m.scope).value(m.abstract);
      if (!hit) continue;
      add(
        'tombstones',
        'collision',
        {
          severity: 'error',
          memory: m.id,
          message:
            hit.kind === 'purged'
              ? `${m.id} states a value a person purged on ${hit.at.slice(0, 10)}`
              : `${m.id} states a value that was rejected on ${hit.at.slice(0, 10)} ("${hit.value_norm.slice(0, 80)}")`,
          fix: 'propose retracting it as rejected',
        },
        m.rev,
        proposeOp('retract', m, `${m.id} matches a tombstone`, [
          { op: 'retract', id: m.id, reject: true, reason: 'matches a tombstone (fsck)' },
        ]),
      );
    }

  // 6. sources: the journaled verdict against what the file says now.
  const bound = memories.filter((m) => m.source);
  const persisted = await persistedFreshness(
    ctx,
    bound.map((m) => m.id),
  );
  for (const m of bound) {
    const was = effectiveFreshness(m, persisted.get(m.id));
    const seen = observeSource(ctx, m.source);
    if (seen && seen.freshness !== was)
      add(
        'sources',
        `moved:${seen.freshness}`,
        {
          severity: 'warning',
          memory: m.id,
          message: `${m.id}: ${seen.why} (recorded as ${was}, now ${seen.freshness})`,
          fix: 'journal the new freshness (drifted and missing memories are withheld from injection)',
        },
        m.rev,
        { ops: [{ op: 'check_source', id: m.id }] },
      );
    else if (was !== 'fresh')
      add(
        'sources',
        `withheld:${was}`,
        {
          severity: 'info',
          memory: m.id,
          message: `${m.id} is ${was} (${m.source!.path}) and withheld until \`mneme revalidate ${m.id}\` or retracted`,
        },
        m.rev,
      );
  }
  return {
    issues,
    plans,
    checked: { full, lineages_checked: stats.checked, lineages_skipped: stats.skipped },
  };
}

function proposeOp(
  kind: 'merge' | 'retract',
  m: RevisionView,
  summary: string,
  accept: Record<string, unknown>[],
  also: string[] = [],
): Plan {
  return {
    ops: [
      {
        op: 'propose',
        kind,
        targets: [m.id, ...also],
        scope: m.scope,
        summary: `fsck: ${summary}`,
        accept,
        reject: [],
        evidence: [`memory:${m.id}#${m.rev}`],
        diff: m.body ? `${m.abstract}\n\n${m.body}` : m.abstract,
      },
    ],
  };
}

export interface FixOutcome {
  id: string;
  status: 'fixed' | 'already_fixed' | 'not_found' | 'no_fix' | 'failed';
  message?: string;
}

/**
 * Applies the fixes of the chosen issues, in order, each checkpointed by an `fsck_fix` journal
 * entry. `afterFix` runs between a fix and its checkpoint (a fault-injection point for tests).
 */
export async function fsckFix(
  ctx: EngineContext,
  ids: string[],
  opts: FsckOptions & { afterFix?: (n: number) => void } = {},
): Promise<FixOutcome[]> {
  const { issues, plans } = await fsck(ctx, opts);
  const done = new Set(
    (await ctx.store.journal({ op: 'fsck_fix' })).map((e) => (e.data as { issue?: string })?.issue),
  );
  const out: FixOutcome[] = [];
  let n = 0;
  for (const id of ids) {
    if (done.has(id)) {
      out.push({ id, status: 'already_fixed' });
      continue;
    }
    const issue = issues.find((i) => i.id === id);
    const plan = plans.get(id);
    if (!issue) {
      // Killed after its fix committed but before the checkpoint: the fix's idempotency key is
      // in the journal, so record the checkpoint now instead of reporting it lost.
      const prior = await ctx.store.findIdempotent(`fsck:${id}:0`);
      if (prior) {
        await checkpoint(ctx, id, 'resumed', prior.target?.id, { resumed_from_seq: prior.seq });
        out.push({
          id,
          status: 'fixed',
          message: 'resumed: the fix was applied before an interruption',
        });
      } else
        out.push({
          id,
          status: 'not_found',
          message: 'not found now (fixed already, or the id is from another state)',
        });
      continue;
    }
    if (!plan) {
      out.push({ id, status: 'no_fix', message: 'this issue has no automatic fix' });
      continue;
    }
    let result: Record<string, unknown> = {};
    if ('reindex' in plan) {
      await ctx.store.reindex(plan.reindex);
      result = { reindexed: plan.reindex };
    } else {
      const settled = await applyEach(
        ctx,
        plan.ops.map((op, i) => ({ ...op, idempotency_key: `fsck:${id}:${i}` })),
        FSCK_ACTOR,
      );
      const failed = settled.find((s) => !s.ok);
      if (failed && !failed.ok) {
        out.push({ id, status: 'failed', message: failed.error.message });
        continue;
      }
      result = {
        applied: settled.map((s) =>
          s.ok
            ? { op: s.result.op, id: s.result.id, rev: s.result.rev, proposal: s.result.proposal }
            : null,
        ),
      };
    }
    opts.afterFix?.(++n);
    await checkpoint(ctx, id, issue.fix ?? issue.phase, issue.memory, result);
    out.push({ id, status: 'fixed' });
  }
  return out;
}

async function checkpoint(
  ctx: EngineContext,
  id: string,
  fix: string,
  memory: string | undefined,
  result: Record<string, unknown>,
) {
  await applyEach(
    ctx,
    [
      {
        op: 'fsck_fix',
        issue: id,
        fix: fix.slice(0, 300),
        ...(memory ? { memory } : {}),
        result: JSON.parse(JSON.stringify(result)) as Record<string, unknown>,
        idempotency_key: `fsck-done:${id}`,
      },
    ],
    FSCK_ACTOR,
  );
}
