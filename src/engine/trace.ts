// Trace: where a memory came from. Each revision's provenance pointers are resolved —
// `session:<host>/<id>#<from>-<to>` into the archived transcript lines it cites, `file:`,
// `user` and `import:` shown as they are — beside the journal entries about the memory.
import { messageOf, isHost, type Host } from '../core/transcript.js';
import type { SessionStore } from '../store/sessions.js';
import type { EngineContext } from './context.js';
import { loadLineage, refuseRejectedHere } from './read.js';

export interface ResolvedPointer {
  pointer: string;
  kind: 'session' | 'file' | 'user' | 'import' | 'other';
  session?: {
    host: Host;
    session: string;
    from: number;
    to: number;
    messages: { line: number; role: string; text: string }[];
    /** Set when the archive does not hold those lines. */
    missing?: string;
  };
}

const SESSION_PTR = /^session:([a-z-]+)\/([A-Za-z0-9][A-Za-z0-9._-]{0,119})#(\d+)-(\d+)$/;
const MAX_LINES = 200;

export function parseSessionPointer(
  p: string,
): { host: Host; session: string; from: number; to: number } | null {
  const m = SESSION_PTR.exec(p);
  if (!m || !isHost(m[1])) return null;
  const from = Number(m[3]);
  const to = Number(m[4]);
  if (!(from >= 1 && to >= from)) return null;
  return { host: m[1], session: m[2]!, from, to };
}

export async function resolvePointer(
  p: string,
  sessions: SessionStore | null,
): Promise<ResolvedPointer> {
  if (p.startsWith('session:')) {
    const ptr = parseSessionPointer(p);
    if (!ptr) return { pointer: p, kind: 'other' };
    if (!sessions)
      return {
        pointer: p,
        kind: 'session',
        session: { ...ptr, messages: [], missing: 'no session archive in this store' },
      };
    const to = Math.min(ptr.to, ptr.from + MAX_LINES - 1);
    const lines = await sessions.readArchive(
      { host: ptr.host, session: ptr.session },
      ptr.from,
      to,
    );
    const messages = lines.map((l) => {
      const m = messageOf(l.raw);
      return { line: l.line, role: m?.role ?? 'event', text: m?.text ?? l.raw.slice(0, 500) };
    });
    return {
      pointer: p,
      kind: 'session',
      session: {
        ...ptr,
        messages,
        ...(lines.length === 0 ? { missing: 'the archive does not hold these lines' } : {}),
      },
    };
  }
  if (p.startsWith('file:')) return { pointer: p, kind: 'file' };
  if (p === 'user') return { pointer: p, kind: 'user' };
  if (p.startsWith('import:')) return { pointer: p, kind: 'import' };
  return { pointer: p, kind: 'other' };
}

export async function trace(ctx: EngineContext, id: string, sessions: SessionStore | null) {
  const lineage = await loadLineage(ctx, id);
  if (ctx.surface === 'agent') await refuseRejectedHere(ctx, lineage);
  const journal = await ctx.store.journal({ id });
  return {
    id,
    revisions: await Promise.all(
      lineage.map(async (v) => ({
        rev: v.rev,
        op: v.op,
        status: v.state,
        trust: v.trust,
        recorded_at: v.recorded_at,
        actor: v.actor,
        abstract: v.abstract,
        provenance: await Promise.all(v.provenance.map((p) => resolvePointer(p, sessions))),
      })),
    ),
    journal: journal.map((e) => ({
      seq: e.seq,
      at: e.at,
      op: e.op,
      actor: e.actor,
      rev: e.after?.rev ?? null,
      reason: e.reason,
      // The entry's chain hash, as `mneme journal verify` checks it.
      hash: e.hash,
    })),
  };
}
