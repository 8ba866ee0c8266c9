// Domain errors: a stable string code plus a message a person can act on. Each surface maps the
// code to its own vocabulary (exit code, HTTP status, MCP isError); unknown errors never leak raw.

export type ErrorCode =
  | 'invalid' // the request is malformed: fix the input
  | 'not_found' // no such memory (or not visible from this scope)
  | 'conflict' // stale expected_rev, slug taken, idempotency key reused
  | 'refused' // a rule refused it (tombstone, policy, review)
  | 'locked' // the store lock could not be taken in time
  | 'corrupt' // the store's files disagree with the journal
  | 'internal';

export class MnemeError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  constructor(
    code: ErrorCode,
    message: string,
    opts: { hint?: string; details?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.name = 'MnemeError';
    this.code = code;
    this.hint = opts.hint;
    this.details = opts.details;
  }
  toJSON(): Record<string, unknown> {
    return { code: this.code, message: this.message, hint: this.hint, ...this.details };
  }
}

export const invalid = (message: string, hint?: string) =>
  new MnemeError('invalid', message, hint === undefined ? {} : { hint });
