// The hooks and the distiller on a Postgres store (--db / MNEME_DATABASE_URL), as on files
// (hooks-e2e.test.ts): a Stop archives the transcript increment into the tenant's session rows
// (not into any local directory), citations and ignored injections become usage events, and
// the detached distiller reads the archive past its watermark and applies through the write
// path, with provenance `mneme trace` resolves from the same rows. Another tenant sees none of it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { makeWorld, waitFor, type World } from './hook-helpers.js';
import { pgSkipReason, throwawayDb, type ThrowawayDb } from './pg-fixtures.js';

const skip = await pgSkipReason();
if (skip) console.log(`# skipping the Postgres hook tests: ${skip}`);

describe('hooks end to end on Postgres (--db)', { skip: skip ?? false }, () => {
  let w: World;
  let db: ThrowawayDb;
  let pool: pg.Pool;
  let a: string;
  let cents: string;
  let deploy: string;
  const state = () => path.join(w.dir, 'xdg-state');

  before(async () => {
    db = await throwawayDb(['acme', 'other']);
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    w = makeWorld();
    // The store is the database; what stays local (hook log, locks) goes under XDG_STATE_HOME.
    delete w.env.MNEME_HOME;
    Object.assign(w.env, {
      MNEME_DATABASE_URL: db.url,
      MNEME_TENANT: 'acme',
      XDG_STATE_HOME: state(),
    });
    a = w.project('alpha', 'git@github.com:acme/alpha.git');
    const remember = (abstract: string, subject: string) =>
      w.json<{ id: string }>(
        ['remember', '--type', 'fact', '--abstract', abstract, '--field', `subject=${subject}`],
        a,
      ).id;
    cents = remember('Billing amounts are integers in cents', 'billing amounts');
    deploy = remember('Alpha deploys go out on Tuesdays', 'deploy day');
  });
  after(async () => {
    w?.cleanup();
    await pool?.end();
    await db?.drop();
  });

  const hookLog = () => {
    const base = path.join(state(), 'mneme');
    if (!fs.existsSync(base)) return [];
    return fs.readdirSync(base).flatMap((d) => {
      const f = path.join(base, d, '.state', 'hooks.log');
      return fs.existsSync(f)
        ? fs
            .readFileSync(f, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Record<string, unknown>)
        : [];
    });
  };

  it('stop archives into the tenant rows, counts citations, and the distiller learns from them', async () => {
    const session = 'sess-pg1';
    const transcript = path.join(w.dir, 'transcript-pg1.jsonl');
    const raw = w.payload('transcript.jsonl', { SESSION: session, CWD: a, CITED: cents });
    fs.writeFileSync(transcript, raw);
    const start = w.hook(
      'session-start',
      w.payload('session-start.json', { SESSION: session, TRANSCRIPT: transcript, CWD: a }),
      a,
    );
    assert.equal(start.code, 0);
    assert.match(start.stdout, /Alpha deploys go out on Tuesdays/, 'injected from Postgres');
    fs.writeFileSync(
      path.join(w.fake, '1.txt'),
      '{"op":"new","type":"fact","abstract":"Staging database is db-staging.internal on port 6432 via pgbouncer","fields":{"subject":"staging database"},"evidence":[[3,4]]}\n',
    );
    const stop = w.hook(
      'stop',
      w.payload('stop.json', { SESSION: session, TRANSCRIPT: transcript, CWD: a }),
      a,
    );
    assert.equal(stop.code, 0);
    const stopped = hookLog().find((x) => x.event === 'stop' && x.session === session);
    assert.equal(stopped?.outcome, 'archived', JSON.stringify(stopped));

    // The raw lines are in the tenant's rows, verbatim and numbered from 1.
    const lines = raw.split('\n').filter((l) => l.trim() !== '');
    const { rows } = await pool.query<{ seq: number; text: string; tenant_id: string }>(
      `SELECT tenant_id, seq, text FROM session_archive WHERE session = $1 ORDER BY seq`,
      [session],
    );
    assert.deepEqual(
      rows.map((r) => r.text),
      lines,
    );
    assert.deepEqual(new Set(rows.map((r) => r.tenant_id)), new Set(['acme']));
    assert.equal(rows[0]!.seq, 1);
    const wm = await pool.query<{ doc: string }>(
      `SELECT doc FROM session_state WHERE tenant_id = 'acme' AND kind = 'watermarks' AND session = $1`,
      [session],
    );
    assert.equal(JSON.parse(wm.rows[0]!.doc).lines, lines.length);
    // No archive was written to a local directory.
    assert.ok(
      !fs.readdirSync(state(), { recursive: true }).some((f) => String(f).includes('archive')),
    );

    // A second stop with nothing new archives nothing again (the watermark held).
    w.hook('stop', w.payload('stop.json', { SESSION: session, TRANSCRIPT: transcript, CWD: a }), a);
    const again = await pool.query('SELECT count(*)::int AS n FROM session_archive');
    assert.equal(again.rows[0].n, lines.length);

    // Citations and ignored injections became usage events of this tenant.
    const usage = (
      await pool.query<{ doc: string }>(
        "SELECT doc FROM usage_events WHERE tenant_id = 'acme' ORDER BY seq",
      )
    ).rows.map((r) => JSON.parse(r.doc) as { kind: string; ids: string[] });
    assert.ok(usage.some((e) => e.kind === 'cite' && e.ids.includes(cents)));
    assert.ok(usage.some((e) => e.kind === 'ignored' && e.ids.includes(deploy)));
    assert.ok(!usage.some((e) => e.kind === 'cite' && e.ids.includes(deploy)));

    // The detached distiller read the archive from the same rows and applied what it found.
    const done = await waitFor('the distiller', () =>
      hookLog().find(
        (x) => x.event === 'distill' && x.session === session && x.outcome === 'distilled',
      ),
    );
    assert.equal((done.detail as { applied: number }).applied, 1, JSON.stringify(done));
    const hits = w.json<{ results: { id: string; abstract: string }[] }>(
      ['recall', 'staging database pgbouncer'],
      a,
    );
    const staging = hits.results.find((x) => x.abstract.startsWith('Staging database'));
    assert.ok(staging, 'the distilled fact is recallable');
    const t = w.json<{
      revisions: {
        provenance: { pointer: string; session?: { messages: { line: number }[] } }[];
      }[];
    }>(['trace', staging.id], a);
    const p = t.revisions[0]!.provenance[0]!;
    assert.equal(p.pointer, `session:claude-code/${session}#5-6`);
    assert.deepEqual(
      p.session!.messages.map((m) => m.line),
      [5, 6],
    );
    const distilled = await pool.query<{ doc: string }>(
      `SELECT doc FROM session_state WHERE tenant_id = 'acme' AND kind = 'distilled' AND session = $1`,
      [session],
    );
    assert.equal(JSON.parse(distilled.rows[0]!.doc).line, lines.length);

    // Another tenant of the same database has no sessions and nothing to distil.
    const other = w.cli(['--json', 'distill', '--pending', '--dry-run'], {
      cwd: a,
      env: { MNEME_TENANT: 'other' },
    });
    assert.equal(other.code, 0, other.stderr);
    assert.deepEqual(JSON.parse(other.stdout).reports, []);
  });
});
