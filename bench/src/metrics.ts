// Retrieval metrics of the bench README, as pure functions over ranked id lists. Every function
// takes the ranking (best first, already deduplicated to the unit being scored) and the set of
// relevant ids, so the same code scores sessions, turns and synthetic memories.

/** 1 when any relevant id is in the top k, else 0. */
export function recallAny(
  ranked: readonly string[],
  relevant: readonly string[],
  k: number,
): number {
  const top = new Set(ranked.slice(0, k));
  return relevant.some((r) => top.has(r)) ? 1 : 0;
}

/** 1 when every relevant id is in the top k, else 0 (0 when there is nothing relevant). */
export function recallAll(
  ranked: readonly string[],
  relevant: readonly string[],
  k: number,
): number {
  if (relevant.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return relevant.every((r) => top.has(r)) ? 1 : 0;
}

/** Fraction of the relevant ids found in the top k (LoCoMo's evidence recall). */
export function recallFraction(
  ranked: readonly string[],
  relevant: readonly string[],
  k: number,
): number {
  const uniq = [...new Set(relevant)];
  if (uniq.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return uniq.filter((r) => top.has(r)).length / uniq.length;
}

/** Binary-relevance NDCG@k with log2 discounts. */
export function ndcg(ranked: readonly string[], relevant: readonly string[], k: number): number {
  const rel = new Set(relevant);
  if (rel.size === 0) return 0;
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    if (rel.has(id)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(rel.size, k); i++) ideal += 1 / Math.log2(i + 2);
  return dcg / ideal;
}

/** Reciprocal rank of the first relevant id (0 when none is ranked). */
export function reciprocalRank(ranked: readonly string[], relevant: readonly string[]): number {
  const rel = new Set(relevant);
  const i = ranked.findIndex((id) => rel.has(id));
  return i < 0 ? 0 : 1 / (i + 1);
}

/** Keeps the first occurrence of each id: a session ranked by its best passage. */
export function dedupe(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

export const mean = (xs: readonly number[]): number =>
  xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;

/** Nearest-rank percentile (p in 0..100) of unsorted samples; 0 for none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return 0;
  const s = [...samples].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i]!;
}

/** Averages named metrics over rows, overall and grouped by a key. */
export function aggregate<K extends string>(
  rows: readonly { group: string; values: Record<K, number> }[],
  keys: readonly K[],
): { overall: Record<K, number>; byGroup: Record<string, Record<K, number> & { n: number }> } {
  const avg = (rs: readonly { values: Record<K, number> }[]) =>
    Object.fromEntries(keys.map((k) => [k, round4(mean(rs.map((r) => r.values[k])))])) as Record<
      K,
      number
    >;
  const groups = new Map<string, { values: Record<K, number> }[]>();
  for (const r of rows) groups.set(r.group, [...(groups.get(r.group) ?? []), r]);
  const byGroup: Record<string, Record<K, number> & { n: number }> = {};
  for (const g of [...groups.keys()].sort()) {
    const rs = groups.get(g)!;
    byGroup[g] = { ...avg(rs), n: rs.length };
  }
  return { overall: avg(rows), byGroup };
}

export const round4 = (n: number) => Math.round(n * 1e4) / 1e4;

// ---- LoCoMo evidence ids ----------------------------------------------------------------------

export interface ParsedEvidence {
  /** Well-formed dialog ids (`D<session>:<turn>`) that exist in the conversation. */
  ids: string[];
  /** Raw entries that could not be used, with why. */
  skipped: { raw: string; why: 'malformed' | 'unknown' }[];
}

/**
 * Parses a question's evidence list defensively: `"D8:6; D9:17"` is split into two ids, `"D"`
 * and `"D:11:26"` are malformed, well-formed ids that name no turn of the conversation are unknown.
 */
export function parseEvidence(raw: readonly unknown[], known: ReadonlySet<string>): ParsedEvidence {
  const ids: string[] = [];
  const skipped: ParsedEvidence['skipped'] = [];
  for (const entry of raw) {
    const text = typeof entry === 'string' ? entry : String(entry);
    const parts = text
      .split(/[;,\s]+/)
      .map((p) => p.trim())
      .filter(Boolean);
    if (parts.length === 0) skipped.push({ raw: text, why: 'malformed' });
    for (const p of parts) {
      if (!/^D\d+:\d+$/.test(p)) skipped.push({ raw: p, why: 'malformed' });
      else if (!known.has(p)) skipped.push({ raw: p, why: 'unknown' });
      else if (!ids.includes(p)) ids.push(p);
    }
  }
  return { ids, skipped };
}
