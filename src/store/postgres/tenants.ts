// Tenants and API tokens of a shared Postgres store. A token is 32 random bytes shown once and
// stored only as its sha256 (enough for a high-entropy secret: there is nothing to brute-force);
// it maps to one tenant and optionally a project allow-list. The HTTP layer calls resolveToken.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { MnemeError } from '../../core/errors.js';
import { sha256 } from '../../core/hash.js';
import { connectionError } from './errors.js';
import { migrate } from './schema.js';

export const TENANT_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const TOKEN_PREFIX = 'mnm_';

type Queryable = Pick<pg.Pool, 'query'>;

export function checkTenantName(name: string): string {
  if (!TENANT_PATTERN.test(name)) {
    throw new MnemeError('invalid', `"${name.slice(0, 80)}" is not a tenant name`, {
      hint: 'use lower-case letters, digits, - and _ (up to 63 characters), e.g. acme',
    });
  }
  return name;
}

export async function tenantExists(db: Queryable, name: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM tenants WHERE name = $1', [name]);
  return rows.length > 0;
}

/** Creates a tenant; false when it already existed (creating twice is not an error). */
export async function createTenant(db: Queryable, name: string): Promise<boolean> {
  checkTenantName(name);
  const r = await db.query('INSERT INTO tenants(name) VALUES ($1) ON CONFLICT DO NOTHING', [name]);
  return r.rowCount === 1;
}

export interface TokenGrant {
  tenant: string;
  /** Project scopes this token may bind to, or null for any project of the tenant. */
  projects: string[] | null;
}

/** Creates a token for a tenant and returns it; only its hash is stored. */
export async function createToken(
  db: Queryable,
  grant: TokenGrant & { label?: string },
): Promise<string> {
  if (!(await tenantExists(db, grant.tenant))) {
    throw new MnemeError('not_found', `no tenant "${grant.tenant}"`, {
      hint: `create it first with \`mneme tenant create ${grant.tenant} --db URL\``,
    });
  }
  const projects =
    grant.projects && grant.projects.length > 0 ? [...new Set(grant.projects)] : null;
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  await db.query('INSERT INTO tokens(hash, tenant_id, projects, label) VALUES ($1, $2, $3, $4)', [
    hashToken(token),
    grant.tenant,
    projects,
    grant.label ?? null,
  ]);
  return token;
}

export const hashToken = (token: string): string => sha256(token);

/** The grant behind a bearer token, or null for an unknown, malformed or revoked one. */
export async function resolveToken(db: Queryable, token: string): Promise<TokenGrant | null> {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return null;
  const { rows } = await db.query<{ tenant_id: string; projects: string[] | null }>(
    'SELECT tenant_id, projects FROM tokens WHERE hash = $1 AND revoked_at IS NULL',
    [hashToken(token)],
  );
  const row = rows[0];
  return row ? { tenant: row.tenant_id, projects: row.projects } : null;
}

/** Runs fn with a migrated database (administration commands: tenants, tokens). */
export async function withDatabase<T>(url: string, fn: (db: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => {});
  try {
    try {
      await migrate(pool);
    } catch (e) {
      throw e instanceof MnemeError ? e : connectionError(e, url);
    }
    return await fn(pool);
  } finally {
    await pool.end().catch(() => {});
  }
}
