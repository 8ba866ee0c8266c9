// `mneme purge` (DESIGN invariant 3): a person erases the text of a memory's revisions from
// every place the store keeps it, keeps the lineage's skeleton and a verifiable journal, and arms
// a tombstone that holds no readable form of the value. Also `--verify` (what is left, found by
// the purge's keyed probes) and `--find` (where a string a person knows is kept). One engine
// operation over the store port: the engine decides what (revisions, skeletons, needles, the
// purge tombstone), the adapter erases it under its write lock and journals it.
import { MnemeError } from '../core/errors.js';
import { PURGE_OP } from '../core/journal.js';
import type { Tombstone } from '../core/normalize.js';
import {
  eraser,
  keyedHash,
  probeText,
  purgeNeedles,
  purgeTombstone,
  skeletonOf,
  PURGE_CANNOT_REACH,
  type ProbeHit,
} from '../core/purge.js';
import { toRevision } from '../core/revision.js';
import type { Actor, Revision } from '../core/types.js';
import type { ScanPlace } from '../store/port.js';
import { revisionHash } from './build.js';
import { readableScopes, type EngineContext } from './context.js';
import { loadLineage } from './read.js';

export interface PurgeInput {
  id: string;
  /** One revision; all of them when absent. */
  rev?: number;
  reason: string;
  /** Further strings a person names to erase with it (a leaked key the text only contains). */
  also?: string[];
}

export interface PurgeResult {
  id: string;
  /** A re-run on a purged memory: no new entry, the committed purge's erasure completed. */
  finished?: boolean;
  seq: number;
  revs: number[];
  redactedEntries: number;
  places: string[];
  remaining: Occurrence[];
  cannotReach: string[];
}

export interface Occurrence extends ScanPlace {
  hits: ProbeHit[];
}

/** Purge, --verify and --find are a person's, on a human surface: say where to do it. */
export function requirePerson(ctx: EngineContext, actor: Actor | null, what: string): void {
  if (ctx.surface !== 'human' || (actor !== null && actor.kind !== 'human'))
    throw new MnemeError('refused', `${what} is a decision only a person can make`, {
      hint: 'run `mneme purge` yourself in a terminal outside the agent session (it asks for the review passphrase when one is set); agents, hooks and API tokens cannot purge',
    });
}

export async function purge(
  ctx: EngineContext,
  input: PurgeInput,
  actor: Actor,
): Promise<PurgeResult> {
  requirePerson(ctx, actor, 'purging a memory');
  const reason = input.reason.trim().replace(/\s+/g, ' ').slice(0, 1000);
  if (reason === '')
    throw new MnemeError('invalid', 'a purge needs a reason (--reason): it is what stays', {
      hint: 'say why, without repeating the value: e.g. --reason "leaked credential"',
    });
  const also = (input.also ?? []).map((a) => a.trim()).filter((a) => a !== '');
  const store = ctx.store;
  return store.withWriteLock(async () => {
    // Read first (a memory this binding cannot read is not found), then finish earlier purges.
    const scope = (await loadLineage(ctx, input.id))[0]!.scope;
    const earlier = await finishEarlier(ctx, input.id, scope);
    const lineage = await loadLineage(ctx, input.id);
    if (input.rev !== undefined && !lineage.some((r) => r.rev === input.rev))
      throw new MnemeError('not_found', `${input.id} has no revision ${input.rev}`, {
        hint: `its revisions are ${lineage.map((r) => r.rev).join(', ')} (see \`mneme history ${input.id}\`)`,
      });
    const chosen = lineage.filter((r) => input.rev === undefined || r.rev === input.rev);
    const targets = chosen.filter((r) => r.status !== 'purged');
    const needles = purgeNeedles(targets, also);
    if (eraser(needles).holds(reason))
      throw new MnemeError('invalid', 'the reason repeats the value being purged', {
        hint: 'the reason is kept in the journal: say why without the value, e.g. "leaked credential"',
      });
    if (targets.length === 0 && also.length === 0) {
      // Refused when finishing erased nothing: nothing was left, or only what the purge's own
      // erasure cannot reach without the text (another memory, or this lineage's live revision).
      if (!earlier || earlier.remaining.length >= earlier.left.length) {
        const label = `${input.id}${input.rev !== undefined ? ` rev ${input.rev}` : ''}`;
        const still = earlier?.remaining.map((o) => o.where) ?? [];
        throw new MnemeError(
          'invalid',
          still.length === 0
            ? `${label} is purged already, and nothing of it is left`
            : `${label} is purged already; what is still found (${[...new Set(still)].join(', ')}) is not text this purge erased`,
          {
            hint: `check with \`mneme purge --verify ${input.id}\`; to erase a string still found, purge the memory holding it or name the string with --also`,
          },
        );
      }
      return {
        id: input.id,
        finished: true,
        seq: earlier.seq,
        revs: [],
        redactedEntries: 0,
        places: earlier.places,
        remaining: earlier.remaining,
        cannotReach: PURGE_CANNOT_REACH,
      };
    }
    const at = ctx.clock().toISOString();
    const secret = await store.purgeSecret(true);
    if (!secret) throw new MnemeError('internal', 'the store could not create its purge secret');
    const keyed = keyedHash(secret);
    const tombstone = purgeTombstone(keyed, {
      id: input.id,
      scope,
      revs: targets,
      also,
      actor,
      at,
      reason,
    });
    const skeletons: Revision[] = targets.map((r) => skeletonOf(toRevision(r), reason));
    const report = await store.purge({
      id: input.id,
      needles,
      skeletons,
      tombstone,
      body: {
        at,
        actor,
        op: PURGE_OP,
        target: { id: input.id, scope },
        before: null,
        after: null,
        reason,
        idem: null,
        req: null,
        data: { revisions: skeletons.map((s) => ({ rev: s.rev, hash: revisionHash(s) })) },
      },
    });
    return {
      id: input.id,
      seq: report.entry.seq,
      revs: targets.map((r) => r.rev),
      redactedEntries: report.redactedEntries.length,
      places: report.places,
      remaining: await occurrences(ctx, [tombstone], keyed),
      cannotReach: PURGE_CANNOT_REACH,
    };
  });
}

