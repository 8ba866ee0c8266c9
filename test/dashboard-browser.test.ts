// The dashboard in real Chromium (playwright-core, Debian's /usr/bin/chromium) against a real
// listening server started inside a repository (acme/shop) whose project holds memories, beside
// another project (acme/billing) and the global scope: it opens on the shop project, names every
// project by its remote with its count, and never shows one project's memories in another's
// view (browse and search); search hides a superseded value and the trace says why; the lineage
// page shows both revisions and a diff; a proposal accepted in the browser changes the store and
// is journaled as human/dashboard; decisions without the CSRF token or from another origin are
// refused. With MNEME_SCREENSHOTS=1 the run writes docs/images/dashboard-*.png.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { SchemaRegistry } from '../src/core/schema.js';
import { Engine } from '../src/engine/engine.js';
import { bindProject } from '../src/surfaces/project.js';
import { gitRepo, SLEEP, ROOT } from './helpers.js';
import { liveServer } from './http-live.js';

const CHROMIUM = '/usr/bin/chromium';
const skip = fs.existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is missing (apt-get install chromium); browser tests skipped`;
if (skip) console.log(`# ${skip}`);

const SHOTS = process.env.MNEME_SCREENSHOTS === '1';
const shot = async (page: Page, name: string) => {
  if (!SHOTS) return;
  const dir = path.join(ROOT, 'docs', 'images');
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `dashboard-${name}.png`), fullPage: true });
};

