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
  /** Executor runs per batch: the first, and one more after each round of lookups. */
  maxRounds: number;
}

export const DISTILL_DEFAULTS: DistillLimits = {
  maxBatchChars: 48_000,
  maxRunsPerHour: 20,
  sheetSize: 40,
  maxBatches: 5,
  maxRounds: 3,
};

/** What one host's sessions cost the distiller on one day (UTC): executor runs and characters. */
export interface SpendTally {
  runs: number;
  promptChars: number;
  outputChars: number;
}

/** The distiller's spend as the store keeps it (shared session state `spend`). */
export interface DistillSpend extends SpendTally {
  /** The UTC day counted, YYYY-MM-DD. */
  day: string;
  byHost: Record<string, SpendTally>;
}

/** The spend of `day`: the kept tally when it is that day's, else nothing spent yet. */
export function spendOf(kept: unknown, day: string): DistillSpend {
  const k = kept as Partial<DistillSpend> | null;
  if (!k || k.day !== day || typeof k.runs !== 'number')
    return { day, runs: 0, promptChars: 0, outputChars: 0, byHost: {} };
  return {
    day,
    runs: k.runs,
    promptChars: k.promptChars ?? 0,
    outputChars: k.outputChars ?? 0,
    byHost: k.byHost ?? {},
  };
}

/** The tally after one executor run for `host`. */
export function addSpend(
  s: DistillSpend,
  host: string,
  run: { promptChars: number; outputChars: number },
): DistillSpend {
  const add = (t: SpendTally | undefined): SpendTally => ({
    runs: (t?.runs ?? 0) + 1,
    promptChars: (t?.promptChars ?? 0) + run.promptChars,
    outputChars: (t?.outputChars ?? 0) + run.outputChars,
  });
  return { ...s, ...add(s), byHost: { ...s.byHost, [host]: add(s.byHost[host]) } };
}
