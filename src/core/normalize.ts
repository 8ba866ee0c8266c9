// Placeholder until the normaliser lands: the Tombstone shape the store port persists.
import type { Actor } from './types.js';

export interface Tombstone {
  key: string;
  scope: string;
  kind: 'value';
  value_norm: string;
  reason: string | null;
  actor: Actor;
  at: string;
  from_op: string;
  memory: string | null;
}
