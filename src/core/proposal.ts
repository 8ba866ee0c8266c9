// Proposals: changes the system infers (merge, split, supersede, retract, conflict, external
// edit, quarantine, confirm, lift) wait here for a person. Agents may create them; only a human
// surface decides them (invariant 9).
import type { Actor } from './types.js';

export const PROPOSAL_KINDS = [
  'merge',
  'split',
  'supersede',
  'retract',
  'conflict',
  'external_edit',
  'quarantine',
  'confirm',
  'lift',
] as const;
export type ProposalKind = (typeof PROPOSAL_KINDS)[number];
export type ProposalState = 'pending' | 'accepted' | 'rejected';

export interface Proposal {
  id: string;
  kind: ProposalKind;
  scope: string;
  targets: string[];
  summary: string;
  /** What accepting would write: an op for the write path, or null when accepting only clears. */
  draft: Record<string, unknown> | null;
  evidence: string[];
  /** A readable diff of what would change. */
  diff: string;
  created_by: Actor;
  created_at: string;
  state: ProposalState;
  decided_by: Actor | null;
  decided_at: string | null;
  reason: string | null;
}
