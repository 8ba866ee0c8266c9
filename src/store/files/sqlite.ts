// Opening a SQLite database the way a short-lived process can afford. better-sqlite3 is a
// CommonJS package: `require` loads it without the ESM translator's parse of its source, and
// naming the compiled addon (when it sits where the package builds it) skips the `bindings`
// helper's search of a dozen candidate paths. Together that is a noticeable share of a hook's
// or `mneme recall`'s start. Where the addon is elsewhere, better-sqlite3 finds it as usual.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);
let Database: typeof BetterSqlite3 | undefined;
let addon: string | null | undefined;

function addonPath(): string | null {
  try {
    const pkg = path.dirname(require.resolve('better-sqlite3/package.json'));
    const file = path.join(pkg, 'build', 'Release', 'better_sqlite3.node');
    return fs.existsSync(file) ? file : null;
  } catch {
    return null;
  }
}

/** How long a connection waits for SQLite's lock unless told otherwise (the store passes its own). */
export const INDEX_BUSY_TIMEOUT_MS = 10_000;

/** Opens `file`; `opts.timeout` (the busy timeout) defaults to INDEX_BUSY_TIMEOUT_MS. */
export function openDatabase(
  file: string,
  opts: BetterSqlite3.Options = {},
): BetterSqlite3.Database {
  Database ??= require('better-sqlite3') as typeof BetterSqlite3;
  if (addon === undefined) addon = addonPath();
  const o = { timeout: INDEX_BUSY_TIMEOUT_MS, ...opts };
  return new Database(
    file,
    addon && o.nativeBinding === undefined ? { ...o, nativeBinding: addon } : o,
  );
}
