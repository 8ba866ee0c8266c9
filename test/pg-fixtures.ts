// Throwaway Postgres databases for the adapter's tests: one `mneme_test_<random>` database per
// fixture, dropped in cleanup. When no server answers, pgSkipReason says why and the tests skip.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { migrate } from '../src/store/postgres/schema.js';
import { createTenant } from '../src/store/postgres/tenants.js';

export const ADMIN_URL =
  process.env.MNEME_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Null when Postgres answers at ADMIN_URL, else the reason the Postgres tests skip. */
export async function pgSkipReason(): Promise<string | null> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (e) {
    return `Postgres is not reachable at ${ADMIN_URL} (${(e as Error).message}); set MNEME_TEST_PG_URL`;
  } finally {
    await client.end().catch(() => {});
  }
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface ThrowawayDb {
  url: string;
  name: string;
  drop: () => Promise<void>;
}

/** A fresh database with the schema applied and the given tenants created. */
export async function throwawayDb(tenants: string[] = []): Promise<ThrowawayDb> {
  const name = `mneme_test_${randomBytes(6).toString('hex')}`;
  // The name is ours (hex), never user input; identifiers cannot be parameters.
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  const url = u.toString();
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await migrate(pool);
    for (const t of tenants) await createTenant(pool, t);
  } finally {
    await pool.end();
  }
  return {
    url,
    name,
    drop: () => dropDb(name),
  };
}

/**
 * Drops a throwaway database, without FORCE while anything may still be closing: a pool whose
 * end() resolved can still have its sockets open for a few milliseconds, and a FORCE drop
 * terminates them — a FATAL the closing client emits as an error that a test's own pool does
 * not listen for, thrown out of the test process as an uncaught exception. FORCE only for what
 * is still connected after a second (a killed child's backend the server has not noticed).
 */
async function dropDb(name: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    try {
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name}`));
      return;
    } catch (e) {
      if ((e as { code?: string }).code !== '55006') throw e; // object_in_use: still connected
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/** A store for one tenant in a throwaway database (the conformance-suite factory shape). */
export async function throwawayStore(tenant = 'acme') {
  const db = await throwawayDb([tenant]);
  const store = await PostgresStore.open(db.url, { tenant });
  return {
    store,
    db,
    cleanup: async () => {
      await store.close();
      await db.drop();
    },
  };
}
