// Adversary, issue 14: the variants a review found after the first fixes — a value rejected in a
// project reached through the HTTP API's browse, a token that leaves out `project`, history over
// an agent surface; another project's refusals in `mneme log`; a tokenless local API call
// overturning a confirmed value; a link dropping a confirmed memory's provenance; sleep claiming
// a pass the store refused; encoded respellings. Each "must not" has its "does" beside it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeWorld, type World } from './hook-helpers.js';
import { httpFixture, jsonPost } from './http-fixture.js';
import { AGENT, HUMAN } from './helpers.js';

const A = 'alpha-0000000a';
const B = 'bravo-0000000b';
const VALUE = 'Billing database is Postgres 14 on host db7';
const tokens: Record<string, { tenant: null; projects: string[] }> = {
  'token-a-0123456789ab': { tenant: null, projects: [A] },
  'token-b-0123456789ab': { tenant: null, projects: [B] },
};
const auth = (t: string) => ({ headers: { Authorization: `Bearer ${t}` } });
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('the HTTP API withholds a value rejected in the token’s project', () => {
  let f: Awaited<ReturnType<typeof httpFixture>>;
  let g = '';
  before(async () => {
    f = await httpFixture({ resolveToken: (t) => tokens[t] ?? null });
    const [m] = await f.engine(A).apply([{ op: 'remember', type: 'fact', abstract: VALUE }], HUMAN);
    await f.engine(A).apply([{ op: 'retract', id: m!.id, reject: true }], HUMAN);
    const [w] = await f
      .engine(B)
      .apply([{ op: 'remember', type: 'fact', abstract: VALUE, global: true }], HUMAN);
    g = w!.id;
  });
  after(() => f.close());

  const get = async (url: string, token: string) => {
    const r = await f.app.request(`http://127.0.0.1${url}`, auth(token));
    return { status: r.status, text: await r.text() };
  };

  it('browse, recall, read and history: withheld for A (with or without project=), served for B', async () => {
    for (const url of ['/api/memories', `/api/memories?project=${A}`]) {
      const r = await get(url, 'token-a-0123456789ab');
      assert.equal(r.status, 200, r.text);
      assert.ok(!r.text.includes(g), `${url} lists it for A`);
    }
    const inB = await get('/api/memories', 'token-b-0123456789ab');
    assert.ok(inB.text.includes(g), 'B browses it');
    const recallA = await get('/api/recall?q=billing%20database', 'token-a-0123456789ab');
    assert.ok(!recallA.text.includes(g), recallA.text);
    const recallB = await get('/api/recall?q=billing%20database', 'token-b-0123456789ab');
    assert.ok(recallB.text.includes(g), recallB.text);
    assert.equal((await get(`/api/memories/${g}`, 'token-a-0123456789ab')).status, 404);
    assert.equal((await get(`/api/memories/${g}`, 'token-b-0123456789ab')).status, 200);
    const histA = await get(`/api/memories/${g}/history`, 'token-a-0123456789ab');
    assert.equal(histA.status, 404, histA.text);
    assert.ok(!histA.text.includes('host db7'));
    assert.equal((await get(`/api/memories/${g}/history`, 'token-b-0123456789ab')).status, 200);
  });

  it('a tokenless local API call cannot overturn a confirmed value; it can still write', async () => {
    const e = f.engine(A);
    const [m] = await e.apply(
      [{ op: 'remember', type: 'fact', abstract: 'Deploys on Tuesdays' }],
      HUMAN,
    );
    await e.apply([{ op: 'confirm', id: m!.id }], HUMAN);
    const r = await f.app.request(
      `http://127.0.0.1/api/memories/${m!.id}/correct`,
      jsonPost({ abstract: 'Deploys any day', project: A }),
    );
    assert.equal(r.status, 409, await r.text());
    const cur = (await f.store.getLineage(m!.id))!.at(-1)!;
    assert.equal(cur.abstract, 'Deploys on Tuesdays');
    assert.equal(cur.trust, 'confirmed');
    const w = await f.app.request(
      'http://127.0.0.1/api/memories',
      jsonPost({ type: 'fact', abstract: 'Deploys need a ticket', project: A }),
    );
    assert.equal(w.status, 201);
    const [entry] = await f.store.journal({ id: ((await w.json()) as Json).id });
    assert.deepEqual(entry!.actor, { kind: 'agent', surface: 'http-local' });
  });

  it('a link by an agent keeps a confirmed memory’s provenance', async () => {
    const e = f.engine(A);
    const [m] = await e.apply(
      [{ op: 'remember', type: 'fact', abstract: 'Keys rotate monthly' }],
      HUMAN,
    );
    const [o] = await e.apply(
      [{ op: 'remember', type: 'fact', abstract: 'Vault holds keys' }],
      HUMAN,
    );
    await e.apply([{ op: 'confirm', id: m!.id }], HUMAN);
    const [l] = await f
      .engine(A, 'agent')
      .apply([{ op: 'link', id: m!.id, rel: 'relates_to', target: o!.id }], AGENT);
    const cur = (await f.store.getLineage(m!.id))!.at(-1)!;
    assert.equal(cur.rev, l!.rev, 'the link was applied');
    assert.ok(cur.provenance.includes('user'), JSON.stringify(cur.provenance));
  });
});

