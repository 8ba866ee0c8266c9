// One shared Postgres database for a multi-tenant server: one pool, migrated once, a store per
// tenant created on first use and kept (its in-process write queue must be shared by every
// request of that tenant), and bearer-token resolution. The HTTP layer wires requests through it.
import pg from 'pg';
import { MnemeError } from '../../core/errors.js';
import { connectionError, redactUrl } from './errors.js';
import { PostgresStore } from './postgres-store.js';
import { openPool } from './pool.js';
import { migrate } from './schema.js';
import { checkToken, tenantExists, type TokenGrant, type TokenRefusal } from './tenants.js';

/** A valid token's grant, and how to run its request knowing what its check read. */
export interface ServedGrant extends TokenGrant {
  /**
   * Runs the rest of the request knowing the tenant's state as the token check read it (its
   * tombstone version, PostgresStore.knowing): a recall then reads tombstones only if they moved.
   */
  within<T>(fn: () => Promise<T>): Promise<T>;
}

export interface Database {
  readonly pool: pg.Pool;
  /**
   * The grant behind a bearer token, why it is refused (revoked, expired, tenant disabled), or
   * null for an unknown one (the caller answers 401 and reads nothing but the refusal).
   */
  resolveToken(token: string): Promise<ServedGrant | TokenRefusal | null>;
  /** The store of one tenant (cached); not_found when the tenant does not exist. */
  storeFor(tenant: string): Promise<PostgresStore>;
  close(): Promise<void>;
}

export async function openDatabase(
  url: string,
  opts: { poolSize?: number; lockTimeoutMs?: number; log?: (line: string) => void } = {},
): Promise<Database> {
  const pool = openPool(url, opts.poolSize ?? 20);
  try {
    await migrate(pool);
  } catch (e) {
    await pool.end().catch(() => {});
    throw e instanceof MnemeError ? e : connectionError(e, url);
  }
  const stores = new Map<string, Promise<PostgresStore>>();
  const location = redactUrl(url);
  const storeFor = (tenant: string): Promise<PostgresStore> => {
    let s = stores.get(tenant);
    if (!s) {
      s = (async () => {
        if (!(await tenantExists(pool, tenant)))
          throw new MnemeError('not_found', `no tenant "${tenant}"`);
        return PostgresStore.forTenant(pool, {
          tenant,
          location,
          // A server's recalls answer before their usage rows are written (usage-batch.ts).
          usageBatch: { ...(opts.log ? { log: opts.log } : {}) },
          ...(opts.lockTimeoutMs !== undefined ? { lockTimeoutMs: opts.lockTimeoutMs } : {}),
        });
      })();
      s.catch(() => stores.delete(tenant));
      stores.set(tenant, s);
    }
    return s;
  };
  return {
    pool,
    async resolveToken(token) {
      const r = await checkToken(pool, token);
      if (!r || 'refused' in r) return r;
      const store = await storeFor(r.tenant);
      const state = { tombstones: r.tombstones, knowledge: r.knowledge };
      return {
        tenant: r.tenant,
        projects: r.projects,
        within: (fn) => store.knowing(state, fn),
      };
    },
    storeFor,
    async close() {
      for (const s of stores.values()) await (await s.catch(() => null))?.close();
      await pool.end();
    },
  };
}
