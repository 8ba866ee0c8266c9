// The HTTP surface as one hono app: guards (security headers, body size, Host, caller,
// same-origin), then the JSON API at /api, MCP at /mcp and the dashboard at /. Testable
// in-process with `app.request(...)`; server.ts puts it on a socket.
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { secureHeaders } from 'hono/secure-headers';
import { apiRoutes } from './api.js';
import type { AppOptions, HttpEnv } from './context.js';
import { dashboardRoutes } from './dashboard/routes.js';
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
  app.use(
    '*',
    bodyLimit({
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
    }),
  );
  app.use('*', hostGuard(opts));
  app.use('*', callerGuard(opts));
  app.use('*', sameOriginGuard);

  app.route('/api', apiRoutes(opts));
  if (opts.mcpEngine) app.route('/mcp', mcpRoutes(opts.mcpEngine, log));
  app.route('/', dashboardRoutes(opts));
  return app;
}
