// The candidate row both ranked search and injection read (an array: statements in raw mode),
// the columns that select it, and the hit built from it, whose document is parsed only when
// its view is first read.
import { TRUST_LEVELS, type RevisionView } from '../../core/types.js';
import type { HitHead, SearchHit } from '../port.js';

/** A candidate row, read as an array (statements in raw mode): see hitColumns. */
export type HitRow = [
  rowid: number,
  doc: string,
  bm: number,
  w: number | null,
  id: string,
  rev: number,
  recorded_at: string,
  trust_rank: number,
  valid_from: string,
];

/**
 * The columns of a HitRow, from revision table alias `t` joined to `weight w`: the document, and
 * beside it what ranking needs, so that the document is parsed only for the hits that are shown.
 */
export const hitColumns = (t: string, bm: string) =>
  `${t}.rowid, ${t}.doc, ${bm}, w.w, ${t}.id, ${t}.rev, ${t}.recorded_at, ${t}.trust_rank, ${t}.valid_from`;

/** A LIMIT to write into SQL: a whole number of rows, at least 1. */
export const sqlLimit = (n: number): number => Math.max(1, Math.min(1_000_000, Math.trunc(n) || 1));

export const toHit = (r: HitRow): SearchHit => new LazyHit(r);

/** A hit whose document is parsed only when its view is first read (most candidates never are). */
class LazyHit implements SearchHit {
  readonly head: HitHead;
  readonly relevance: number;
  readonly weight: number;
  private parsed: RevisionView | undefined;
  private readonly doc: string;

  constructor(r: HitRow) {
    this.doc = r[1];
    this.relevance = -r[2];
    this.weight = r[3] ?? 1;
    this.head = {
      id: r[4],
      rev: r[5],
      recorded_at: r[6],
      trust: TRUST_LEVELS[r[7]] ?? 'untrusted',
      valid_from: r[8],
    };
  }

  get view(): RevisionView {
    return (this.parsed ??= JSON.parse(this.doc) as RevisionView);
  }
}