describe('dashboard in Chromium', { skip }, () => {
  let s: Awaited<ReturnType<typeof liveServer>>;
  let browser: Browser;
  let page: Page;
  let engine: Engine;
  let otter: string;
  let badger: string;
  let accepted: string;
  let keep: string;
  let billingRepo: string;
  let billingOtter: string;
  let billingScope: string;
  let shopScope: string;
  let globalRule: string;

  /** A write through the API into a project (given as its repository path) or the global scope. */
  const post = (p: string, body: Record<string, unknown>, project: string | null) =>
    fetch(`${s.url}${p}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(project ? { ...body, project } : body),
    }).then(async (r) => {
      const j = (await r.json()) as { id: string };
      assert.equal(r.status < 300, true, JSON.stringify(j));
      return j;
    });
  const rowIds = () =>
    page.locator('tbody tr[data-id]').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-id')));
  const resultIds = () =>
    page.locator('.result[data-id]').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-id')));
  const propose = async (id: string, summary: string) => {
    const [r] = await engine.apply(
      [
        {
          op: 'propose',
          kind: 'retract',
          targets: [id],
          summary,
          accept: [{ op: 'retract', id, reason: summary }],
        },
      ],
      SLEEP,
    );
    return r!.proposal!;
  };

  before(async () => {
    s = await liveServer();
    const shop = bindProject(s.repo);
    shopScope = shop.project!;
    engine = new Engine({
      store: s.store,
      clock: () => new Date(),
      registry: new SchemaRegistry(),
      binding: shop,
      surface: 'human',
    });
    otter = (
      await post(
        '/api/memories',
        {
          type: 'fact',
          abstract: 'The otter cache TTL is 60 seconds',
          valid_from: '2026-01-01T00:00:00Z',
        },
        s.repo,
      )
    ).id;
    await post(
      `/api/memories/${otter}/supersede`,
      {
        abstract: 'The otter cache TTL is 300 seconds',
        body: 'Raised after the March load test.',
        reason: 'load test showed 60 s thrashed the cache',
      },
      s.repo,
    );
    badger = (
      await post(
        '/api/memories',
        { type: 'decision', abstract: 'Feature flag badger stays on for beta users' },
        s.repo,
      )
    ).id;
    await post(
      '/api/memories',
      { type: 'procedure', abstract: 'Deploy the otter service with make release' },
      s.repo,
    );
    globalRule = (
      await post(
        '/api/memories',
        { type: 'constraint', abstract: 'Commit messages say why the change was made' },
        null,
      )
    ).id;
    // Another project on this machine, with a memory that matches the shop's searches too.
    billingRepo = gitRepo('git@github.com:acme/billing.git');
    billingScope = bindProject(billingRepo).project!;
    billingOtter = (
      await post(
        '/api/memories',
        { type: 'fact', abstract: 'The otter invoice export runs nightly at 02:00' },
        billingRepo,
      )
    ).id;
    accepted = await propose(badger, 'Retract the badger flag decision: the flag was removed');
    keep = await propose(otter, 'Retract the otter cache TTL: nobody reads it');
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    await page.goto(`${s.url}/login?t=${s.sessions.issueTicket()}`);
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    if (billingRepo) fs.rmSync(billingRepo, { recursive: true, force: true });
  });

  it('logs in once with an HttpOnly, SameSite=Strict cookie; the link does not work twice', async () => {
    assert.equal(new URL(page.url()).pathname, '/');
    const [cookie] = await page.context().cookies();
    assert.equal(cookie?.name, 'mneme_session');
    assert.equal(cookie?.httpOnly, true);
    assert.equal(cookie?.sameSite, 'Strict');
    const other = await browser.newPage();
    const first = await other.goto(`${s.url}/`);
    assert.equal(first?.status(), 401, 'no session, no dashboard');
    await other.close();
  });

  it('opens on the project it was started in, and names every project by its remote with counts', async () => {
    await page.goto(`${s.url}/`);
    assert.equal(await page.locator('#viewing').getAttribute('data-scope'), shopScope);
    assert.match(await page.locator('#viewing').innerText(), /github\.com\/acme\/shop/);
    const options = await page.locator('select[name=project] option').allInnerTexts();
    const selected = await page.locator('select[name=project] option:checked').innerText();
    assert.match(selected, /github\.com\/acme\/shop · 3 memories/);
    assert.ok(
      options.some((o) => /github\.com\/acme\/billing · 1 memory$/.test(o.trim())),
      options.join(' | '),
    );
    assert.ok(
      options.some((o) => /global only · 1 memory$/.test(o.trim())),
      options.join(' | '),
    );
    assert.ok(!options.some((o) => o.includes(billingScope)), 'no project is shown as a bare id');
    // The shop's memories and the global one; never the billing project's.
    const rows = await rowIds();
    assert.ok(rows.includes(otter) && rows.includes(badger) && rows.includes(globalRule));
    assert.ok(!rows.includes(billingOtter), 'another project is not shown in this view');
    await shot(page, 'browse');
  });

  it("another project's view shows its memories, and not the shop's", async () => {
    await page.selectOption('select[name=project]', billingScope);
    await page.waitForURL(new RegExp(`project=${billingScope}`));
    assert.equal(await page.locator('#viewing').getAttribute('data-scope'), billingScope);
    const rows = await rowIds();
    assert.deepEqual(rows.sort(), [billingOtter, globalRule].sort());
    // Search there: its own otter memory, not the shop's.
    await page.fill('input[name=q]', 'otter');
    await page.press('input[name=q]', 'Enter');
    await page.waitForURL(/q=otter/);
    const found = await resultIds();
    assert.deepEqual(found, [billingOtter]);
    // Its memory opens with the project's readable name.
    await page.click(`.result a[href^="/m/${billingOtter}"]`);
    await page.waitForURL(new RegExp(`/m/${billingOtter}`));
    assert.equal(await page.locator('.scope').innerText(), 'github.com/acme/billing');
    // Global only: neither project.
    await page.goto(`${s.url}/?project=global`);
    assert.deepEqual(await rowIds(), [globalRule]);
    await page.goto(`${s.url}/`);
  });

  it('search finds the current value and hides the superseded one, and the trace says why', async () => {
    await page.fill('input[name=q]', 'otter cache TTL');
    await page.check('input[name=explain]');
    await page.waitForURL(/explain=1/);
    const results = await page.locator('.result .abstract').allTextContents();
    assert.ok(!(await resultIds()).includes(billingOtter), "the billing project's otter is not");
    assert.ok(
      results.some((t) => t.includes('300 seconds')),
      'the current value is served',
    );
    assert.ok(!results.some((t) => t.includes('60 seconds')), 'the superseded value is not');
    const trace = page.locator('#exclusion-trace .excluded', { hasText: '60 seconds' });
    assert.equal(await trace.count(), 1);
    assert.match(await trace.innerText(), /superseded/);
    await shot(page, 'search');
  });

  it('the memory page shows both revisions, the timelines and a diff', async () => {
    await page.click(`.result a[href^="/m/${otter}"]`);
    await page.waitForURL(new RegExp(`/m/${otter}`));
    assert.equal(await page.locator('#lineage tbody tr').count(), 2);
    assert.match(await page.locator('#rev-1').innerText(), /60 seconds/);
    assert.match(await page.locator('#rev-2').innerText(), /300 seconds/);
    const diff = page.locator('#diff pre.diff');
    assert.equal(await diff.locator('.del', { hasText: '60 seconds' }).count(), 1);
    assert.equal(await diff.locator('.add', { hasText: '300 seconds' }).count(), 1);
    assert.equal(await page.locator('.timeline svg rect').count(), 4);
    await shot(page, 'memory');
  });

  it('a proposal accepted in the browser changes the store and is journaled as human/dashboard', async () => {
    await page.goto(`${s.url}/review`);
    const card = page.locator(`article.proposal[data-id="${accepted}"]`);
    assert.equal(await card.count(), 1);
    assert.equal(await page.locator(`article.proposal[data-id="${keep}"]`).count(), 1);
    assert.match(await card.locator('.scope').innerText(), /^github\.com\/acme\/shop$/);
    await card.locator('textarea[name=reason]').fill('the flag was deleted in March');
    await shot(page, 'review');
    await card.locator('button[value=accept]').click();
    await page.waitForSelector('#notice');
    assert.match(await page.locator('#notice').innerText(), /Accepted/);
    const lineage = (await s.store.getLineage(badger))!;
    assert.equal(lineage[lineage.length - 1]!.state, 'retracted');
    const [p] = await s.store.proposals({ id: accepted });
    assert.equal(p!.state, 'accepted');
    assert.deepEqual(p!.decided_by, { kind: 'human', surface: 'dashboard' });
    const [kept] = await s.store.proposals({ id: keep });
    assert.equal(kept!.state, 'pending', 'the other proposal is untouched');
    await page.goto(`${s.url}/journal?op=decide`);
    const row = page.locator('#journal tbody tr[data-op="decide"]');
    assert.equal(await row.count(), 1);
    assert.equal(await row.getAttribute('data-actor'), 'human/dashboard');
    assert.match(await page.locator('#chain').innerText(), /chain verified/);
    await page.goto(`${s.url}/journal`);
    await shot(page, 'journal');
  });

  it('a decision without the CSRF token, or from another origin, is refused', async () => {
    await page.goto(`${s.url}/review`);
    const csrf = (await page.locator('meta[name=csrf-token]').getAttribute('content'))!;
    const noToken = await page.evaluate(
      (id) =>
        fetch(`/review/${id}`, {
          method: 'POST',
          body: new URLSearchParams({ decision: 'accept' }),
        }).then((r) => r.status),
      keep,
    );
    assert.equal(noToken, 403);
    // Another origin (same site, other port, so the Strict cookie is even sent) with a valid token.
    const evil = http.createServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end(
        `<form id=f method=post action="${s.url}/review/${keep}"><input name=csrf value="${csrf}"><input name=decision value=accept></form><script>document.getElementById('f').submit()</script>`,
      );
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    try {
      const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
      const answer = page.waitForResponse((r) => r.url().endsWith(`/review/${keep}`));
      await page.goto(evilUrl);
      assert.equal((await answer).status(), 403);
    } finally {
      evil.close();
    }
    const [kept] = await s.store.proposals({ id: keep });
    assert.equal(kept!.state, 'pending', 'neither request decided anything');
    // The same decision from the dashboard itself, with the token, goes through.
    await page.goto(`${s.url}/review`);
    const card = page.locator(`article[data-id="${keep}"]`);
    assert.match(
      await card.locator('.effects[data-decision=accept]').innerText(),
      /withdraws mem_\w+ "/,
      'the page lists what accepting would change before the decision',
    );
    const shown = (await card.locator('input[name=effects_reject]').getAttribute('value'))!;
    const ok = await page.evaluate(
      ([id, token, effects]) =>
        fetch(`/review/${id}`, {
          method: 'POST',
          body: new URLSearchParams({ decision: 'reject', csrf: token!, effects_reject: effects! }),
          redirect: 'manual',
        }).then((r) => r.type === 'opaqueredirect' || r.status === 303),
      [keep, csrf, shown] as const,
    );
    assert.equal(ok, true);
    const [decided] = await s.store.proposals({ id: keep });
    assert.equal(decided!.state, 'rejected');
  });
});
