// The k first of n items in a total order, without sorting all n: a bounded heap whose top is
// the worst kept so far, so most items cost one comparison. Ranking a tenant's whole match
// (thousands of candidates) for a page of 5 or a cut of 100 reads the same first k as a full
// sort would, for a fraction of the comparisons.

/**
 * The indices 0..n-1 of the k items that come first by `before` (negative: a comes before b; a
 * total order, so the result is the one a full sort gives), in that order.
 */
export function firstK(n: number, k: number, before: (a: number, b: number) => number): number[] {
  const m = Math.max(0, Math.min(k, n));
  if (m === n) return Array.from({ length: n }, (_, i) => i).sort(before);
  // heap[0] is the kept item that comes last; each parent comes after its children.
  const heap = Array.from({ length: m }, (_, i) => i);
  const down = (at: number) => {
    for (;;) {
      const l = 2 * at + 1;
      const r = l + 1;
      let last = at;
      if (l < m && before(heap[l]!, heap[last]!) > 0) last = l;
      if (r < m && before(heap[r]!, heap[last]!) > 0) last = r;
      if (last === at) return;
      [heap[at], heap[last]] = [heap[last]!, heap[at]!];
      at = last;
    }
  };
  for (let i = (m >> 1) - 1; i >= 0; i--) down(i);
  for (let i = m; i < n; i++)
    if (m > 0 && before(i, heap[0]!) < 0) {
      heap[0] = i;
      down(0);
    }
  return heap.sort(before);
}
