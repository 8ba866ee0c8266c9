// Trust from provenance (invariant 7): the write path assigns it from who wrote and what evidence
// the engine itself checked. No request field can raise it; `confirmed` needs a human surface.
import type { Actor, Trust } from './types.js';

export interface Evidence {
  /** A source file whose hash the engine computed at write time. */
  freshSource?: boolean;
}

export function assignTrust(actor: Actor, evidence: Evidence): Trust {
  switch (actor.kind) {
    case 'import':
    case 'external':
      return 'untrusted';
    case 'human':
    case 'agent':
    case 'hook':
    case 'distiller':
      return evidence.freshSource ? 'verified' : 'claimed';
    case 'sleep':
    case 'fsck':
    case 'system':
      return 'claimed';
  }
}

/** A successor written by maintenance never out-ranks what it replaces. */
export function capTrust(t: Trust, cap: Trust): Trust {
  const order: Trust[] = ['untrusted', 'claimed', 'verified', 'confirmed'];
  return order.indexOf(t) <= order.indexOf(cap) ? t : cap;
}
