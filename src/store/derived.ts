// What both adapters derive from journal entries the same way: a bound memory's freshness (a
// source-bound write is fresh; a `check_source` entry records its verdict) and the weight
// passes (`sleep_pass` entries name, per scope, the watermark its weights were computed at).
// The adapters only store the result (files: the index's fresh and weight tables; Postgres:
// source_freshness and weights rows). Also the integrity finding both report for a chain that
// does not verify.
import type { JournalEntry } from '../core/journal.js';
import type { FreshnessRecord, IntegrityFinding, VerifyReport } from './port.js';

/** fsck's finding for a journal chain that does not verify (none when it does). */
export function chainFindings(v: VerifyReport): IntegrityFinding[] {
  if (v.ok || !v.firstBad) return [];
  return [
    {
      kind: 'journal_chain',
      severity: 'error',
      message: `journal chain broken: ${v.firstBad.problem} — every write is refused until a person runs \`mneme journal repair\``,
    },
  ];
}

/** The freshness records an entry sets, in order (a later one replaces an earlier one). */
export function freshnessFrom(entry: JournalEntry): { id: string; record: FreshnessRecord }[] {
  const out: { id: string; record: FreshnessRecord }[] = [];
  if (entry.data?.source_bound === true && entry.target && entry.after) {
    // A revision whose source the engine just hashed is fresh, whatever was journaled before.
    out.push({
      id: entry.target.id,
      record: { rev: entry.after.rev, freshness: 'fresh', observed_sha: null, at: entry.at },
    });
  }
  if (entry.op === 'check_source' && entry.target && entry.data) {
    const d = entry.data as { freshness?: unknown; rev?: unknown; observed_sha?: unknown };
    if (
      (d.freshness === 'fresh' || d.freshness === 'drifted' || d.freshness === 'missing') &&
      typeof d.rev === 'number'
    )
      out.push({
        id: entry.target.id,
        record: {
          rev: d.rev,
          freshness: d.freshness,
          observed_sha: typeof d.observed_sha === 'string' ? d.observed_sha : null,
          at: entry.at,
        },
      });
  }
  return out;
}

/** For each scope, the watermark of the last `sleep_pass` among `entries` that names it. */
export function weightPasses(entries: Iterable<JournalEntry>): Map<string, string> {
  const last = new Map<string, string>();
  for (const e of entries) {
    if (e.op !== 'sleep_pass') continue;
    const d = e.data as { weights_at?: unknown; scopes?: unknown } | undefined;
    if (typeof d?.weights_at !== 'string' || !Array.isArray(d.scopes)) continue;
    for (const sc of d.scopes) if (typeof sc === 'string') last.set(sc, d.weights_at);
  }
  return last;
}
