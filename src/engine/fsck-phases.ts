// The phases of fsck, in report order (small, so the facade re-exports it cheaply).
export const PHASES = [
  'integrity',
  'security',
  'duplicates',
  'quality',
  'tombstones',
  'sources',
] as const;
export type Phase = (typeof PHASES)[number];
