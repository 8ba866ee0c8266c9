// `mneme knowledge refresh|status|clear`: the bound project's knowledge index (its tracked
// documents, a cache beside memory; engine/knowledge.ts). The include list and the size cap come
// from the settings (knowledge.include, knowledge.max_file_bytes); the engine does the rest.
import type { KnowledgeOptions, RefreshReport } from '../../engine/engine.js';
import type { Settings } from '../config/schema.js';
import type { CliContext } from './run.js';

/** The refresh options the settings give (also used by `doctor --fix` and the hooks). */
export function knowledgeOptions(s: Settings): KnowledgeOptions {
  return {
    include: s.knowledge.include
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== ''),
    maxFileBytes: s.knowledge.max_file_bytes,
  };
}

export function refreshLine(r: RefreshReport & { ms?: number }): string {
  const lines = [
    `knowledge of ${r.scope}: ${r.files} files, ${r.chunks} chunks${r.ms !== undefined ? ` (refreshed in ${r.ms} ms)` : ''}`,
    `  scanned ${r.scanned} · changed ${r.changed} · unchanged ${r.unchanged} · removed ${r.removed} · chunks +${r.chunksAdded} −${r.chunksRemoved}`,
  ];
  if (r.chunksWithheld > 0)
    lines.push(`  ${r.chunksWithheld} chunks withheld (instruction-like text found by the screen)`);
  for (const s of r.skipped) lines.push(`  skipped ${s.path}: ${s.reason}`);
  return lines.join('\n');
}

export function registerKnowledge(c: CliContext): void {
  const k = c.program
    .command('knowledge')
    .description("the project's documents, indexed beside memory (a rebuildable cache)");
  k.command('refresh')
    .description('index the tracked documents that changed since the last refresh')
    .action(async () => {
      const engine = await c.engine();
      const started = process.hrtime.bigint();
      const r = await engine.refreshKnowledge(knowledgeOptions(c.settings().settings));
      const ms = Number((process.hrtime.bigint() - started) / 1_000_000n);
      c.out({ ...r, ms }, () => refreshLine({ ...r, ms }));
    });
  k.command('status')
    .description("what the project's knowledge index holds")
    .action(async () => {
      const r = await (await c.engine()).knowledgeStatus();
      c.out(r, () =>
        [
          `knowledge of ${r.scope}: ${r.files} files, ${r.chunks} chunks${r.bytes !== null ? `, index ${r.bytes} bytes` : ''}`,
          ...r.skipped.map((s) => `  skipped ${s.path}: ${s.reason}`),
        ].join('\n'),
      );
    });
  k.command('clear')
    .description("drop the project's knowledge index (the next refresh rebuilds it)")
    .action(async () => {
      const r = await (await c.engine()).clearKnowledge();
      c.out(r, () => `knowledge of ${r.scope}: ${r.chunks} chunks dropped`);
    });
}
