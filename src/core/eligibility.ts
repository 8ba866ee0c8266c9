// The eligibility predicate (invariant 6): decided before relevance. Adapters express the same
// rules inside their queries; this function is the reference the conformance suite checks them
// against, and it names the reason for the exclusion trace.
import { FAR_FUTURE } from './time.js';
import { trustRank, type RevisionView, type Trust } from './types.js';

export interface Eligibility {
  /** Scopes the caller may read: always the bound project and `global`. */
  scopes: string[];
  /** Validity time ("what held at T"). */
  asOf: string;
  /** Transaction time ("what did the store believe at K"); null means now. */
  knownAt: string | null;
  minTrust: Trust;
  includeQuarantined: boolean;
}

export type ExclusionReason =
  | 'other_scope'
  | 'not_yet_recorded'
  | 'retracted'
  | 'rejected'
  | 'merged'
  | 'purged'
  | 'superseded'
  | 'not_yet_valid'
  | 'expired'
  | 'quarantined'
  | 'below_trust_floor'
  | 'rejected_here';

export function exclusionReason(v: RevisionView, q: Eligibility): ExclusionReason | null {
  if (!q.scopes.includes(v.scope)) return 'other_scope';
  const k = q.knownAt ?? FAR_FUTURE;
  if (v.recorded_at > k) return 'not_yet_recorded';
  if (v.status !== 'active')
    return v.status === 'merged' || v.status === 'purged'
      ? v.status
      : v.rejected
        ? 'rejected'
        : 'retracted';
  if (v.lineage_end_at !== null && v.lineage_end_at <= k && v.lineage_end !== null) {
    return v.lineage_end;
  }
  const retired = v.retired_at !== null && v.retired_at <= k;
  if (retired && v.retire_kind === 'correct') return 'rejected';
  if (retired && v.retire_kind === 'revise') return 'superseded';
  const validTo = retired && v.retire_kind === 'supersede' ? v.valid_to_eff : v.valid_to;
  if (v.valid_from > q.asOf) return 'not_yet_valid';
  if (validTo !== null && validTo <= q.asOf) return retired ? 'superseded' : 'expired';
  if (v.quarantine !== null && !q.includeQuarantined) return 'quarantined';
  if (trustRank(v.trust) < trustRank(q.minTrust)) return 'below_trust_floor';
  return null;
}

export const describeExclusion = (reason: ExclusionReason, v: RevisionView): string => {
  switch (reason) {
    case 'other_scope':
      return 'belongs to another project';
    case 'superseded':
      return v.retired_by !== null ? `superseded by ${v.id} rev ${v.retired_by}` : 'superseded';
    case 'rejected':
      return v.retired_by !== null ? `rejected (corrected by rev ${v.retired_by})` : 'rejected';
    case 'retracted':
      return 'retracted';
    case 'merged':
      return 'merged into another memory';
    case 'purged':
      return 'purged by a person (its text is erased)';
    case 'not_yet_valid':
      return `not yet valid (valid from ${v.valid_from})`;
    case 'expired':
      return `no longer valid (valid to ${v.valid_to})`;
    case 'quarantined':
      return `quarantined: ${v.quarantine}`;
    case 'below_trust_floor':
      return `trust ${v.trust} is below the requested floor`;
    case 'not_yet_recorded':
      return 'recorded after the known-at time';
    case 'rejected_here':
      return `its value was rejected in ${v.scope === 'global' ? 'this project' : 'the global scope'}`;
  }
};
