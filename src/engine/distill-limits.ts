// The distiller's limits and the executor's shape: small, so the facade can re-export them
// without loading the distiller.
export type Executor = (prompt: string) => Promise<string>;

export interface DistillLimits {
  /** Characters of transcript text per batch. */
  maxBatchChars: number;
  /** Executor runs per hour across the store. */
  maxRunsPerHour: number;
  sheetSize: number;
  /** Batches per invocation. */
  maxBatches: number;
}

export const DISTILL_DEFAULTS: DistillLimits = {
  maxBatchChars: 48_000,
  maxRunsPerHour: 20,
  sheetSize: 40,
  maxBatches: 5,
};
