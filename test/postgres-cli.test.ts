// The team CLI against a real Postgres: `tenant create`, `token create` (printed once, stored
// hashed, resolvable by the HTTP layer), the normal commands with --db/--tenant, and moving a
// store files → Postgres → files with `export`/`import`, history intact at every hop.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { hashToken, resolveToken } from '../src/store/postgres/tenants.js';
import { cli, gitRepo, tmpDir } from './helpers.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const skip = await pgSkipReason();
if (skip) console.log(`# skipping the Postgres CLI tests: ${skip}`);

describe('CLI with --db (Postgres)', { skip: skip ?? false }, () => {
  let db: ThrowawayDb;
  let pool: pg.Pool;
  const home = tmpDir('mneme-home-');
  const repo = gitRepo('git@github.com:acme/shop.git');
  const run = (args: string[], o: { home?: string; env?: Record<string, string> } = {}) =>
    cli(['--json', ...args], { home: o.home ?? home, cwd: repo, env: o.env });

  before(async () => {
    db = await throwawayDb();
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
  });
  after(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('tenant create, token create --json, and the token resolves to its grant', async () => {
    const t = run(['tenant', 'create', 'acme', '--db', db.url]);
    assert.equal(t.code, 0, t.stderr);
    assert.deepEqual(t.json(), { tenant: 'acme', created: true });
    assert.equal(run(['tenant', 'create', 'acme', '--db', db.url]).json().created, false);
    assert.equal(run(['tenant', 'create', 'Not Valid', '--db', db.url]).code, 1);

    const scoped = run(
      [
        'token',
        'create',
        '--tenant',
        'acme',
        '--project',
        'shop-1a2b3c4d',
        '--project',
        'web-00000000',
      ],
      { env: { MNEME_DATABASE_URL: db.url } },
    );
    assert.equal(scoped.code, 0, scoped.stderr);
    const { token } = scoped.json();
    // The secret, its public id (for `token list` / `token revoke`) and its expiry.
    assert.deepEqual(Object.keys(scoped.json()), ['token', 'id', 'expires']);
    assert.match(scoped.json().id, /^tok_[0-9a-f]{16}$/);
    assert.deepEqual(await resolveToken(pool, token), {
      tenant: 'acme',
      projects: ['shop-1a2b3c4d', 'web-00000000'],
    });
    const any = run(['token', 'create', '--tenant', 'acme', '--db', db.url]).json().token;
    assert.deepEqual(await resolveToken(pool, any), { tenant: 'acme', projects: null });

    // Stored hashed only; an unknown, altered or foreign-looking token resolves to nothing.
    const stored = await pool.query('SELECT hash FROM tokens');
    assert.equal(stored.rows.length, 2);
    assert.ok(stored.rows.every((r) => r.hash !== token && r.hash !== any));
    assert.ok(stored.rows.some((r) => r.hash === hashToken(token)));
    assert.equal(await resolveToken(pool, `${token.slice(0, -1)}x`), null);
    assert.equal(await resolveToken(pool, hashToken(token)), null);
    assert.equal(await resolveToken(pool, ''), null);

    const none = run(['token', 'create', '--tenant', 'nope', '--db', db.url]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no tenant "nope"/);
  });

  it('remember and recall with --db/--tenant; a missing tenant is explained', () => {
    const r = run([
      '--db',
      db.url,
      '--tenant',
      'acme',
      'remember',
      '--type',
      'fact',
      '--abstract',
      'Orders ship from Lyon',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const rec = run(['recall', 'orders', 'lyon'], {
      env: { MNEME_DATABASE_URL: db.url, MNEME_TENANT: 'acme' },
    }).json();
    assert.deepEqual(
      rec.results.map((x: { id: string }) => x.id),
      [r.json().id],
    );
    // The embedded store in the same home does not see it.
    assert.deepEqual(run(['recall', 'orders', 'lyon']).json().results, []);
    const noTenant = run(['--db', db.url, 'status']);
    assert.equal(noTenant.code, 1);
    assert.match(noTenant.stderr, /needs a tenant/);
  });

  it('files → postgres → files keeps every revision of every memory', () => {
    const src = tmpDir('mneme-src-');
    const back = tmpDir('mneme-back-');
    const F = (args: string[], h = src) => {
      const r = run(args, { home: h });
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      return r.json();
    };
    const P = (args: string[]) => {
      const r = run(['--db', db.url, '--tenant', 'moving', ...args]);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      return r.json();
    };
    const a = F([
      'remember',
      '--type',
      'decision',
      '--abstract',
      'Orders live in MySQL',
      '--field',
      'subject=orders store',
    ]).id;
    F(['supersede', a, '--abstract', 'Orders live in Postgres', '--valid-from', '2030-01-01']);
    const b = F([
      'remember',
      '--type',
      'fact',
      '--abstract',
      'The API rate limit is 50 rps',
      '--field',
      'subject=rate limit',
    ]).id;
    F(['correct', b, '--abstract', 'The API rate limit is 500 rps']);
    const c = F(['remember', '--type', 'fact', '--abstract', 'Nightly builds run at 2am']).id;
    F(['retract', c, '--reason', 'builds are on demand now']);
    const d = F([
      'remember',
      '--type',
      'preference',
      '--abstract',
      'Prefer small pull requests',
      '--global',
    ]).id;

    // A conflict an agent opened: the review queue must survive the move.
    const agentWrite = run(
      [
        'remember',
        '--type',
        'fact',
        '--abstract',
        'The API rate limit is 5000 rps',
        '--field',
        'subject=rate limit',
      ],
      { home: src, env: { MNEME_AGENT: '1' } },
    );
    assert.equal(agentWrite.code, 2);

    const b1 = path.join(src, 'b1.json');
    F(['export', '--out', b1]);
    assert.equal(run(['tenant', 'create', 'moving', '--db', db.url]).code, 0);
    const imp = P(['import', b1, '--global']);
    assert.equal(imp.refused.length, 0);
    assert.equal(imp.imported, 7);
    const b2 = path.join(src, 'b2.json');
    P(['export', '--out', b2]);
    assert.equal(F(['import', b2, '--global'], back).imported, 7);

    const strip = (h: { revisions: Record<string, unknown>[] }) =>
      h.revisions.map(({ trust: _t, provenance: _p, actor: _a, ...rest }) => rest);
    for (const id of [a, b, c, d]) {
      const original = strip(F(['history', id]));
      assert.ok(original.length >= 1);
      assert.deepEqual(strip(P(['history', id])), original, `${id} in postgres`);
      assert.deepEqual(strip(F(['history', id], back)), original, `${id} back in files`);
    }
    // Each hop recorded the import in the receiving store's own chain.
    assert.equal(P(['log', '--op', 'import', '--limit', '100']).entries.length, 7);
    assert.equal(P(['journal', 'verify']).ok, true);
    assert.equal(F(['log', '--op', 'import', '--limit', '100'], back).entries.length, 7);
    // Tombstones (the corrected value) and the pending proposal travelled both ways.
    const rejected = (t: { tombstones: { value_norm: string }[] }) =>
      t.tombstones.map((x) => x.value_norm);
    assert.deepEqual(rejected(P(['tombstone', 'list'])), rejected(F(['tombstone', 'list'])));
    assert.deepEqual(rejected(F(['tombstone', 'list'], back)), ['the api rate limit is 50 rps']);
    const kinds = (p: { proposals: { kind: string; targets: string[] }[] }) =>
      p.proposals.map((x) => [x.kind, x.targets]);
    assert.deepEqual(kinds(P(['proposals'])), [['conflict', [b]]]);
    assert.deepEqual(kinds(F(['proposals'], back)), [['conflict', [b]]]);
    const restated = run([
      '--db',
      db.url,
      '--tenant',
      'moving',
      'remember',
      '--type',
      'fact',
      '--abstract',
      'The API rate limit is 50 rps',
    ]);
    assert.equal(restated.code, 2, 'the rejected value is refused in Postgres too');
    // Importing again changes nothing.
    const again = P(['import', b1, '--global']);
    assert.equal(again.unchanged, 7);
    assert.equal(again.proposals, 0);
    assert.equal(P(['proposals']).proposals.length, 1);
    fs.rmSync(src, { recursive: true, force: true });
    fs.rmSync(back, { recursive: true, force: true });
  });
});
