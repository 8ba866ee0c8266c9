// The purge entry both adapters append: the engine's body, plus the earlier entries it rewrote
// (each by seq and the content hash of its rewritten form, core/journal.ts verifyChain).
import { entryContentHash, type JournalBody, type JournalEntry } from '../core/journal.js';

export function vouchingBody(
  body: JournalBody,
  rewritten: ReadonlyMap<number, JournalEntry>,
): JournalBody {
  return {
    ...body,
    data: {
      ...(body.data ?? {}),
      redacted: [...rewritten].map(([seq, e]) => ({ seq, content: entryContentHash(e) })),
    },
  };
}
