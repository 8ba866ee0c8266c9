// Who is calling. On a loopback bind a request without a token is the local user; any other bind
// needs a bearer token on every request, resolved by a pluggable function (a token file here, a
// tenants table in Postgres). A token-bearing caller is an agent and reads only its projects.
import { timingSafeEqual, createHash } from 'node:crypto';
import { MnemeError } from '../../core/errors.js';
import { SCOPE_PATTERN } from '../../core/scope.js';
import type { Actor } from '../../core/types.js';
import { EVERY_PROJECT, type Reader } from '../../engine/engine.js';
import { readInputFile } from '../input-file.js';

/** A token file holds a line per token: a megabyte is thousands of them. */
const TOKEN_FILE_BYTES = 1024 * 1024;

/** What a token grants: a tenant (null for the embedded store) and the projects it may read. */
export interface Principal {
  tenant: string | null;
  /** Project scope ids, or '*' for every project in the store. Global is always readable. */
  projects: readonly string[] | '*';
  /**
   * Runs the rest of the request with what resolving the token read of the store (a Postgres
   * tenant's tombstone version: the recall reads tombstones again only if they moved).
   */
  within?: <T>(fn: () => Promise<T>) => Promise<T>;
}

/** Why a known token is refused (revoked, expired, its tenant disabled), said to its holder. */
export interface TokenRefusal {
  refused: string;
  hint: string;
}

export type TokenResolution = Principal | TokenRefusal | null;

export type TokenResolver = (token: string) => TokenResolution | Promise<TokenResolution>;

export type Caller = { kind: 'local' } | { kind: 'token'; principal: Principal };

export const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export const isLoopback = (host: string) => LOOPBACK_HOSTS.has(host.toLowerCase());

/**
 * The actor an API write is recorded as: always a program's (kind agent). Without a token the
 * API answers any local process, an agent with a shell included, so nothing it writes counts as
 * a person's decision (overturning a confirmed value needs the CLI or the dashboard).
 */
export const apiActor = (caller: Caller): Actor =>
  caller.kind === 'token'
    ? { kind: 'agent', surface: 'http' }
    : { kind: 'agent', surface: 'http-local' };

export const surfaceOf = (caller: Caller): 'human' | 'agent' =>
  caller.kind === 'token' ? 'agent' : 'human';

/** What the engine's outbound filter knows of a caller: the projects it may read. */
export const readerOf = (caller: Caller): Reader =>
  caller.kind === 'local' ? EVERY_PROJECT : { projects: caller.principal.projects };

export function mayRead(caller: Caller, project: string): boolean {
  if (caller.kind === 'local') return true;
  const p = caller.principal.projects;
  return p === '*' || p.includes(project);
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Reads a token file: one token per line, optionally followed by the project ids it may read
 * (`<token> acme-shop-1a2b3c4d other-9f8e7d6c`); a token with no projects may read every
 * project. Blank lines and `#` comments are skipped. Tokens are compared in constant time.
 */
export function tokenFileResolver(file: string): TokenResolver {
  const text = readInputFile(file, { cap: TOKEN_FILE_BYTES, what: 'the token file' }).toString(
    'utf8',
  );
  const entries: { hash: Buffer; principal: Principal }[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [token, ...projects] = line.split(/\s+/);
    if (!token || token.length < 16)
      throw new MnemeError('invalid', `${file}:${i + 1}: a token needs at least 16 characters`, {
        hint: 'generate one with `openssl rand -hex 32`',
      });
    for (const p of projects)
      if (!SCOPE_PATTERN.test(p) || p === 'global')
        throw new MnemeError('invalid', `${file}:${i + 1}: "${p}" is not a project id`, {
          hint: 'project ids look like acme-shop-1a2b3c4d (see `mneme status`)',
        });
    entries.push({
      hash: digest(token),
      principal: { tenant: null, projects: projects.length ? projects : '*' },
    });
  }
  if (entries.length === 0)
    throw new MnemeError('invalid', `the token file ${file} holds no token`, {
      hint: 'write one token per line, e.g. the output of `openssl rand -hex 32`',
    });
  return (token) => {
    const h = digest(token);
    let found: Principal | null = null;
    for (const e of entries) if (timingSafeEqual(e.hash, h)) found = e.principal;
    return found;
  };
}
