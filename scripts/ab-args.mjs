// The command line of the side-by-side benchmark scripts (hook-latency-ab.mjs, scale-ab.mjs):
// `--name value` flags and `--trees LABEL=DIR,LABEL=DIR` (built worktrees of mneme).
import path from 'node:path';

export const args = process.argv.slice(2);

/** The value after `name`, or `fallback`. */
export const flag = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
};

/** The builds to compare; exits with a usage line when none are given. */
export function treesFlag() {
  const trees = flag('--trees', '')
    .split(',')
    .filter(Boolean)
    .map((t) => {
      const [label, dir] = t.includes('=') ? t.split('=') : [path.basename(t), t];
      return { label, dir: path.resolve(dir) };
    });
  if (trees.length === 0) {
    console.error('pass --trees LABEL=DIR,LABEL=DIR (built worktrees of mneme)');
    process.exit(2);
  }
  return trees;
}
