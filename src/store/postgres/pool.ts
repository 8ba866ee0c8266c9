// The one way mneme opens a Postgres pool. Its connections run with JIT compilation off:
// mneme's statements are short and planned at each run, and a plan whose estimate passes
// jit_above_cost (a long body's tombstone lookup, a frequent word's postings) paid 50-900 ms of
// compiling that never pays back (bench/NOTES.md, tombflat2). A URL that carries its own
// `options` parameter replaces this one (node-postgres lets the URL win).
import pg from 'pg';

export function openPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, options: '-c jit=off' });
  // An idle connection dropped by the server must not crash the process.
  pool.on('error', () => {});
  return pool;
}
