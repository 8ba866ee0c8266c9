// The distiller's lookups (issue 19): a model may recall a query or read a memory by id before
// it answers, so it updates the memory that exists instead of writing a near-duplicate. Answers
// come from the reconcile sheet's boundary only — the eligible current memories of the session's
// project and the global scope — and are escaped like the sheet. A memory an answer shows joins
// the sheet with a handle: that is the only way a lookup extends what the distiller may change.
import { escapeForEnvelope } from '../core/inject.js';
import type { Lookup } from '../core/distill-ops.js';
import type { RevisionView } from '../core/types.js';
import type { EngineContext } from './context.js';
import { sheetLine, type Sheet } from './distill-prompt.js';
import { recall } from './recall.js';

/** Memories one recall lookup shows. */
export const LOOKUP_RECALL_LIMIT = 5;
/** Body characters one read lookup shows. */
export const LOOKUP_BODY_CHARS = 2000;

export interface LookupAnswers {
  lines: string[];
  /** Lookups answered (a read outside the boundary is answered too: "not available"). */
  answered: number;
  /** Handles added to the sheet by these answers. */
  joined: string[];
}

const NOT_AVAILABLE =
  'not available: no eligible memory with that id in this project or the global scope';

/** The handle `v` has on the sheet, adding it (the next free hN) when it has none yet. */
function join(sheet: Sheet, v: RevisionView, joined: string[]): string {
  for (const [h, w] of sheet.handles) if (w.id === v.id) return h;
  let n = sheet.handles.size + 1;
  while (sheet.handles.has(`h${n}`)) n++;
  const h = `h${n}`;
  sheet.handles.set(h, v);
  joined.push(h);
  return h;
}

export async function answerLookups(
  ctx: EngineContext,
  sheet: Sheet,
  lookups: { line: number; lookup: Lookup }[],
): Promise<LookupAnswers> {
  const out: LookupAnswers = { lines: [], answered: 0, joined: [] };
  for (const { lookup } of lookups) {
    if (lookup.kind === 'read') {
      out.lines.push(`read ${lookup.id}:`);
      const v = sheet.boundary.get(lookup.id);
      if (!v) out.lines.push(`  ${NOT_AVAILABLE}`);
      else {
        out.lines.push(sheetLine(join(sheet, v, out.joined), v));
        out.lines.push(`  id ${v.id}, scope ${v.scope}, valid from ${v.valid_from.slice(0, 10)}`);
        if (v.body.trim() !== '')
          out.lines.push(`  body: ${escapeForEnvelope(v.body, LOOKUP_BODY_CHARS)}`);
      }
      out.answered++;
      continue;
    }
    out.lines.push(`recall "${escapeForEnvelope(lookup.query, 300)}":`);
    let hits: RevisionView[];
    try {
      const r = await recall(ctx, lookup.query, {
        limit: LOOKUP_RECALL_LIMIT,
        logUsage: false,
        freshnessChecks: 0,
      });
      // Recall serves the same scopes; the boundary check keeps the sheet's rule exact.
      hits = r.results.flatMap((x) => sheet.boundary.get(x.id) ?? []);
    } catch (e) {
      out.lines.push(`  not answered: ${escapeForEnvelope((e as Error).message, 200)}`);
      out.answered++;
      continue;
    }
    if (hits.length === 0) out.lines.push('  (no memory matches)');
    for (const v of hits) out.lines.push(sheetLine(join(sheet, v, out.joined), v));
    out.answered++;
  }
  return out;
}
