// SQL building blocks for the Postgres adapter: positional parameters (user text is only ever a
// parameter, never part of the SQL), the eligibility predicate mirroring ELIGIBLE in the embedded
// index, and row ↔ RevisionView mapping.
import type { Eligibility } from '../../core/eligibility.js';
import { indexText } from '../../core/text.js';
import { FAR_FUTURE } from '../../core/time.js';
import { TRUST_LEVELS, trustRank, type Revision, type RevisionView } from '../../core/types.js';
import type { HitHead, SearchHit } from '../port.js';

/** Collects parameter values and hands out their `$n` placeholders. */
export class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

export const extraText = (v: Pick<Revision, 'type' | 'tags' | 'fields'>) =>
  [v.type, ...v.tags, ...Object.values(v.fields)].join(' ');

/** A revision's full-text columns: its index tokens (core/text.ts), as the embedded index holds them. */
export const ftsColumns = (
  v: Pick<Revision, 'abstract' | 'body' | 'type' | 'tags' | 'fields'>,
) => ({
  abstract: indexText(v.abstract),
  extra: indexText(extraText(v)),
  body: indexText(v.body),
});

/** The eligibility predicate over alias r (the SQL twin of core/eligibility.ts). */
export function eligibleSql(q: Eligibility, p: Params): string {
  const k = p.add(q.knownAt ?? FAR_FUTURE);
  const t = p.add(q.asOf);
  const far = p.add(FAR_FUTURE);
  return `r.recorded_at <= ${k}
    AND r.status = 'active'
    AND (r.lineage_end_at IS NULL OR r.lineage_end_at > ${k})
    AND NOT (r.retired_at IS NOT NULL AND r.retired_at <= ${k}
             AND r.retire_kind IN ('correct', 'revise', 'retract', 'merge'))
    AND r.valid_from <= ${t}
    AND (CASE WHEN r.retired_at IS NOT NULL AND r.retired_at <= ${k} AND r.retire_kind = 'supersede'
              THEN COALESCE(r.valid_to_eff, ${far}) ELSE COALESCE(r.valid_to, ${far}) END) > ${t}
    AND (${p.add(q.includeQuarantined)}::boolean OR r.quarantine IS NULL)
    AND r.trust_rank >= ${p.add(trustRank(q.minTrust))}`;
}

/** The columns a RevisionView is rebuilt from. */
export const VIEW_COLUMNS = `r.doc, r.state, r.valid_to_eff, r.retired_at, r.retire_kind,
  r.lineage_end_at, r.lineage_end, r.is_current, r.retired_by`;

export interface ViewRow {
  doc: string;
  state: RevisionView['state'];
  valid_to_eff: string | null;
  retired_at: string | null;
  retire_kind: RevisionView['retire_kind'];
  lineage_end_at: string | null;
  lineage_end: RevisionView['lineage_end'];
  is_current: boolean;
  retired_by: number | null;
}

export function toView(row: ViewRow): RevisionView {
  const r = JSON.parse(row.doc) as Revision;
  return {
    ...r,
    state: row.state,
    valid_to_eff: row.valid_to_eff,
    retired_at: row.retired_at,
    retire_kind: row.retire_kind,
    lineage_end_at: row.lineage_end_at,
    lineage_end: row.lineage_end,
    current: row.is_current,
    retired_by: row.retired_by,
  };
}

/** What ranking reads of a hit (HitHead), as columns beside VIEW_COLUMNS. */
export const HEAD_COLUMNS = `r.id, r.rev, r.recorded_at, r.trust_rank, r.valid_from`;

export interface HeadRow {
  id: string;
  rev: number;
  recorded_at: string;
  trust_rank: number;
  valid_from: string;
}

/**
 * A search hit whose document is parsed only when its view is first read: ranking reads the head
 * (columns), and only the few hits that are shown, fed back or checked are ever parsed.
 */
export class ViewHit implements SearchHit {
  readonly head: HitHead;
  private parsed: RevisionView | undefined;

  constructor(
    private readonly row: ViewRow & HeadRow,
    public relevance: number,
    public weight: number,
  ) {
    this.head = {
      id: row.id,
      rev: row.rev,
      recorded_at: row.recorded_at,
      trust: TRUST_LEVELS[row.trust_rank] ?? 'untrusted',
      valid_from: row.valid_from,
    };
  }

  get view(): RevisionView {
    return (this.parsed ??= toView(this.row));
  }
}

/** Column values of one revision row (truth plus derived facts), in DERIVED_COLUMNS order. */
export const ROW_COLUMNS = [
  'doc',
  'scope',
  'type',
  'slug',
  'status',
  'trust_rank',
  'quarantine',
  'review',
  'valid_from',
  'valid_to',
  'recorded_at',
  'state',
  'valid_to_eff',
  'retired_at',
  'retire_kind',
  'retired_by',
  'lineage_end_at',
  'lineage_end',
  'is_current',
  'fts_abstract',
  'fts_extra',
  'fts_body',
] as const;

export const ROW_TYPES: Record<(typeof ROW_COLUMNS)[number], string> = {
  doc: 'text',
  scope: 'text',
  type: 'text',
  slug: 'text',
  status: 'text',
  trust_rank: 'smallint',
  quarantine: 'text',
  review: 'text',
  valid_from: 'text',
  valid_to: 'text',
  recorded_at: 'text',
  state: 'text',
  valid_to_eff: 'text',
  retired_at: 'text',
  retire_kind: 'text',
  retired_by: 'integer',
  lineage_end_at: 'text',
  lineage_end: 'text',
  is_current: 'boolean',
  fts_abstract: 'text',
  fts_extra: 'text',
  fts_body: 'text',
};

const ftsRow = (v: RevisionView) => {
  const c = ftsColumns(v);
  return { fts_abstract: c.abstract, fts_extra: c.extra, fts_body: c.body };
};

export function rowValues(v: RevisionView, doc: string): unknown[] {
  const row: Record<(typeof ROW_COLUMNS)[number], unknown> = {
    doc,
    scope: v.scope,
    type: v.type,
    slug: v.slug,
    status: v.status,
    trust_rank: trustRank(v.trust),
    quarantine: v.quarantine,
    review: v.review,
    valid_from: v.valid_from,
    valid_to: v.valid_to,
    recorded_at: v.recorded_at,
    state: v.state,
    valid_to_eff: v.valid_to_eff,
    retired_at: v.retired_at,
    retire_kind: v.retire_kind,
    retired_by: v.retired_by,
    lineage_end_at: v.lineage_end_at,
    lineage_end: v.lineage_end,
    is_current: v.current,
    ...ftsRow(v),
  };
  return ROW_COLUMNS.map((c) => row[c]);
}
