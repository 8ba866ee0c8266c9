// Tenants and API tokens of a shared Postgres store. A token is 32 random bytes shown once and
// stored only as its sha256 (enough for a high-entropy secret: there is nothing to brute-force);
// it maps to one tenant and optionally a project allow-list, may expire, and is revoked by its
// public id. Every change is journaled in the operator journal (operator-journal.ts). The HTTP
// layer calls checkToken on every request.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { MnemeError } from '../../core/errors.js';
import { sha256 } from '../../core/hash.js';
import { connectionError, redactUrl } from './errors.js';
import type { VerifyReport } from '../port.js';
import { OPERATOR, verifyOperatorJournal, withOperatorEntry } from './operator-journal.js';
import { openPool } from './pool.js';
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
  // The reserved `_operator` tenant (the operator journal) is nobody's store.
  if (!TENANT_PATTERN.test(name)) return false;
  const { rows } = await db.query('SELECT 1 FROM tenants WHERE name = $1', [name]);
  return rows.length > 0;
}

/** Creates a tenant, journaled; false when it already existed (creating twice is not an error). */
export async function createTenant(db: pg.Pool, name: string): Promise<boolean> {
  checkTenantName(name);
  return withOperatorEntry(db, async (c) => {
    const r = await c.query('INSERT INTO tenants(name) VALUES ($1) ON CONFLICT DO NOTHING', [name]);
    const created = r.rowCount === 1;
    return {
      result: created,
      change: created ? { op: 'tenant_create', target: name, data: { tenant: name } } : null,
    };
  });
}

export interface TenantRow {
  tenant: string;
  created: string;
  disabled: string | null;
  /** Tokens neither revoked nor expired. */
  liveTokens: number;
}

export async function listTenants(db: Queryable): Promise<TenantRow[]> {
  const { rows } = await db.query<{
    name: string;
    created_at: Date;
    disabled_at: Date | null;
    live: string;
  }>(
    `SELECT n.name, n.created_at, n.disabled_at,
            (SELECT count(*) FROM tokens k WHERE k.tenant_id = n.name AND k.revoked_at IS NULL
               AND (k.expires_at IS NULL OR k.expires_at > now())) AS live
     FROM tenants n WHERE n.name <> $1 ORDER BY n.name`,
    [OPERATOR],
  );
  return rows.map((r) => ({
    tenant: r.name,
    created: r.created_at.toISOString(),
    disabled: r.disabled_at?.toISOString() ?? null,
    liveTokens: Number(r.live),
  }));
}

/**
 * Disables (or enables again) a tenant, journaled: a disabled tenant's tokens are refused on every
 * instance at their next request; its data stays. False when it was already in that state.
 */
export async function setTenantDisabled(
  db: pg.Pool,
  name: string,
  disabled: boolean,
): Promise<boolean> {
  return withOperatorEntry(db, async (c) => {
    if (!(await tenantExists(c, name))) throw noTenant(name);
    const r = await c.query(
      disabled
        ? 'UPDATE tenants SET disabled_at = now() WHERE name = $1 AND disabled_at IS NULL'
        : 'UPDATE tenants SET disabled_at = NULL WHERE name = $1 AND disabled_at IS NOT NULL',
      [name],
    );
    const changed = r.rowCount === 1;
    return {
      result: changed,
      change: changed
        ? {
            op: disabled ? 'tenant_disable' : 'tenant_enable',
            target: name,
            data: { tenant: name },
          }
        : null,
    };
  });
}

const noTenant = (name: string) =>
  new MnemeError('not_found', `no tenant "${name}"`, {
    hint: `create it first with \`mneme tenant create ${name} --db URL\` (see \`mneme tenant list\`)`,
  });

export interface TokenGrant {
  tenant: string;
  /** Project scopes this token may bind to, or null for any project of the tenant. */
  projects: string[] | null;
}

/** A grant as the token check read it, with the tenant's tombstone version in the same snapshot. */
export interface CheckedGrant extends TokenGrant {
  tombstones: string;
  /** Whether the tenant has any knowledge chunk (else a recall need not look for any). */
  knowledge: boolean;
}

