// A hook never rebuilds the whole index inline (after an upgrade that changed the index schema a
// rebuild takes seconds to minutes): it injects nothing, logs `rebuilding`, starts one detached
// `mneme rebuild`, and the next session start injects as before. Real CLI processes.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type BetterSqlite3 from 'better-sqlite3';
import { contextOf, makeWorld, waitFor, type World } from './hook-helpers.js';

const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;

describe('a hook that meets an index of an older schema', () => {
  let w: World;
  let a: string;
  let id: string;
  before(() => {
    w = makeWorld();
    a = w.project('alpha', 'git@github.com:acme/alpha.git');
    id = w.json<{ id: string }>(
      ['remember', '--type', 'constraint', '--abstract', 'Amounts are integers in cents'],
      a,
    ).id;
  });
  after(() => w.cleanup());

  it('injects nothing, starts one background rebuild, and injects again once it is done', async () => {
    const payload = (s: string) =>
      w.payload('session-start.json', { SESSION: s, TRANSCRIPT: '', CWD: a });
    const env = { MNEME_SLEEP_AUTO: '0' };
    const first = w.hook('session-start', payload('r-0'), a, env);
    assert.ok(contextOf(first.stdout).includes(`[mem:${id}]`), 'a current index injects');

    const file = path.join(w.home, '.index', 'mneme.db');
    const db = new Database(file);
    db.exec(`DROP INDEX rev_inject; DROP INDEX rev_inject_type; ALTER TABLE rev DROP COLUMN w;
      UPDATE meta SET v = '1' WHERE k = 'schema'`);
    db.close();

    const deferred = w.hook('session-start', payload('r-1'), a, env);
    assert.equal(deferred.code, 0);
    assert.equal(deferred.stdout, '');
    const rec = w.hookLog().at(-1)!;
    assert.equal(rec.outcome, 'rebuilding');
    assert.match(
      String((rec.detail as { rebuild: string }).rebuild),
      /^(started pid|running, pid) \d+$/,
    );

    const again = await waitFor('an injecting session start', () => {
      const r = w.hook('session-start', payload('r-2'), a, env);
      return contextOf(r.stdout).includes(`[mem:${id}]`) ? r : null;
    });
    assert.equal(again.code, 0);
    assert.equal(w.hookLog().at(-1)!.outcome, 'injected');
  });
});
