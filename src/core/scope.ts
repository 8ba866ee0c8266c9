// Scope identity: `global`, or a project derived from its canonical git remote (else the
// repository root path, else the directory), stored as a readable slug plus a short hash.
import { sha256 } from './hash.js';
import { slugify } from './slug.js';

export const GLOBAL_SCOPE = 'global';
export const SCOPE_PATTERN = /^(global|[a-z0-9][a-z0-9-]{0,60}-[0-9a-f]{8})$/;

/** `git@host:o/r.git`, `https://user@host/o/r`, `ssh://git@host:22/o/r.git` → `host/o/r`. */
export function canonicalRemote(url: string): string {
  let s = url.trim();
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/)(.+)$/.exec(s);
  if (scp && !/^[a-z]+:\/\//i.test(s)) {
    s = `${scp[1]}/${scp[2]}`;
  } else {
    s = s.replace(/^[a-z+]+:\/\//i, '').replace(/^[^@/]+@/, '');
    s = s.replace(/^([^/:]+):\d+\//, '$1/');
  }
  return s
    .replace(/\.git\/?$/i, '')
    .replace(/\/+$/, '')
    .toLowerCase();
}

export function projectScope(identity: string, readableName: string): string {
  const readable = slugify(readableName, 48) || 'project';
  return `${readable}-${sha256(identity).slice(0, 8)}`;
}

export function scopeFromRemote(url: string): { scope: string; identity: string } {
  const identity = canonicalRemote(url);
  const parts = identity.split('/').filter(Boolean);
  const name = parts.slice(-2).join('-');
  return { scope: projectScope(`git:${identity}`, name), identity };
}

export function scopeFromPath(root: string): { scope: string; identity: string } {
  const name = root.split(/[\\/]/).filter(Boolean).pop() ?? 'root';
  return { scope: projectScope(`path:${root}`, name), identity: root };
}