export interface IssuedToken {
  /** The secret, shown once. */
  token: string;
  /** Its public id (what `token list` shows and `token revoke` takes). */
  id: string;
  expires: string | null;
}

/** Creates a token for a tenant, journaled (without the secret); only its hash is stored. */
export async function issueToken(
  db: pg.Pool,
  grant: TokenGrant & { label?: string; expires?: Date | null },
): Promise<IssuedToken> {
  const projects =
    grant.projects && grant.projects.length > 0 ? [...new Set(grant.projects)] : null;
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const id = `tok_${randomBytes(8).toString('hex')}`;
  const expires = grant.expires ? grant.expires.toISOString() : null;
  return withOperatorEntry(db, async (c) => {
    if (!(await tenantExists(c, grant.tenant))) throw noTenant(grant.tenant);
    await c.query(
      `INSERT INTO tokens(hash, id, tenant_id, projects, label, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [hashToken(token), id, grant.tenant, projects, grant.label ?? null, expires],
    );
    return {
      result: { token, id, expires },
      change: {
        op: 'token_create',
        target: id,
        data: { tenant: grant.tenant, projects, label: grant.label ?? null, expires },
      },
    };
  });
}

/** Creates a token for a tenant and returns it; only its hash is stored. */
export async function createToken(
  db: pg.Pool,
  grant: TokenGrant & { label?: string; expires?: Date | null },
): Promise<string> {
  return (await issueToken(db, grant)).token;
}

export interface TokenRow {
  id: string;
  tenant: string;
  projects: string[] | null;
  label: string | null;
  created: string;
  lastUsed: string | null;
  expires: string | null;
  revoked: string | null;
}

/** Every token (of one tenant), newest first — never the secret, which is not stored. */
export async function listTokens(db: Queryable, tenant?: string): Promise<TokenRow[]> {
  const { rows } = await db.query<{
    id: string;
    tenant_id: string;
    projects: string[] | null;
    label: string | null;
    created_at: Date;
    last_used_at: Date | null;
    expires_at: Date | null;
    revoked_at: Date | null;
  }>(
    `SELECT id, tenant_id, projects, label, created_at, last_used_at, expires_at, revoked_at
     FROM tokens WHERE $1::text IS NULL OR tenant_id = $1 ORDER BY created_at DESC, id`,
    [tenant ?? null],
  );
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  return rows.map((r) => ({
    id: r.id,
    tenant: r.tenant_id,
    projects: r.projects,
    label: r.label,
    created: r.created_at.toISOString(),
    lastUsed: iso(r.last_used_at),
    expires: iso(r.expires_at),
    revoked: iso(r.revoked_at),
  }));
}

/** Revokes a token by its id, journaled; false when it was already revoked. */
export async function revokeToken(db: pg.Pool, id: string): Promise<boolean> {
  return withOperatorEntry(db, async (c) => {
    const { rows } = await c.query<{ tenant_id: string; revoked: boolean }>(
      'SELECT tenant_id, revoked_at IS NOT NULL AS revoked FROM tokens WHERE id = $1 FOR UPDATE',
      [id],
    );
    const row = rows[0];
    if (!row)
      throw new MnemeError('not_found', `no token with id "${id.slice(0, 80)}"`, {
        hint: 'token ids look like tok_0123456789abcdef: see `mneme token list --db URL`',
      });
    if (row.revoked) return { result: false, change: null };
    await c.query('UPDATE tokens SET revoked_at = now() WHERE id = $1', [id]);
    return {
      result: true,
      change: { op: 'token_revoke', target: id, data: { tenant: row.tenant_id } },
    };
  });
}

export const hashToken = (token: string): string => sha256(token);

/** Why a known token is refused: said to its holder, with what to do. */
export interface TokenRefusal {
  refused: string;
  hint: string;
}

/** How long a token's last-used time may lag (one write per token per minute, not per request). */
const LAST_USED_GRAIN = '60 seconds';

/**
 * The grant behind a bearer token; a refusal for a revoked or expired token or a disabled tenant;
 * null for an unknown or malformed one. Read on every request, so a revocation holds on every
 * instance at the token's next request.
 */
export async function checkToken(
  db: Queryable,
  token: string,
): Promise<CheckedGrant | TokenRefusal | null> {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return null;
  const { rows } = await db.query<{
    id: string;
    tenant_id: string;
    projects: string[] | null;
    revoked_at: Date | null;
    expires_at: Date | null;
    disabled_at: Date | null;
    expired: boolean;
    tombstones: string;
    knowledge: boolean;
  }>({
    // Prepared once per connection: every request of a server runs it.
    name: 'mneme_check_token',
    text: `WITH used AS (
       UPDATE tokens SET last_used_at = now()
       WHERE hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
         AND (last_used_at IS NULL OR last_used_at < now() - interval '${LAST_USED_GRAIN}'))
     SELECT k.id, k.tenant_id, k.projects, k.revoked_at, k.expires_at, n.disabled_at,
            k.expires_at IS NOT NULL AND k.expires_at <= now() AS expired,
            (SELECT coalesce(max(e.seq), 0)::text FROM tombstone_events e
             WHERE e.tenant_id = k.tenant_id) AS tombstones,
            EXISTS (SELECT FROM knowledge_chunks c WHERE c.tenant_id = k.tenant_id) AS knowledge
     FROM tokens k JOIN tenants n ON n.name = k.tenant_id WHERE k.hash = $1`,
    values: [hashToken(token)],
  });
  const row = rows[0];
  if (!row) return null;
  const renew = `ask the operator for a new token (\`mneme token create --tenant ${row.tenant_id} --db URL\`) and put it in this client's configuration`;
  if (row.revoked_at)
    return {
      refused: `this token (${row.id}) was revoked at ${row.revoked_at.toISOString()}`,
      hint: renew,
    };
  if (row.expired)
    return {
      refused: `this token (${row.id}) expired at ${row.expires_at!.toISOString()}`,
      hint: renew,
    };
  if (row.disabled_at)
    return {
      refused: `tenant ${row.tenant_id} was disabled at ${row.disabled_at.toISOString()}`,
      hint: `its tokens are refused until an operator runs \`mneme tenant enable ${row.tenant_id} --db URL\``,
    };
  // The tenant's tombstone version (its last event, one index entry) and whether it has any
  // knowledge ride along: the request's recall then reads its tombstones only if they moved, and
  // knowledge only where there is some (PostgresStore.knowing).
  return {
    tenant: row.tenant_id,
    projects: row.projects,
    tombstones: row.tombstones,
    knowledge: row.knowledge,
  };
}

/** The grant behind a bearer token, or null for an unknown, malformed, revoked or expired one. */
export async function resolveToken(db: Queryable, token: string): Promise<TokenGrant | null> {
  const r = await checkToken(db, token);
  return r && 'tenant' in r ? { tenant: r.tenant, projects: r.projects } : null;
}

/** Runs fn with a migrated database (administration commands: tenants, tokens). */
export async function withGovernance<T>(
  url: string,
  fn: (g: Governance) => Promise<T>,
): Promise<T> {
  return withDatabase(url, (db) => fn(governanceOf(db, redactUrl(url))));
}

export async function withDatabase<T>(url: string, fn: (db: pg.Pool) => Promise<T>): Promise<T> {
  const pool = openPool(url, 2);
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

/** The governance commands over one database (`mneme tenant|token …`, `journal verify --operator`). */
export interface Governance {
  createTenant(name: string): Promise<boolean>;
  listTenants(): Promise<TenantRow[]>;
  setTenantDisabled(name: string, disabled: boolean): Promise<boolean>;
  issueToken(grant: TokenGrant & { label?: string; expires?: Date | null }): Promise<IssuedToken>;
  listTokens(tenant?: string): Promise<TokenRow[]>;
  revokeToken(id: string): Promise<boolean>;
  verifyOperatorJournal(): Promise<VerifyReport>;
}

export function governanceOf(db: pg.Pool, location: string): Governance {
  return {
    createTenant: (name) => createTenant(db, name),
    listTenants: () => listTenants(db),
    setTenantDisabled: (name, disabled) => setTenantDisabled(db, name, disabled),
    issueToken: (grant) => issueToken(db, grant),
    listTokens: (tenant) => listTokens(db, tenant),
    revokeToken: (id) => revokeToken(db, id),
    verifyOperatorJournal: () => verifyOperatorJournal(db, location),
  };
}
