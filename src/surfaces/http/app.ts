// The HTTP surface as one hono app: guards (security headers, body size, Host, caller,
// same-origin), then the JSON API at /api, MCP at /mcp and the dashboard at /. Testable
// in-process with `app.request(...)`; server.ts puts it on a socket.
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { secureHeaders } from 'hono/secure-headers';
import { apiRoutes } from './api.js';
import type { AppOptions, HttpEnv } from './context.js';
import { dashboardRoutes } from './dashboard/routes.js';
import { MnemeError } from '../../core/errors.js';
import { readsStoreWide } from '../../engine/engine.js';
import { readerOf } from './auth.js';
import { errorBody } from './errors.js';
import { callerGuard, hostGuard, sameOriginGuard } from './guards.js';
import { mcpRoutes } from './mcp.js';

export type { AppOptions, EngineRequest } from './context.js';

export function createApp(opts: AppOptions): Hono<HttpEnv> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const app = new Hono<HttpEnv>();
  const maxBytes = opts.maxBodyBytes ?? 1024 * 1024;

  app.onError((e, c) => {
    const { status, body } = errorBody(e);
    if (e instanceof MnemeError && status < 500) opts.metrics?.refusal(e);
    if (status === 500 && body.error.message.startsWith('internal error'))
      log(
        `mneme http: ${c.req.method} ${new URL(c.req.url).pathname}: ${(e as Error).stack ?? String(e)}`,
      );
    return c.json(body, status);
  });
  app.notFound((c) =>
    c.json(
      { error: { code: 'not_found', message: `no route ${new URL(c.req.url).pathname}` } },
      404,
    ),
  );

  if (opts.metrics) app.use('*', opts.metrics.middleware());
  app.use(
    '*',
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
      // same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on form posts.
      referrerPolicy: 'same-origin',
    }),
  );
  const limitBody = bodyLimit({
    maxSize: maxBytes,
    onError: (c) =>
      c.json(
        {
          error: {
            code: 'invalid',
            message: `the request body is larger than ${maxBytes} bytes`,
            hint: 'send less: memory bodies are meant to be short',
          },
        },
        413,
      ),
  });
  // A GET or HEAD request has no body (the adapter gives it none); asking for one would build
  // the whole fetch Request (and its AbortController) on every read, for nothing.
  app.use('*', (c, next) =>
    c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limitBody(c, next),
  );
  app.use('*', hostGuard(opts));
  // A load balancer's or orchestrator's probe on a server that needs tokens: no token, and no
  // data in the answer (with a token, or on a loopback server, /api/health is the normal route).
  app.get('/api/health', async (c, next) => {
    if (!opts.requireToken || c.req.header('authorization') !== undefined) return next();
    try {
      await opts.probe?.();
    } catch {
      return c.json(
        {
          ok: false,
          error: {
            code: 'internal',
            message: 'this instance cannot reach its store',
            hint: 'see the server log; check the database this instance serves',
          },
        },
        503,
      );
    }
    return c.json({ ok: true });
  });
  app.use('*', callerGuard(opts));
  app.use('*', sameOriginGuard);

  const metrics = opts.metrics;
  if (metrics)
    app.get('/metrics', async (c) => {
      const caller = c.get('caller');
      // A server that has tokens shows its metrics only to token holders, even on loopback.
      if (opts.resolveToken && caller.kind === 'local') {
        c.header('WWW-Authenticate', 'Bearer');
        return c.json(
          { error: { code: 'refused', message: '/metrics needs a bearer token on this server' } },
          401,
        );
      }
      const gauges = opts.gauges ? await opts.gauges(caller) : null;
      // The journal's length counts every project's writes: a project-bound token is not shown it.
      if (gauges && !readsStoreWide(readerOf(caller))) gauges.journalLength = null;
      return c.text(metrics.render(gauges), 200, {
        'Content-Type': 'text/plain; version=0.0.4; charset=utf-8',
      });
    });

  app.route('/api', apiRoutes(opts));
  const mcpEngine = opts.mcpEngine;
  const mcpEngineFor = opts.mcpEngineFor ?? (mcpEngine ? () => mcpEngine : null);
  if (mcpEngineFor) app.route('/mcp', mcpRoutes(mcpEngineFor, log));
  if (opts.dashboard === false)
    app.all('*', () => {
      throw new MnemeError('not_found', 'this server has no dashboard', {
        hint: 'the dashboard is a local-user feature: run `mneme ui` on the embedded store; with --db use /api and /mcp',
      });
    });
  else app.route('/', dashboardRoutes(opts));
  return app;
}
