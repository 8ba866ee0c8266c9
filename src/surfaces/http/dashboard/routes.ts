// The dashboard: the human surface. Pages need a session (from a one-time login URL printed by
// `mneme ui`); a bearer token never reaches them. A decision also needs the session's CSRF token
// and positive same-origin evidence, and the review passphrase when one is set; it is applied
// through engine.apply as {kind:'human', surface:'dashboard'}.
import { Hono, type Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { html } from 'hono/html';
import { MnemeError } from '../../../core/errors.js';
import { isMemoryId } from '../../../core/ids.js';
import { handle } from '../../../core/revision.js';
import type { Actor } from '../../../core/types.js';
import type { ProjectEntry } from '../../../engine/engine.js';
import type { AppOptions, HttpEnv } from '../context.js';
import { errorBody } from '../errors.js';
import { resolveProject } from '../project-param.js';
import { servedReport, servedReports } from '../reports.js';
import { csrfMatches, SESSION_COOKIE, type Session } from '../session.js';
import { SCRIPT, STYLE } from './assets.js';
import { browserPage } from './browser.js';
import { page } from './layout.js';
import { memoryPage, tracePage } from './memory.js';
import { journalPage, reportsPage, tombstonesPage } from './records.js';
import { reviewPage, type ReviewPlan } from './review.js';

const DASHBOARD: Actor = { kind: 'human', surface: 'dashboard' };

const messagePage = (title: string, text: string) =>
  page(
    title,
    '',
    html`<h1>${title}</h1>
      <p>${text}</p>`,
  );

export function dashboardRoutes(opts: AppOptions): Hono<HttpEnv> {
  const dash = new Hono<HttpEnv>();
  const sessions = new WeakMap<Context, Session>();
  const engine = (project: string | null, root: string | null = null) =>
    opts.engineFor({
      binding: { project, identity: project },
      surface: 'human',
      tenant: null,
      root,
    });
  // The local person's view across projects (the dashboard is a local-user feature).
  const everywhere = () => engine(null).everyProject();
  const sessionOf = (c: Context<HttpEnv>) => sessions.get(c)!;

  dash.onError((e, c) => {
    const { status, body } = errorBody(e);
    if (status === 500) opts.log?.(`mneme dashboard: ${(e as Error).stack ?? String(e)}`);
    return c.html(messagePage(`Error ${status}`, body.error.message), status);
  });

  dash.get('/assets/style.css', (c) =>
    c.body(STYLE, 200, { 'Content-Type': 'text/css; charset=utf-8' }),
  );
  dash.get('/assets/app.js', (c) =>
    c.body(SCRIPT, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }),
  );

  dash.get('/login', (c) => {
    if (c.get('caller').kind !== 'local')
      return c.html(
        messagePage('Refused', 'The dashboard is not reachable with an API token.'),
        403,
      );
    const s = opts.sessions?.redeem(c.req.query('t') ?? '');
    if (!s)
      return c.html(
        messagePage(
          'This login link is used up or expired',
          'Login links work once and only for a few minutes. Run `mneme ui` in your terminal for a new one.',
        ),
        403,
      );
    setCookie(c, SESSION_COOKIE, s.id, { httpOnly: true, sameSite: 'Strict', path: '/' });
    return c.redirect('/', 303);
  });

  // Everything below is the human surface: a session is required, an API token is refused.
  dash.use('*', async (c, next) => {
    if (c.get('caller').kind !== 'local')
      return c.html(
        messagePage('Refused', 'The dashboard is not reachable with an API token.'),
        403,
      );
    const s = opts.sessions?.get(getCookie(c, SESSION_COOKIE));
    if (!s)
      return c.html(
        messagePage(
          'Log in first',
          'The dashboard is for a person: run `mneme ui` in your terminal and open the one-time login URL it prints.',
        ),
        401,
      );
    sessions.set(c, s);
    await next();
  });

  /**
   * Every project by its readable name with its count (engine operations; the server's own
   * project is named from its binding, and listed even before it holds a memory).
   */
  const projectList = async (also: string | null = null): Promise<ProjectEntry[]> => {
    const home = opts.home?.project ? opts.home : null;
    const viewer = home
      ? opts.engineFor({ binding: home, surface: 'human', tenant: null, root: null })
      : engine(null);
    const list = await viewer.everyProject().projects();
    const add = (scope: string | null, name: string) => {
      if (scope && !list.some((p) => p.scope === scope))
        list.push({ scope, name, named: name !== scope, memories: 0 });
    };
    add(home?.project ?? null, home?.identity ?? '');
    add(also, also ?? '');
    return list;
  };
  const nameOf = (list: ProjectEntry[]) => (scope: string) =>
    scope === 'global' ? 'global' : (list.find((p) => p.scope === scope)?.name ?? scope);

  dash.get('/', async (c) => {
    const q = c.req.query();
    // No project asked for: the project the server was started in (`project=global` for the
    // global scope only).
    const choice =
      q.project === undefined && opts.home?.project
        ? { binding: opts.home, root: null }
        : resolveProject(q.project, { kind: 'local' });
    const e = engine(choice.binding.project, choice.root);
    const byScope = await everywhere().counts();
    const projects = await projectList(choice.binding.project);
    const byType = (await e.status()).byType;
    const filters = {
      type: q.type || undefined,
      trust: q.trust || undefined,
      status: q.status || undefined,
      freshness: q.freshness || undefined,
    };
    const explain = q.explain === '1';
    let recall = null;
    let rows = null;
    if (q.q?.trim()) {
      recall = await e.recall(q.q, { explain, limit: 50, actor: DASHBOARD });
      recall.results = recall.results.filter(
        (r) =>
          (!filters.type || r.type === filters.type) &&
          (!filters.trust || r.trust === filters.trust) &&
          (!filters.freshness || r.freshness === filters.freshness) &&
          (!filters.status || r.status === filters.status),
      );
    } else {
      rows = await e.browse({ ...filters, limit: 200 });
    }
    return c.html(
      browserPage({
        q: q.q ?? '',
        project: choice.binding.project ?? '',
        projects,
        globalCount: byScope.global ?? 0,
        types: [...new Set([...e.typeNames(), ...Object.keys(byType)])].sort(),
        filters,
        explain,
        recall,
        rows,
      }),
    );
  });

  /** The engine bound to a memory's own scope (the person may read every project). */
  const engineForMemory = async (id: string) => {
    if (!isMemoryId(id)) throw new MnemeError('not_found', `no memory ${id.slice(0, 80)}`);
    const scope = await everywhere().locate(id);
    if (scope === null) throw new MnemeError('not_found', `no memory ${id}`);
    const e = engine(scope === 'global' ? null : scope);
    return { e, lineage: await e.lineage(id) };
  };

  dash.get('/m/:id', async (c) => {
    const id = c.req.param('id');
    const { e, lineage } = await engineForMemory(id);
    const h = await e.history(id);
    const cur = lineage[lineage.length - 1]!;
    const n = h.revisions.length;
    const num = (v: string | undefined) => (v && /^\d+$/.test(v) ? Number(v) : null);
    return c.html(
      memoryPage(
        {
          id,
          scope: cur.scope,
          scopeName: nameOf(await projectList())(cur.scope),
          type: cur.type,
          handle: handle(id),
          quarantine: cur.quarantine,
          review: cur.review,
          tags: cur.tags,
          source: cur.source,
          artifact: cur.state === 'active' ? (cur.artifact ?? null) : null,
          revisions: h.revisions,
          a: num(c.req.query('a')) ?? (n > 1 ? h.revisions[n - 2]!.rev : null),
          b: num(c.req.query('b')) ?? (n > 1 ? h.revisions[n - 1]!.rev : null),
          now: e.now(),
        },
        c.req.query('project') ?? '',
      ),
    );
  });

  // The artifact as a download (never rendered inline: its media type is the writer's word).
  // The engine's read checks apply: a retracted or forgotten memory's artifact is refused.
  dash.get('/m/:id/artifact', async (c) => {
    const id = c.req.param('id');
    const { e } = await engineForMemory(id);
    const parts: Uint8Array[] = [];
    let range: string | undefined;
    let name = 'artifact';
    for (;;) {
      const p = await e.artifactPage(id, range);
      name = p.artifact.name;
      parts.push(p.bytes);
      if (p.next === null) break;
      range = p.next;
    }
    return c.body(Buffer.concat(parts), 200, {
      'Content-Type': 'application/octet-stream',
      'Content-Disposition': `attachment; filename="${name.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
      'X-Content-Type-Options': 'nosniff',
    });
  });

  dash.get('/m/:id/trace', async (c) => {
    const { e } = await engineForMemory(c.req.param('id'));
    return c.html(
      tracePage(
        await e.trace(c.req.param('id'), opts.archive ?? null),
        c.req.query('project') ?? '',
      ),
    );
  });

  dash.get('/review', async (c) => {
    const s = sessionOf(c);
    const all = await everywhere().proposals({});
    const notice = s.flash ?? null;
    delete s.flash;
    const pending = all.filter((p) => p.state === 'pending');
    const plans = new Map<string, ReviewPlan>();
    for (const p of pending)
      plans.set(p.id, await engine(p.scope === 'global' ? null : p.scope).reviewPlan(p.id));
    return c.html(
      reviewPage({
        pending,
        plans,
        decided: all
          .filter((p) => p.state !== 'pending')
          .sort((a, b) => ((a.decided_at ?? '') < (b.decided_at ?? '') ? 1 : -1))
          .slice(0, 30),
        csrf: s.csrf,
        passphrase: await engine(null).passphraseRequired(),
        notice,
        scopeName: nameOf(await projectList()),
      }),
    );
  });

  dash.post('/review/:id', async (c) => {
    const s = sessionOf(c);
    const form = await c.req.parseBody();
    const field = (k: string) => (typeof form[k] === 'string' ? (form[k] as string) : undefined);
    if (!csrfMatches(s, field('csrf') ?? c.req.header('x-csrf-token')))
      return c.html(messagePage('Refused', 'This decision carried no valid CSRF token.'), 403);
    const origin = c.req.header('origin');
    if (c.req.header('sec-fetch-site') !== 'same-origin' && origin !== new URL(c.req.url).origin)
      return c.html(
        messagePage('Refused', 'Decisions must come from the dashboard’s own pages.'),
        403,
      );
    const decision = field('decision');
    if (decision !== 'accept' && decision !== 'reject')
      throw new MnemeError('invalid', 'decision must be accept or reject');
    const reason = (field('reason') ?? '').trim().slice(0, 2000);
    const [p] = await everywhere().proposals({ id: c.req.param('id') });
    if (!p) throw new MnemeError('not_found', `no proposal ${c.req.param('id').slice(0, 80)}`);
    try {
      await engine(null).checkPassphrase(field('passphrase'));
      await engine(p.scope === 'global' ? null : p.scope).apply(
        [
          {
            op: 'decide',
            proposal: p.id,
            decision,
            // The hash of the effects this page showed: changed effects are refused, not applied.
            effects: (field(`effects_${decision}`) ?? '').slice(0, 64) || 'none shown',
            ...(reason ? { reason } : {}),
          },
        ],
        DASHBOARD,
      );
      s.flash = {
        ok: true,
        text: `${decision === 'accept' ? 'Accepted' : 'Rejected'} ${p.id}: ${p.summary}`,
      };
    } catch (e) {
      if (!(e instanceof MnemeError)) throw e;
      s.flash = { ok: false, text: `Not decided: ${e.message}` };
    }
    return c.redirect('/review', 303);
  });

  dash.get('/journal', async (c) => {
    const q = c.req.query();
    const f = { actor: q.actor || undefined, op: q.op || undefined, id: q.id || undefined };
    const entries = await everywhere().journal({
      actorKind: f.actor,
      op: f.op,
      id: f.id,
      reverse: true,
      limit: 300,
    });
    return c.html(journalPage(entries, await engine(null).verifyJournal(), f));
  });

  dash.get('/tombstones', async (c) => {
    const byScope = await everywhere().counts();
    const scopes = [...new Set(['global', ...Object.keys(byScope)])];
    return c.html(tombstonesPage(await everywhere().tombstones(scopes)));
  });

  // The local person's view, through the same outbound filter (withheld lines cut).
  dash.get('/reports', (c) =>
    c.html(reportsPage(servedReports(engine(null), opts.reportsDir ?? null), null)),
  );
  dash.get('/reports/:name{.+}', async (c) => {
    const name = c.req.param('name');
    const dir = opts.reportsDir ?? null;
    return c.html(
      reportsPage(servedReports(engine(null), dir), {
        name,
        text: await servedReport(engine(null), dir, name),
      }),
    );
  });
  return dash;
}
