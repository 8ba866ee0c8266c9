// The one way mneme opens a Postgres pool. Its connections run with JIT compilation off:
// mneme's statements are short and planned at each run, and a plan whose estimate passes
// jit_above_cost (a long body's tombstone lookup, a frequent word's postings) paid 50-900 ms of
// compiling that never pays back (bench/NOTES.md, tombflat2). A URL that carries its own
// `options` parameter replaces this one (node-postgres lets the URL win).
import pg from 'pg';

export function openPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, options: '-c jit=off' });
  // A connection dropped by the server (terminated, restarted, failed over) must not crash the
  // process. Idle, the pool reports it here. Checked out, node-postgres emits it on the client
  // itself, and a client without a listener throws it out of the event loop: a transaction
  // waiting between two statements would take `mneme serve` down. With this listener the
  // error stays on the client, whose next statement fails (a write then fails and is reported
  // as failed), and the pool discards the client when it is released.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}
