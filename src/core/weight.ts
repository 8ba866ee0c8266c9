// Weights (DESIGN §2): a memory's weight is a pure function of the usage log up to a watermark
// and of the memory's age at that watermark — so it can always be recomputed, and the index's
// weight table is only a cache of it. Read, recall and cite raise it; injected-but-ignored and
// idle time lower it; it stays within [floor, cap]. No wall clock is read here.
/** The shape of a usage-log event this module needs (the store's UsageEvent satisfies it). */
export interface UsageEvent {
  at: string;
  kind: 'recall' | 'read' | 'inject' | 'cite' | 'ignored' | 'feedback';
  ids: string[];
  value?: number;
}

export interface WeightParams {
  /** Days for a usage event's effect to halve. */
  halfLifeDays: number;
  /** Idle days (since last use, or since recorded when never used) before decay sets in. */
  idleGraceDays: number;
  /** Weight lost per idle 30 days past the grace period. */
  idlePer30Days: number;
  floor: number;
  cap: number;
  gains: Record<UsageEvent['kind'], number>;
}

export const DEFAULT_WEIGHT_PARAMS: WeightParams = {
  halfLifeDays: 60,
  idleGraceDays: 30,
  idlePer30Days: 0.15,
  floor: 0.2,
  cap: 3,
  gains: { read: 0.3, recall: 0.1, cite: 0.6, feedback: 0.5, inject: 0, ignored: -0.25 },
};

const DAY = 86_400_000;

export interface WeightSubject {
  id: string;
  recorded_at: string;
}

/** The weight watermark of a pass at `now`: the later of the day's start and the last event. */
export function weightWatermark(now: string, usage: readonly UsageEvent[]): string {
  const dayStart = `${now.slice(0, 10)}T00:00:00.000Z`;
  let w = dayStart;
  for (const e of usage) if (e.at <= now && e.at > w) w = e.at;
  return w;
}

const round = (n: number) => Math.round(n * 1e4) / 1e4;

/** Weights of `subjects` as of watermark `at`, from the usage events at or before it. */
export function computeWeights(
  usage: readonly UsageEvent[],
  subjects: readonly WeightSubject[],
  at: string,
  p: WeightParams = DEFAULT_WEIGHT_PARAMS,
): Map<string, number> {
  const t = Date.parse(at);
  const wanted = new Set(subjects.map((s) => s.id));
  const score = new Map<string, number>();
  const lastUse = new Map<string, number>();
  for (const e of usage) {
    if (e.at > at) continue;
    const gain = e.kind === 'feedback' ? (e.value ?? 1) * p.gains.feedback : p.gains[e.kind];
    if (gain === undefined) continue;
    const age = Math.max(0, (t - Date.parse(e.at)) / DAY);
    const decayed = gain * Math.pow(0.5, age / p.halfLifeDays);
    for (const id of new Set(e.ids)) {
      if (!wanted.has(id)) continue;
      score.set(id, (score.get(id) ?? 0) + decayed);
      if (gain > 0) lastUse.set(id, Math.max(lastUse.get(id) ?? 0, Date.parse(e.at)));
    }
  }
  const out = new Map<string, number>();
  for (const s of subjects) {
    const since = lastUse.get(s.id) ?? Date.parse(s.recorded_at);
    const idleDays = Math.max(0, (t - since) / DAY - p.idleGraceDays);
    const w = 1 + (score.get(s.id) ?? 0) - (idleDays / 30) * p.idlePer30Days;
    out.set(s.id, round(Math.min(p.cap, Math.max(p.floor, w))));
  }
  return out;
}

/** Ids that appear in a positive usage event (read, recall, cite, positive feedback). */
export function everUsed(usage: readonly UsageEvent[], at: string): Set<string> {
  const out = new Set<string>();
  for (const e of usage) {
    if (e.at > at) continue;
    if (e.kind === 'read' || e.kind === 'recall' || e.kind === 'cite' || e.kind === 'inject')
      for (const id of e.ids) out.add(id);
    if (e.kind === 'feedback' && (e.value ?? 1) > 0) for (const id of e.ids) out.add(id);
  }
  return out;
}
