// fsck's artifact check (its own phase step, kept apart so the rest of fsck can change freely):
// every artifact a memory in scope references is in the store and still hashes to its name —
// files are re-hashed, Postgres rows re-hashed chunk by chunk. Bytes a person purged are
// expected to be gone and are not an issue. No fix: bytes are restored from a backup or an
// export (`mneme import` puts back the artifacts it carries).
import type { RevisionView } from '../core/types.js';
import { purgedArtifacts } from './artifacts.js';
import type { EngineContext } from './context.js';

export interface ArtifactFinding {
  kind: 'artifact_missing' | 'artifact_mismatch';
  memory: string;
  rev: number;
  message: string;
}

export async function artifactFindings(
  ctx: EngineContext,
  memories: RevisionView[],
): Promise<ArtifactFinding[]> {
  const out: ArtifactFinding[] = [];
  const verdicts = new Map<string, 'ok' | 'missing' | 'mismatch' | 'purged'>();
  let purged: Map<string, unknown> | null = null;
  for (const m of memories) {
    const ref = m.artifact;
    if (!ref) continue;
    let v = verdicts.get(ref.sha256);
    if (v === undefined) {
      purged ??= await purgedArtifacts(ctx);
      v = purged.has(ref.sha256) ? 'purged' : await ctx.store.artifacts.check(ref.sha256);
      verdicts.set(ref.sha256, v);
    }
    if (v === 'missing')
      out.push({
        kind: 'artifact_missing',
        memory: m.id,
        rev: m.rev,
        message: `${m.id}'s artifact ${ref.name} (${ref.sha256.slice(0, 12)}…, ${ref.size} bytes) is missing from the store; restore it from a backup or re-import an export`,
      });
    else if (v === 'mismatch')
      out.push({
        kind: 'artifact_mismatch',
        memory: m.id,
        rev: m.rev,
        message: `${m.id}'s artifact ${ref.name} (${ref.sha256.slice(0, 12)}…) no longer hashes to its name: its bytes were altered; restore them from a backup or re-import an export`,
      });
  }
  return out;
}
