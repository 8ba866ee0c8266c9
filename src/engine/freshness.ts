// Freshness of a bound memory as the read paths need it (recall, injection, fsck): what the
// engine observes of the source now and the last journaled verdict. Kept apart from drift.ts
// (which journals transitions through the write path) so a read loads no write-path code.
import { judgeSource, parseSourceSpec, type FreshnessVerdict } from '../core/source.js';
import type { Freshness, RevisionView, SourceBinding } from '../core/types.js';
import type { FreshnessRecord } from '../store/port.js';
import type { EngineContext } from './context.js';

/** What the source of `binding` looks like now, or null when the files cannot be read here. */
export function observeSource(
  ctx: EngineContext,
  binding: SourceBinding | null,
): FreshnessVerdict | null {
  if (!binding) return judgeSource(null, { bytes: null, commitReachable: null });
  if (!ctx.files) return null;
  let bytes: Buffer | null;
  try {
    bytes = ctx.files.read(parseSourceSpec(binding.path).path);
  } catch {
    bytes = null;
  }
  const reachable = binding.commit ? ctx.files.isAncestor(binding.commit) : null;
  return judgeSource(binding, { bytes, commitReachable: reachable });
}

/**
 * The journaled freshness of a memory: its latest `check_source` verdict, reset to fresh by any
 * revision whose source the engine re-hashed (remember/revise with a source, revalidate). Other
 * revisions (a link, a confirm) do not clear a drift.
 */
export function effectiveFreshness(
  v: Pick<RevisionView, 'source'>,
  rec: FreshnessRecord | undefined,
): Freshness {
  if (!v.source) return 'unbound';
  return rec ? rec.freshness : 'fresh';
}

export async function persistedFreshness(
  ctx: EngineContext,
  ids: string[],
): Promise<Map<string, FreshnessRecord>> {
  return ctx.store.freshness(ids);
}
