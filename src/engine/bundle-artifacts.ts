// The artifacts of an export bundle: the bytes of every artifact a bundled revision references,
// base64, once per hash (bytes a person purged stay purged: they are not exported). On import
// each is verified against its hash before it is kept; a lineage whose artifact did not arrive
// intact (and is not already served to this project from this store) is refused, with the reason, rather than imported
// with a reference to nothing.
import { sha256 } from '../core/hash.js';
import { isArtifactHash } from '../core/artifact.js';
import type { Revision } from '../core/types.js';
import { purgedArtifacts } from './artifacts.js';
import type { BundleArtifact } from './bundle.js';
import { readableScopes, type EngineContext } from './context.js';

export async function exportArtifacts(
  ctx: EngineContext,
  memories: { revisions: Revision[] }[],
): Promise<BundleArtifact[]> {
  const sizes = new Map<string, number>();
  for (const m of memories)
    for (const r of m.revisions) if (r.artifact) sizes.set(r.artifact.sha256, r.artifact.size);
  const out: BundleArtifact[] = [];
  const purged = sizes.size > 0 ? await purgedArtifacts(ctx) : new Map();
  for (const [hash, size] of sizes) {
    if (purged.has(hash)) continue;
    const bytes = await ctx.store.artifacts.read(hash, 0, size);
    // Missing or altered here: fsck reports it; the import refuses its lineage (never exported
    // as if it were the artifact the revision names).
    if (bytes === null || bytes.byteLength !== size || sha256(bytes) !== hash) continue;
    out.push({ sha256: hash, content_base64: Buffer.from(bytes).toString('base64') });
  }
  return out;
}

/** Keeps each bundled artifact whose bytes hash to its name; returns the hashes kept. */
export async function importArtifacts(
  ctx: EngineContext,
  artifacts: { sha256: string; content_base64: string }[],
): Promise<Set<string>> {
  const kept = new Set<string>();
  const purged = artifacts.length > 0 ? await purgedArtifacts(ctx) : new Map();
  for (const a of artifacts) {
    if (!isArtifactHash(a.sha256)) continue;
    const bytes = Buffer.from(a.content_base64, 'base64');
    if (sha256(bytes) !== a.sha256) continue; // altered in the bundle: its lineages are refused
    if (purged.has(a.sha256)) continue; // a person purged these bytes here
    // Under the write lock: on Postgres that is one transaction, so no half-kept artifact.
    await ctx.store.withWriteLock(() => ctx.store.artifacts.put(a.sha256, bytes));
    kept.add(a.sha256);
  }
  return kept;
}

/**
 * The hashes of the artifacts this binding is already served: its readable scopes' live
 * memories'. Bytes that did not come in the bundle are taken from the store only for these, so
 * a bundle naming a hash cannot reach bytes kept for another project, or for a memory that was
 * forgotten (content-addressed storage is shared; what may be read is not).
 */
export async function servedArtifacts(ctx: EngineContext): Promise<Set<string>> {
  const out = new Set<string>();
  for (const v of await ctx.store.listCurrent(readableScopes(ctx.binding)))
    if (v.artifact && v.status === 'active' && !v.rejected) out.add(v.artifact.sha256);
  return out;
}

/** Why a bundled lineage cannot be imported for its artifact, or null when it can. */
export async function missingArtifact(
  ctx: EngineContext,
  revs: Partial<Revision>[],
  kept: Set<string>,
  served: () => Promise<Set<string>>,
): Promise<string | null> {
  for (const r of revs) {
    const h = r.artifact?.sha256;
    if (typeof h !== 'string' || kept.has(h)) continue;
    if (
      isArtifactHash(h) &&
      (await served()).has(h) &&
      (await ctx.store.artifacts.size(h)) !== null
    )
      continue;
    return `its artifact ${String(h).slice(0, 12)}… did not arrive intact (missing from the bundle, or its bytes do not match their hash)`;
  }
  return null;
}
