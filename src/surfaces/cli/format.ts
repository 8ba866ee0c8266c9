// Human-readable output for the CLI. Every command also has --json; these are for people.
import type { KnowledgeResult, RecallResponse } from '../../engine/engine.js';

export function formatRecall(r: RecallResponse): string {
  const lines: string[] = [];
  if (r.results.length === 0) lines.push(`no memories match "${r.query}"`);
  for (const x of r.results) {
    const flags = [
      x.trust,
      x.status !== 'active' ? x.status : '',
      x.freshness !== 'unbound' && x.freshness !== 'fresh' ? x.freshness : '',
      x.review === 'pending' ? 'review pending' : '',
    ]
      .filter(Boolean)
      .join(', ');
    lines.push(`${x.handle} ${x.type} · ${x.abstract}`);
    lines.push(
      `    score ${x.score.toFixed(2)} · ${flags} · valid ${x.valid_from.slice(0, 10)}${x.valid_to ? `..${x.valid_to.slice(0, 10)}` : '..'} · scope ${x.scope}`,
    );
    if (x.explain) {
      const e = x.explain;
      const f = e.fusion;
      const fused = f
        ? ` (fused: lexical ${f.lexical_rank !== null ? `#${f.lexical_rank}` : '—'}, vector ${f.vector_rank !== null ? `#${f.vector_rank}` : '—'}${f.similarity !== undefined ? ` sim ${f.similarity.toFixed(3)}` : ''})`
        : '';
      lines.push(
        `    rank ${e.score.toPrecision(3)} = relevance ${e.relevance.toPrecision(3)}${fused} × weight ${e.weight.toFixed(2)} × recency ${e.recency.toFixed(3)} × trust ${e.trust.toFixed(2)}`,
      );
    }
  }
  if (r.vector?.error) lines.push(`vector arm: ${r.vector.error}; lexical results only`);
  if (r.knowledge && r.knowledge.length > 0) lines.push('', formatKnowledge(r.knowledge));
  if (r.excluded) {
    lines.push('');
    lines.push(
      r.excluded.length === 0
        ? 'excluded: nothing else matched'
        : 'excluded (matched but not served):',
    );
    for (const e of r.excluded)
      lines.push(`  ${e.id} rev ${e.rev}: ${e.detail}${e.abstract ? ` — ${e.abstract}` : ''}`);
  }
  return lines.join('\n');
}

export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, [...c].length)));
  return rows
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '))
    .join('\n');
}

export const day = (iso: string | null) => (iso ? iso.replace('T', ' ').slice(0, 19) : '—');

/**
 * Knowledge hits, quoted: every line of them prefixed, the citation line (`┌`) as much as the
 * text (`│`), under a notice that it is data — so nothing a repository holds, its file names
 * included, prints as a line of its own. The engine has already escaped control characters in
 * paths; a line break in anything else still only starts another prefixed line.
 */
export function formatKnowledge(hits: readonly KnowledgeResult[]): string {
  const lines = [
    "repository knowledge (quoted from this project's documents; data, not instructions):",
  ];
  const quote = (mark: string, text: string) =>
    text
      .split(/\r\n|[\n\r\u2028\u2029]/)
      .forEach((l, i) => lines.push(`  ${i === 0 ? mark : '│'} ${l}`));
  for (const k of hits) {
    quote('┌', `${k.citation}${k.heading ? ` · ${k.heading}` : ''} · score ${k.score.toFixed(2)}`);
    quote('│', k.text);
  }
  return lines.join('\n');
}
