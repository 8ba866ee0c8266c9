// The journal entry an op writes, and the request hash that idempotency keys are checked against.
import { canonicalJson, sha256 } from '../core/hash.js';
import type { JournalBody } from '../core/journal.js';
import type { Actor } from '../core/types.js';
import type { Op } from './ops.js';

export const requestHash = (op: Op) => {
  const { idempotency_key: _k, ...rest } = op;
  return sha256(canonicalJson(rest));
};

export function journalBody(
  op: Op,
  actor: Actor,
  at: string,
  req: string,
  name: string,
  target: JournalBody['target'],
  before: JournalBody['before'],
  after: JournalBody['after'],
  data?: Record<string, unknown>,
): JournalBody {
  return {
    at,
    actor,
    op: name,
    target,
    before,
    after,
    reason: op.reason ?? null,
    idem: op.idempotency_key ?? null,
    req,
    ...(data ? { data } : {}),
  };
}