/**
 * `mneme purge ID` again on a purged memory: what its committed purges left (a crash after the
 * entry, an index or database not yet compacted) is erased first, with no new journal entry.
 * (The files store's recovery has already redone a crashed purge's erasure from its redo record
 * before this runs, under the same lock.) Null when the memory was never purged.
 */
async function finishEarlier(
  ctx: EngineContext,
  id: string,
  scope: string,
): Promise<{ seq: number; left: Occurrence[]; places: string[]; remaining: Occurrence[] } | null> {
  const entries = await ctx.store.journal({ id, op: PURGE_OP });
  const last = entries[entries.length - 1];
  const secret = await ctx.store.purgeSecret(false);
  if (!last || !secret) return null;
  const keyed = keyedHash(secret);
  const tombstones = (await ctx.store.tombstones([scope])).filter(
    (t) => t.kind === 'purged' && t.memory === id,
  );
  const left = await occurrences(ctx, tombstones, keyed);
  if (left.length === 0) return { seq: last.seq ?? 0, left, places: [], remaining: [] };
  const places = await ctx.store.finishPurge(id);
  return { seq: last.seq ?? 0, left, places, remaining: await occurrences(ctx, tombstones, keyed) };
}

async function occurrences(
  ctx: EngineContext,
  tombstones: readonly Tombstone[],
  keyed: (s: string) => string,
): Promise<Occurrence[]> {
  const out = new Map<string, Occurrence>();
  await ctx.store.scan((place, text) => {
    for (const t of tombstones) {
      if (!t.probes) continue;
      const hits = probeText(keyed, t.probes, text);
      if (hits.length === 0) continue;
      const k = `${place.where}#${place.line ?? ''}`;
      if (!out.has(k)) out.set(k, { ...place, hits });
    }
  });
  return [...out.values()];
}

export interface VerifyResult {
  id: string;
  purges: { seq: number | null; at: string; reason: string | null; by: string }[];
  remaining: Occurrence[];
  cannotReach: string[];
}

/** What is left of a memory's purged text anywhere in the store (by the purges' keyed probes). */
export async function verifyPurge(ctx: EngineContext, id: string): Promise<VerifyResult> {
  requirePerson(ctx, null, 'checking a purge');
  const lineage = await loadLineage(ctx, id);
  const scope = lineage[0]!.scope;
  const tombstones = (await ctx.store.tombstones([scope])).filter(
    (t) => t.kind === 'purged' && t.memory === id,
  );
  if (tombstones.length === 0)
    throw new MnemeError('not_found', `${id} was never purged`, {
      hint: `purge it with \`mneme purge ${id} --reason TEXT\`, or find a string with \`mneme purge --find TEXT\``,
    });
  const secret = await ctx.store.purgeSecret(false);
  if (!secret)
    throw new MnemeError('refused', 'the store has purge tombstones but no purge secret', {
      hint: "restore the store's purge secret from a backup (purge.key, or the purge_secrets row on Postgres)",
    });
  const entries = await ctx.store.journal({ id, op: PURGE_OP });
  return {
    id,
    purges: entries.map((e) => ({ seq: e.seq, at: e.at, reason: e.reason, by: e.actor.kind })),
    remaining: await occurrences(ctx, tombstones, keyedHash(secret)),
    cannotReach: PURGE_CANNOT_REACH,
  };
}

export interface FindResult {
  text: string;
  places: ScanPlace[];
  cannotReach: string[];
}

/** Every memory, revision, archive line and file or row that holds a string (case-insensitive). */
export async function findValue(ctx: EngineContext, text: string): Promise<FindResult> {
  requirePerson(ctx, null, 'searching the store by value');
  const needle = text.trim();
  if (needle.length < 3)
    throw new MnemeError('invalid', 'give at least 3 characters to look for', {
      hint: 'the string you know leaked, e.g. mneme purge --find "sk-live-4f9"',
    });
  const e = eraser([needle]);
  const scopes = new Set(readableScopes(ctx.binding));
  const seen = new Map<string, ScanPlace>();
  await ctx.store.scan((place, body) => {
    if (!e.holds(body) && !e.holds(body.replace(/\\(.)/g, '$1'))) return;
    const k = `${place.where}#${place.line ?? ''}`;
    if (!seen.has(k)) seen.set(k, place);
  });
  // A memory of a project this binding does not read is named by place, never by id.
  const places: ScanPlace[] = [];
  for (const p of seen.values()) {
    if (p.id) {
      const l = await ctx.store.getLineage(p.id);
      if (l && l[0] && !scopes.has(l[0].scope)) {
        places.push({ where: p.where, ...(p.line !== undefined ? { line: p.line } : {}) });
        continue;
      }
    }
    places.push(p);
  }
  return { text: needle, places, cannotReach: PURGE_CANNOT_REACH };
}
