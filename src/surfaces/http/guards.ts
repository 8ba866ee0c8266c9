// Request guards that run before any route: the Host check (a loopback server answers only to
// loopback names, which defeats DNS rebinding), the caller (bearer token or local user), and the
// same-origin check on every state-changing request. No CORS headers are ever added.
import type { MiddlewareHandler } from 'hono';
import { MnemeError } from '../../core/errors.js';
import { isLoopback, type Caller } from './auth.js';
import type { AppOptions, HttpEnv } from './context.js';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export function hostGuard(opts: AppOptions): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    if (!opts.requireToken && !isLoopback(new URL(c.req.url).hostname))
      throw new MnemeError('refused', 'this server answers only to 127.0.0.1, ::1 and localhost', {
        hint: 'open it as http://127.0.0.1:<port>/',
      });
    await next();
  };
}

export function callerGuard(opts: AppOptions): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const authz = c.req.header('authorization');
    let caller: Caller;
    if (authz !== undefined) {
      const m = /^Bearer\s+([\x21-\x7e]{1,512})\s*$/i.exec(authz);
      const principal = m && opts.resolveToken ? await opts.resolveToken(m[1]!) : null;
      if (!principal || 'refused' in principal) {
        c.header('WWW-Authenticate', 'Bearer');
        return c.json(
          {
            error: principal
              ? { code: 'refused', message: principal.refused, hint: principal.hint }
              : { code: 'refused', message: 'the bearer token is not valid' },
          },
          401,
        );
      }
      caller = { kind: 'token', principal };
    } else if (opts.requireToken) {
      c.header('WWW-Authenticate', 'Bearer');
      return c.json(
        {
          error: {
            code: 'refused',
            message: 'this server needs a bearer token on every request',
            hint: 'send Authorization: Bearer <token> with a token from the server’s --token-file',
          },
        },
        401,
      );
    } else {
      caller = { kind: 'local' };
    }
    c.set('caller', caller);
    const within = caller.kind === 'token' ? caller.principal.within : undefined;
    await (within ? within(next) : next());
  };
}

/** A browser tells us where a request came from; anything but this origin may not change state. */
export function crossOrigin(c: {
  req: { method: string; url: string; header(n: string): string | undefined };
}): string | null {
  if (SAFE.has(c.req.method)) return null;
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    return `Sec-Fetch-Site is ${site.slice(0, 20)}`;
  const origin = c.req.header('origin');
  if (origin !== undefined && origin !== new URL(c.req.url).origin)
    return `Origin ${origin.slice(0, 100)} is not this server`;
  return null;
}

export const sameOriginGuard: MiddlewareHandler<HttpEnv> = async (c, next) => {
  const why = crossOrigin(c);
  if (why)
    throw new MnemeError('refused', `cross-origin request refused: ${why}`, {
      hint: 'state-changing requests must come from this server’s own pages or a non-browser client',
    });
  await next();
};
