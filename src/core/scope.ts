// Scope identity: `global`, or a project derived from its canonical git remote (else the
// repository root path, else the directory), stored as a readable slug plus a short hash.
import { sha256 } from './hash.js';
import { MnemeError } from './errors.js';
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

/** A project named plainly (`api`), as a bot without a git remote names it on a team server. */
export const PROJECT_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,47}$/;

/**
 * The scope of a project given by id (`api-1a2b3c4d`, unchanged) or by plain name (`api`: a
 * scope derived from the name, the same for every caller, as a remote's or a path's is). Names
 * are per store: two tenants both naming `api` write to their own rows and never meet.
 */
export function namedProjectScope(p: string): string {
  if (SCOPE_PATTERN.test(p) && p !== GLOBAL_SCOPE) return p;
  if (PROJECT_NAME_PATTERN.test(p) && p !== GLOBAL_SCOPE) return projectScope(`name:${p}`, p);
  throw new MnemeError(
    'invalid',
    `"${p.slice(0, 80)}" is neither a project id nor a project name`,
    {
      hint: 'name a project plainly (api: lower-case letters, digits, - and _) or by its id as `mneme status` shows it (acme-shop-1a2b3c4d)',
    },
  );
}
