// Memory ids: `mem_` + a ULID (sortable by creation time, unique across processes).
import { monotonicFactory } from 'ulid';

const next = monotonicFactory();

export const ID_PATTERN = /^mem_[0-9A-HJKMNP-TV-Z]{26}$/;

export const newMemoryId = (now: Date): string => `mem_${next(now.getTime())}`;

export const isMemoryId = (s: string): boolean => ID_PATTERN.test(s);
