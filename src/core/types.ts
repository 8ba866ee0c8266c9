// The memory model (DESIGN §2): a memory is a lineage of revisions sharing one stable id.
// A revision as written is immutable; its lifecycle state is derived from its successors.
import type { ArtifactRef } from './artifact.js';

export const TRUST_LEVELS = ['untrusted', 'claimed', 'verified', 'confirmed'] as const;
export type Trust = (typeof TRUST_LEVELS)[number];
export const trustRank = (t: Trust): number => TRUST_LEVELS.indexOf(t);

export const ACTOR_KINDS = [
  'human',
  'agent',
  'hook',
  'distiller',
  'sleep',
  'fsck',
  'import',
  'external',
  'system',
] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

export interface Actor {
  kind: ActorKind;
  host?: string;
  session?: string;
  surface?: string;
}

/** What a revision says about itself when written. */
/** `purged`: a person erased the revision's text (`mneme purge`); only its skeleton remains. */
export type WrittenStatus = 'active' | 'retracted' | 'merged' | 'purged';

/** The lifecycle state of a revision, derived from the lineage (DESIGN §2). */
export type State = 'active' | 'superseded' | 'rejected' | 'retracted' | 'merged' | 'purged';

/** The operation that produced a revision. */
export type RevisionOp =
  | 'remember'
  | 'supersede'
  | 'correct'
  | 'retract'
  | 'confirm'
  | 'revalidate'
  | 'external_edit'
  | 'import'
  | 'link'
  | 'merge'
  | 'quarantine';

export type LinkRel = 'supersedes' | 'derived_from' | 'contradicts' | 'relates_to';
export interface Link {
  rel: LinkRel;
  target: string;
}

export interface SourceBinding {
  path: string;
  sha256: string;
  symbol?: string;
  commit?: string;
}

export type Freshness = 'fresh' | 'drifted' | 'missing' | 'unbound';

/** One revision exactly as stored in its Markdown file. */
export interface Revision {
  id: string;
  rev: number;
  op: RevisionOp;
  type: string;
  scope: string;
  slug: string;
  abstract: string;
  body: string;
  tags: string[];
  fields: Record<string, string>;
  links: Link[];
  status: WrittenStatus;
  rejected: boolean;
  trust: Trust;
  review: 'none' | 'pending';
  quarantine: string | null;
  valid_from: string;
  valid_to: string | null;
  recorded_at: string;
  actor: Actor;
  provenance: string[];
  source: SourceBinding | null;
  applies_to: string[];
  reason: string | null;
  /** Large bytes kept beside the memory by reference (core/artifact.ts); absent: none. */
  artifact?: ArtifactRef;
}

/** A revision with the facts derived from the rest of its lineage. */
export interface RevisionView extends Revision {
  state: State;
  /** valid_to after a successor's supersede closed it. */
  valid_to_eff: string | null;
  /** When the store stopped treating this revision as current. */
  retired_at: string | null;
  /** How it was retired: by a supersede, a correction, a retraction or a merge. */
  retire_kind: 'supersede' | 'correct' | 'retract' | 'merge' | 'revise' | null;
  /** When the lineage as a whole was retracted or merged (null while live), and how. */
  lineage_end_at: string | null;
  lineage_end: 'retracted' | 'rejected' | 'merged' | 'purged' | null;
  current: boolean;
  /** The rev number of the successor that retired this one, if any. */
  retired_by: number | null;
}
