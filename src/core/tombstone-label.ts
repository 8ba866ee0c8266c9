// How a tombstone's value is shown on a human surface (kept apart from normalize.ts, whose
// patterns cost a process time to load): a purged value is not kept, so none is shown.
import type { Tombstone } from './normalize.js';

export const shownValue = (t: Pick<Tombstone, 'kind' | 'value_norm'>): string =>
  t.kind === 'purged' ? '(purged: the value is not kept)' : t.value_norm;
