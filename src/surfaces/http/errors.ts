// Domain errors as HTTP answers: each MnemeError code maps to one status, and the body is the same
// `{error: {code, message, hint}}` the CLI prints with --json. Anything that is not a domain
// error is logged by the server and answered as a bare `internal` error, never leaked raw.
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { MnemeError, type ErrorCode } from '../../core/errors.js';

/**
 * `refused` is 403: the request was understood and well-formed, but a rule forbids it (a
 * tombstone, a human-only decision, a wrong passphrase, a token without access to the project).
 * Repeating it unchanged will not help; a stale revision is `conflict` (409) instead.
 */
export const STATUS: Record<ErrorCode, ContentfulStatusCode> = {
  invalid: 400,
  not_found: 404,
  conflict: 409,
  refused: 403,
  locked: 503,
  corrupt: 500,
  internal: 500,
};

export interface ErrorBody {
  error: { code: ErrorCode; message: string; hint?: string; [k: string]: unknown };
}

export function errorBody(e: unknown): { status: ContentfulStatusCode; body: ErrorBody } {
  if (e instanceof MnemeError) {
    const json = e.toJSON() as ErrorBody['error'];
    if (json.hint === undefined) delete json.hint;
    delete json.journaled;
    return { status: STATUS[e.code], body: { error: json } };
  }
  return {
    status: 500,
    body: { error: { code: 'internal', message: 'internal error; see the server log' } },
  };
}

export const isDomainError = (e: unknown): e is MnemeError => e instanceof MnemeError;
