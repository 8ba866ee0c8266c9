// `mneme index vectors`: embeds every revision of this project and global that lacks a vector
// (the vector arm fills a bounded batch before each recall; this does the rest, e.g. after
// turning the arm on over an existing store or after a remote model was down).
import { ExitCode, type CliContext } from './run.js';

type VectorStatus =
  | { on: false }
  | { on: true; embedder: string; revisions: number; withVector: number }
  | { on: true; embedder: string; error: string };

export function vectorLine(v: VectorStatus): string {
  if (!v.on) return 'off (set MNEME_EMBEDDER to turn the vector arm on)';
  if ('error' in v) return `on (${v.embedder}) but unavailable: ${v.error}`;
  return `on (${v.embedder}): ${v.withVector} of ${v.revisions} revisions have a vector`;
}

export function registerVectors(c: CliContext): void {
  const index = c.program.command('index').description('index caches (rebuildable)');
  index
    .command('vectors')
    .description('embed every revision of this scope that has no vector yet (vector arm)')
    .option('--prune', 'first drop vectors whose revision is gone or whose text changed')
    .action(async (o: { prune?: boolean }) => {
      const engine = await c.engine();
      const progress = !c.globals().json && c.io.tty?.stdout === true;
      const r = await engine.indexVectors({
        prune: o.prune,
        ...(progress
          ? {
              onProgress: (done: number, total: number) =>
                c.io.stderr(`\rembedding ${done}/${total}`),
            }
          : {}),
      });
      if (progress) c.io.stderr('\n');
      c.out(
        r,
        () =>
          `${r.embedder}: ${r.withVector} of ${r.revisions} revisions have a vector (${r.embedded} embedded, ${r.reused} reused${r.pruned ? `, ${r.pruned} stale dropped` : ''})${r.error ? `\n${r.error}` : ''}`,
      );
      if (r.error) throw new ExitCode(2);
    });
}
