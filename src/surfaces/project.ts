// Binding a surface to its project at start: the canonical git remote of the working directory
// (origin, else the first remote), else the repository root path, else the directory itself.
// Reads .git/config directly — no git process, no network.
import fs from 'node:fs';
import path from 'node:path';
import { scopeFromPath, scopeFromRemote } from '../core/scope.js';
import type { Binding } from '../engine/engine.js';

export function findRepoRoot(start: string): { root: string; gitDir: string } | null {
  let dir = path.resolve(start);
  for (;;) {
    const dotGit = path.join(dir, '.git');
    try {
      const st = fs.statSync(dotGit);
      if (st.isDirectory()) return { root: dir, gitDir: dotGit };
      if (st.isFile()) {
        // A worktree or submodule: `gitdir: <path>`; remotes live in the common dir.
        const m = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(dotGit, 'utf8'));
        if (m) {
          let gitDir = path.resolve(dir, m[1]!.trim());
          const common = path.join(gitDir, 'commondir');
          if (fs.existsSync(common))
            gitDir = path.resolve(gitDir, fs.readFileSync(common, 'utf8').trim());
          return { root: dir, gitDir };
        }
      }
    } catch {
      /* keep walking up */
    }
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

export function remoteUrl(gitDir: string): string | null {
  let text: string;
  try {
    text = fs.readFileSync(path.join(gitDir, 'config'), 'utf8');
  } catch {
    return null;
  }
  const remotes = new Map<string, string>();
  let current: string | null = null;
  for (const line of text.split('\n')) {
    const sec = /^\s*\[remote\s+"([^"]+)"\]\s*$/.exec(line);
    if (sec) {
      current = sec[1]!;
      continue;
    }
    if (/^\s*\[/.test(line)) {
      current = null;
      continue;
    }
    const url = /^\s*url\s*=\s*(.+?)\s*$/.exec(line);
    if (current && url && !remotes.has(current)) remotes.set(current, url[1]!);
  }
  return remotes.get('origin') ?? remotes.values().next().value ?? null;
}

export function bindProject(cwd: string): Binding {
  const repo = findRepoRoot(cwd);
  if (repo) {
    const url = remoteUrl(repo.gitDir);
    if (url) {
      const { scope, identity } = scopeFromRemote(url);
      return { project: scope, identity };
    }
    const { scope, identity } = scopeFromPath(fs.realpathSync(repo.root));
    return { project: scope, identity };
  }
  const real = fs.realpathSync(path.resolve(cwd));
  const { scope, identity } = scopeFromPath(real);
  return { project: scope, identity };
}
