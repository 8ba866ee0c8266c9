// The `project` parameter: a project id (`acme-shop-1a2b3c4d`), a repository path on this
// machine (bound like the CLI binds its working directory; the local user only, never a token
// holder), or on a team server (--db) a plain name (`api`, core/scope.ts namedProjectScope).
// Absent means the global scope only.
// A caller reads only the projects it may read; the engine then enforces the scope on every read.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MnemeError } from '../../core/errors.js';
import { SCOPE_PATTERN, namedProjectScope } from '../../core/scope.js';
import type { Binding } from '../../engine/engine.js';
import { bindProject, findRepoRoot } from '../project.js';
import { mayRead, type Caller } from './auth.js';

export interface ProjectChoice {
  binding: Binding;
  /** The repository root when the project was given as a path (source freshness checks). */
  root: string | null;
}

export const GLOBAL_ONLY: ProjectChoice = {
  binding: { project: null, identity: null },
  root: null,
};

export function resolveProject(param: string | undefined, caller: Caller): ProjectChoice {
  const p = param?.trim() ?? '';
  // A token bound to projects that reads global alone still reads it on their behalf: a value
  // rejected in any of them is withheld (the binding's guards), as it is when it names one.
  if ((p === '' || p === 'global') && caller.kind === 'token' && caller.principal.projects !== '*')
    return {
      binding: { project: null, identity: null, guards: [...caller.principal.projects] },
      root: null,
    };
  if (p === '' || p === 'global') return GLOBAL_ONLY;
  let choice: ProjectChoice;
  if (SCOPE_PATTERN.test(p)) {
    choice = { binding: { project: p, identity: p }, root: null };
  } else if ((path.isAbsolute(p) || p.startsWith('~/')) && caller.kind === 'token') {
    // A token holder names projects by id (or name), never by a path on the server's host: a
    // path would have the server read its own files for the caller (a git remote, a source
    // file's hash), and even "no such directory" would tell what exists there.
    throw new MnemeError('refused', 'a token names a project by its id, not by a path', {
      hint: 'pass the project id (`mneme status` in the repository shows it), or on a team server its name',
    });
  } else if (path.isAbsolute(p) || p.startsWith('~/')) {
    const dir = p.startsWith('~/') ? path.join(os.homedir(), p.slice(2)) : p;
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
      throw new MnemeError('invalid', `project path ${p} is not a directory on this machine`, {
        hint: 'pass a project id (see `mneme status`) or an existing repository path',
      });
    choice = { binding: bindProject(dir), root: findRepoRoot(dir)?.root ?? path.resolve(dir) };
  } else if (caller.kind === 'token' && caller.principal.tenant !== null) {
    // A team server (--db) has no working directory to bind: a project is named plainly (`api`).
    const scope = namedProjectScope(p);
    choice = { binding: { project: scope, identity: `name:${p}` }, root: null };
  } else {
    throw new MnemeError('invalid', `"${p.slice(0, 80)}" is neither a project id nor a path`, {
      hint: 'project ids look like acme-shop-1a2b3c4d; paths must be absolute',
    });
  }
  if (!mayRead(caller, choice.binding.project!))
    throw new MnemeError('refused', `this token may not read project ${choice.binding.project}`, {
      hint: 'ask for a token that lists this project, or leave project out for the global scope',
    });
  return choice;
}
