// The one way mneme opens a Postgres pool. Every connection turns JIT compilation off: mneme's
// statements are short, planned at each run, and a plan whose estimate passes jit_above_cost
// (a long body's tombstone lookup, a frequent word's postings) paid 50-900 ms of compiling that
// never pays back (bench/NOTES.md, tombflat2). Set on connect, so a URL's own `options` stay.
import pg from 'pg';

export function openPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  // An idle connection dropped by the server must not crash the process.
  pool.on('error', () => {});
  // A client runs its queries in order: this one runs before anything the pool hands it out for.
  pool.on('connect', (client) => {
    client.query('SET jit = off').catch(() => {});
  });
  return pool;
}