describe('the CLI: log, sleep and encoded respellings', () => {
  let w: World;
  let a: string;
  let b: string;
  before(() => {
    w = makeWorld();
    a = w.project('alpha', 'git@github.com:acme/alpha.git');
    b = w.project('bravo', 'git@github.com:acme/bravo.git');
  });
  after(() => w.cleanup());

  it('`mneme log` shows a refusal only to readers of its scope', () => {
    const secret = 'Project B plans to migrate payments to Stripe Connect';
    const id = w.json<{ id: string }>(['remember', '--type', 'fact', '--abstract', secret], b).id;
    assert.equal(w.cli(['forget', id], { cwd: b }).code, 0);
    assert.equal(w.cli(['remember', '--type', 'fact', '--abstract', secret], { cwd: b }).code, 2);
    const refusals = (cwd: string) =>
      w.json<{ entries: { op: string; reason: string }[] }>(['log', '--op', 'refuse'], cwd).entries;
    assert.equal(refusals(b).length, 1, 'B sees its refusal');
    assert.deepEqual(refusals(a), [], 'A does not');
    assert.doesNotMatch(w.cli(['log'], { cwd: a }).stdout, /Stripe/);
  });

  it('encoded respellings of a rejected value are refused; another value is stored', () => {
    const id = w.json<{ id: string }>(['remember', '--type', 'fact', '--abstract', VALUE], a).id;
    assert.equal(w.cli(['forget', id], { cwd: a }).code, 0);
    for (const v of [
      `&#66;illing database is Postgres 14 on host db7`,
      VALUE.replace(/ /g, '&nbsp;'),
      VALUE.replace(/ /g, '%20'),
      VALUE.replace('Billing', '&#x42;illing'),
      VALUE.replace(/ /g, '%2520'),
    ]) {
      const r = w.cli(['remember', '--type', 'fact', '--abstract', v], { cwd: a });
      assert.equal(r.code, 2, `${v}: ${r.stdout}`);
    }
    const other = w.cli(
      [
        'remember',
        '--type',
        'fact',
        '--abstract',
        '&#66;illing database is Postgres 15 on host db7',
      ],
      { cwd: a },
    );
    assert.equal(other.code, 0, other.stderr);
  });

  it('sleep on a journal that does not verify fails instead of reporting a pass', () => {
    const c = w.project('charlie', 'git@github.com:acme/charlie.git');
    for (const x of ['alpha', 'beta', 'gamma'])
      w.json(['remember', '--type', 'fact', '--abstract', `Sleep probe ${x} runs`], c);
    for (let i = 0; i < 3; i++) w.json(['recall', 'sleep probe'], c);
    const copy = path.join(w.dir, 'copy');
    fs.cpSync(w.home, copy, { recursive: true });
    const intact = w.cli(['--json', 'sleep'], { cwd: c, env: { MNEME_HOME: copy } });
    assert.equal(intact.code, 0, intact.stderr);
    const file = path.join(w.home, 'journal', '00000001.jsonl');
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const i = lines.findIndex((l) => l.includes('"op":"remember"') && l.includes('"reason":null'));
    lines[i] = lines[i]!.replace('"reason":null', '"reason":"edited"');
    fs.writeFileSync(file, lines.join('\n'));
    assert.equal(w.cli(['journal', 'verify'], { cwd: c }).code, 2, 'the edit broke the chain');
    const broken = w.cli(['sleep'], { cwd: c });
    assert.equal(broken.code, 2, broken.stdout + broken.stderr);
    assert.doesNotMatch(broken.stdout, /changed the store/);
  });
});
