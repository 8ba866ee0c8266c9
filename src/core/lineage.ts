// Deriving lifecycle from a lineage: revisions are never rewritten, so "superseded",
// "rejected", a closed validity interval and a retirement time are computed from successors.
import type { Revision, RevisionView, State } from './types.js';

export function deriveLineage(revisions: readonly Revision[]): RevisionView[] {
  const revs = [...revisions].sort((a, b) => a.rev - b.rev);
  const last = revs[revs.length - 1];
  const ended = last !== undefined && last.status !== 'active';
  const lineageEnd = ended ? last.recorded_at : null;
  const lineageEndState: RevisionView['lineage_end'] = !ended
    ? null
    : last.status === 'merged' || last.status === 'purged'
      ? last.status
      : last.rejected
        ? 'rejected'
        : 'retracted';
  return revs.map((r, i) => {
    const next = revs[i + 1];
    let state: State = r.status === 'active' ? 'active' : r.status;
    let retireKind: RevisionView['retire_kind'] = null;
    let validToEff = r.valid_to;
    if (next) {
      switch (next.op) {
        case 'supersede':
          state = 'superseded';
          retireKind = 'supersede';
          if (validToEff === null || next.valid_from < validToEff) validToEff = next.valid_from;
          break;
        case 'correct':
          state = 'rejected';
          retireKind = 'correct';
          break;
        case 'retract':
          state = next.rejected ? 'rejected' : 'retracted';
          retireKind = 'retract';
          break;
        case 'merge':
          state = 'merged';
          retireKind = 'merge';
          break;
        default:
          // confirm, revalidate, external_edit, import: a new revision of the same value.
          state = 'superseded';
          retireKind = 'revise';
      }
    } else if (r.status === 'retracted') {
      state = r.rejected ? 'rejected' : 'retracted';
    }
    // A purged revision's text is gone whatever came after it: it is only its skeleton now.
    if (r.status === 'purged') state = 'purged';
    return {
      ...r,
      state,
      valid_to_eff: validToEff,
      retired_at: next ? next.recorded_at : null,
      retire_kind: retireKind,
      lineage_end_at: lineageEnd,
      lineage_end: lineageEndState,
      current: next === undefined,
      retired_by: next ? next.rev : null,
    };
  });
}
