// Memory ids: `mem_` + a ULID (sortable by creation time, unique across processes). The ulid
// library is loaded by the first new id, so readers (hooks, recall) that only match ids skip it;
// ids.ts is its only user, so its CommonJS build (require is synchronous) is the only instance.
import { randomFillSync } from 'node:crypto';
import { createRequire } from 'node:module';
import type { ULIDFactory } from 'ulid';

// The ULID library draws one random byte per character with a separate crypto call; drawing
// them from a pool filled 4 KiB at a time gives the same randomness at a fraction of the cost.
const pool = new Uint8Array(4096);
let used = pool.length;
const pooledRandom = (): number => {
  if (used >= pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return pool[used++]! / 256;
};

let next: ULIDFactory | undefined;
const factory = () =>
  (next ??= (createRequire(import.meta.url)('ulid') as typeof import('ulid')).monotonicFactory(
    pooledRandom,
  ));

export const ID_PATTERN = /^mem_[0-9A-HJKMNP-TV-Z]{26}$/;

export const newMemoryId = (now: Date): string => `mem_${factory()(now.getTime())}`;

export const isMemoryId = (s: string): boolean => ID_PATTERN.test(s);
