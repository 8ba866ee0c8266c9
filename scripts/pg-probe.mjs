// Counts the round trips a process makes through the real pg client (node --import this file).
// Every Client#query call is one round trip (a multi-statement string too); Client#connect is
// counted apart. On SIGUSR2 the counts since the last signal are written to $MNEME_PROBE_OUT
// (JSON: { queries, connects, statements: { "<first 120 chars>": n } }) and reset.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = process.env.MNEME_PROBE_ROOT || path.resolve(here, '..');
// The CommonJS pg the bundle requires: the same module instance, so the same prototype.
const pg = createRequire(path.join(root, 'package.json'))('pg');
let queries = 0;
let connects = 0;
let statements = new Map();
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, ...rest) {
  queries++;
  const text =
    typeof config === 'string' ? config : (config && (config.text || config.name)) || '?';
  const key = text.replace(/\s+/g, ' ').trim().slice(0, 120);
  statements.set(key, (statements.get(key) || 0) + 1);
  return query.call(this, config, ...rest);
};
const connect = pg.Client.prototype.connect;
pg.Client.prototype.connect = function (...a) {
  connects++;
  return connect.apply(this, a);
};
process.on('SIGUSR2', () => {
  const out = { queries, connects, statements: Object.fromEntries(statements) };
  queries = 0;
  connects = 0;
  statements = new Map();
  fs.writeFileSync(process.env.MNEME_PROBE_OUT, JSON.stringify(out, null, 1));
});
