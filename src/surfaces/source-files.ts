// The SourceFiles ability for a project root: reads regular files strictly inside the root
// (symlinks resolved, so a link cannot lead out), and reads git state straight from `.git`
// without a git binary: HEAD → ref → sha (loose refs, then packed-refs), and ancestry by walking
// parent lines of loose commit objects (zlib). Packed objects are not parsed: when the walk
// reaches one, ancestry is "unknown" (null) and drift is judged on hash and symbol alone.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { SourceFiles } from '../engine/engine.js';

const SHA = /^[0-9a-f]{40}$/;
const MAX_FILE_BYTES = 8 * 1024 * 1024;
const MAX_WALK = 20_000;

interface GitDirs {
  /** Where HEAD lives (a worktree's own git dir). */
  dir: string;
  /** Where refs, packed-refs and objects live. */
  common: string;
}

function gitDirs(root: string): GitDirs | null {
  const dotGit = path.join(root, '.git');
  try {
    const st = fs.statSync(dotGit);
    if (st.isDirectory()) return { dir: dotGit, common: dotGit };
    const m = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(dotGit, 'utf8'));
    if (!m) return null;
    const dir = path.resolve(root, m[1]!.trim());
    const commonFile = path.join(dir, 'commondir');
    const common = fs.existsSync(commonFile)
      ? path.resolve(dir, fs.readFileSync(commonFile, 'utf8').trim())
      : dir;
    return { dir, common };
  } catch {
    return null;
  }
}

function readText(p: string): string | null {
  try {
    return fs.readFileSync(p, 'utf8');
  } catch {
    return null;
  }
}

function resolveRef(g: GitDirs, ref: string): string | null {
  for (const base of [g.dir, g.common]) {
    const loose = readText(path.join(base, ...ref.split('/')))?.trim();
    if (loose && SHA.test(loose)) return loose;
  }
  for (const line of (readText(path.join(g.common, 'packed-refs')) ?? '').split('\n')) {
    const [sha, name] = line.trim().split(' ');
    if (name === ref && sha && SHA.test(sha)) return sha;
  }
  return null;
}

export function gitHead(root: string): string | null {
  const g = gitDirs(root);
  if (!g) return null;
  const head = readText(path.join(g.dir, 'HEAD'))?.trim() ?? '';
  if (SHA.test(head)) return head;
  const m = /^ref:\s*(\S+)$/.exec(head);
  return m ? resolveRef(g, m[1]!) : null;
}

/** Parent shas of a loose commit object, or null when the object is not loose. */
function parents(common: string, sha: string): string[] | null {
  const file = path.join(common, 'objects', sha.slice(0, 2), sha.slice(2));
  let raw: Buffer;
  try {
    raw = zlib.inflateSync(fs.readFileSync(file));
  } catch {
    return null;
  }
  const nul = raw.indexOf(0);
  if (nul < 0 || !raw.subarray(0, nul).toString('latin1').startsWith('commit ')) return [];
  const header =
    raw
      .subarray(nul + 1)
      .toString('utf8')
      .split('\n\n')[0] ?? '';
  return header
    .split('\n')
    .filter((l) => l.startsWith('parent '))
    .map((l) => l.slice(7).trim());
}

export function isAncestor(root: string, commit: string): boolean | null {
  const g = gitDirs(root);
  const head = gitHead(root);
  if (!g || !head || !SHA.test(commit)) return null;
  const seen = new Set<string>();
  const queue = [head];
  let unknown = false;
  while (queue.length > 0 && seen.size < MAX_WALK) {
    const sha = queue.shift()!;
    if (sha === commit) return true;
    if (seen.has(sha)) continue;
    seen.add(sha);
    const ps = parents(g.common, sha);
    if (ps === null) unknown = true;
    else queue.push(...ps);
  }
  return unknown || queue.length > 0 ? null : false;
}

/** Files of the project at `root` for the engine's source bindings. */
export function projectFiles(root: string): SourceFiles {
  const realRoot = fs.realpathSync(root);
  return {
    root: realRoot,
    read(rel: string): Buffer | null {
      const abs = path.resolve(realRoot, rel);
      try {
        const real = fs.realpathSync(abs);
        const inside = path.relative(realRoot, real);
        if (inside === '' || inside.startsWith('..') || path.isAbsolute(inside)) return null;
        const st = fs.statSync(real);
        if (!st.isFile() || st.size > MAX_FILE_BYTES) return null;
        return fs.readFileSync(real);
      } catch {
        return null;
      }
    },
    target(rel: string): string | 'outside' | null {
      let real: string;
      try {
        real = fs.realpathSync(path.resolve(realRoot, rel));
      } catch {
        return null;
      }
      const inside = path.relative(realRoot, real);
      if (inside === '' || inside.startsWith('..') || path.isAbsolute(inside)) return 'outside';
      return inside.split(path.sep).join('/');
    },
    head: () => gitHead(realRoot),
    isAncestor: (commit: string) => isAncestor(realRoot, commit),
    tracked: () => trackedFiles(realRoot),
  };
}

/** `git ls-files` at the root (tracked files, .gitignore honoured), or null when git cannot. */
export function trackedFiles(root: string): string[] | null {
  if (!gitDirs(root)) return null;
  try {
    const out = execFileSync('git', ['-C', root, 'ls-files', '-z', '--cached'], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      timeout: 10_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return out.split('\0').filter((f) => f !== '');
  } catch {
    return null;
  }
}
