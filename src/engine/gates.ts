// The gates every candidate revision passes before it is stored: screening (secrets redacted,
// injection quarantined) and the tombstone check. Filled in by the correction layer.
import type { Revision } from '../core/types.js';
import type { EngineContext } from './context.js';

export interface GateOutcome {
  revision: Revision;
  redacted: string[];
  quarantined: boolean;
}

export async function passGates(_ctx: EngineContext, candidate: Revision): Promise<GateOutcome> {
  return { revision: candidate, redacted: [], quarantined: false };
}
