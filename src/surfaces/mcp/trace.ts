// The `trace` tool: where a memory came from. Each revision's actor and provenance pointers
// (parsed into their parts), and the journal entries that touched the memory. Scope-checked
// through the engine's read path, so a foreign id is "not found".
import { handle } from '../../core/revision.js';
import type { Engine } from '../../engine/engine.js';

export interface PointerView {
  pointer: string;
  kind: 'session' | 'file' | 'user' | 'import' | 'other';
  host?: string;
  session?: string;
  messages?: [number, number];
  path?: string;
  sha?: string;
  bundle?: string;
}

export function parsePointer(p: string): PointerView {
  const s = /^session:([^/]+)\/([^#]+)(?:#(\d+)-(\d+))?$/.exec(p);
  if (s) {
    const v: PointerView = { pointer: p, kind: 'session', host: s[1]!, session: s[2]! };
    if (s[3] !== undefined) v.messages = [Number(s[3]), Number(s[4])];
    return v;
  }
  const f = /^file:(.+?)(?:@([0-9a-f]{7,64}))?$/.exec(p);
  if (f) return { pointer: p, kind: 'file', path: f[1]!, ...(f[2] ? { sha: f[2] } : {}) };
  if (p === 'user') return { pointer: p, kind: 'user' };
  if (p.startsWith('import:')) return { pointer: p, kind: 'import', bundle: p.slice(7) };
  return { pointer: p, kind: 'other' };
}

export async function traceMemory(engine: Engine, id: string) {
  const h = await engine.history(id);
  const entries = await engine.log({ id });
  const current = h.revisions[h.revisions.length - 1]!;
  return {
    id,
    handle: handle(id),
    status: current.status,
    trust: current.trust,
    revisions: h.revisions.map((r) => ({
      rev: r.rev,
      op: r.op,
      recorded_at: r.recorded_at,
      actor: r.actor,
      trust: r.trust,
      reason: r.reason,
      provenance: r.provenance.map(parsePointer),
    })),
    journal: entries.map((e) => ({
      seq: e.seq,
      at: e.at,
      op: e.op,
      actor: e.actor,
      rev: e.after?.rev ?? null,
      reason: e.reason,
      hash: e.hash,
    })),
  };
}
