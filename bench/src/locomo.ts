// LoCoMo: per conversation a fresh store holding its turns (or sessions) as `event` memories
// with speaker, dia_id and session date; each question asked through Engine.recall and scored
// by dialog-level evidence recall@k. Malformed or unknown evidence ids are counted, not fatal.
import { MnemeError } from '../../src/core/errors.js';
import type { RankingModel } from '../../src/core/ranking.js';
import {
  BENCH_ACTOR,
  embedAll,
  freshStore,
  parseLocomoDate,
  progress,
  readDataFile,
  type DataFile,
} from './harness.js';
import { ingestUnit, newStats, type IngestStats, type Unit } from './ingest.js';
import { aggregate, dedupe, parseEvidence, percentile, recallFraction, round4 } from './metrics.js';

export const LOCOMO_KEYS = ['recall@5', 'recall@10', 'recall@25'] as const;
export type LocomoKey = (typeof LOCOMO_KEYS)[number];

export const DEFAULT_CONTEXT = 1;

export const CATEGORY: Record<string, string> = {
  '1': 'multi-hop',
  '2': 'temporal',
  '3': 'open-domain',
  '4': 'single-hop',
  '5': 'adversarial',
};

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}
interface Conversation {
  sample_id?: string;
  conversation: Record<string, unknown>;
  qa: { question: string; evidence?: unknown[]; category?: number | string }[];
}

export interface LocomoConfig {
  granularity?: 'turn' | 'session';
  /** Turn granularity: neighbouring turns on each side written into the body as context. */
  context?: number;
  ranker?: Partial<RankingModel>;
  durable?: boolean;
  /** The vector arm's embedder kind (hash, openai, …; off when absent); every revision is embedded before asking. */
  vector?: string;
}

function checkShape(json: unknown, file: string): Conversation[] {
  const ok =
    Array.isArray(json) &&
    json.every(
      (c) =>
        c && typeof c === 'object' && typeof c.conversation === 'object' && Array.isArray(c.qa),
    );
  if (!ok)
    throw new MnemeError('invalid', `${file} is not a LoCoMo file`, {
      hint: 'expected a list of {conversation: {session_N, session_N_date_time, …}, qa: […]}',
    });
  return json as Conversation[];
}

export const turnText = (t: Turn) =>
  `${t.speaker}: ${t.text}${t.blip_caption ? ` [shares a photo: ${t.blip_caption}]` : ''}`;

export function sessionsOf(c: Pick<Conversation, 'conversation'>) {
  const out: { n: number; date: string | null; turns: Turn[] }[] = [];
  for (const [k, v] of Object.entries(c.conversation)) {
    const m = /^session_(\d+)$/.exec(k);
    if (!m || !Array.isArray(v)) continue;
    const raw = c.conversation[`session_${m[1]}_date_time`];
    out.push({
      n: Number(m[1]),
      date: typeof raw === 'string' ? parseLocomoDate(raw) : null,
      turns: (v as Turn[]).filter((t) => t && typeof t.dia_id === 'string'),
    });
  }
  return out.sort((a, b) => a.n - b.n);
}

export async function runLocomo(
  file: string,
  cfg: LocomoConfig,
  stderr: (s: string) => void,
  data: DataFile = readDataFile(file),
) {
  const convs = checkShape(data.json, file);
  const granularity = cfg.granularity ?? 'turn';
  const context = granularity === 'turn' ? (cfg.context ?? DEFAULT_CONTEXT) : 0;
  const total = convs.reduce((a, c) => a + c.qa.length, 0);
  const bar = progress('locomo', total, stderr);
  const totals: IngestStats = newStats();
  const skipped = { no_evidence: 0, malformed_ids: 0, unknown_ids: 0, examples: [] as string[] };
  const outcomes = [];
  const recallMs: number[] = [];
  let done = 0;
  for (const [ci, c] of convs.entries()) {
    const conv = c.sample_id ?? `conv-${ci}`;
    const sessions = sessionsOf(c);
    const known = new Set(sessions.flatMap((s) => s.turns.map((t) => t.dia_id)));
    const dates = sessions.map((s) => s.date).filter((d): d is string => d !== null);
    const last = dates.sort().pop();
    const clockAt = new Date(Date.parse(last ?? new Date().toISOString()) + 86_400_000);
    const bench = await freshStore({
      durable: cfg.durable ?? false,
      clock: () => clockAt,
      ranker: cfg.ranker,
      ...(cfg.vector ? { vector: cfg.vector } : {}),
    });
    try {
      const keyOf = new Map<string, string>();
      const units: Unit[] =
        granularity === 'turn'
          ? sessions.flatMap((s) =>
              s.turns.map((t, i) => ({
                key: t.dia_id,
                type: 'event' as const,
                abstract: turnText(t),
                body: s.turns
                  .slice(Math.max(0, i - context), i + context + 1)
                  .map(turnText)
                  .join('\n'),
                validFrom: s.date ?? undefined,
              })),
            )
          : sessions.map((s) => ({
              key: `S${s.n}`,
              type: 'event' as const,
              abstract: s.turns[0] ? turnText(s.turns[0]) : `session ${s.n}`,
              body: s.turns.map(turnText).join('\n'),
              validFrom: s.date ?? undefined,
            }));
      for (const u of units)
        for (const [id, key] of await ingestUnit(bench.engine, BENCH_ACTOR, u, totals))
          keyOf.set(id, key);
      if (cfg.vector) await embedAll(bench.engine);
      for (const qa of c.qa) {
        const ev = parseEvidence(qa.evidence ?? [], known);
        for (const s of ev.skipped) {
          if (s.why === 'malformed') skipped.malformed_ids++;
          else skipped.unknown_ids++;
          if (skipped.examples.length < 20) skipped.examples.push(`${conv}: ${s.raw}`);
        }
        const category = CATEGORY[String(qa.category)] ?? `category-${String(qa.category)}`;
        if (ev.ids.length === 0) {
          skipped.no_evidence++;
          bar.tick(++done, conv);
          continue;
        }
        const t0 = process.hrtime.bigint();
        const r = await bench.engine.recall(String(qa.question), {
          limit: 200,
          logUsage: false,
        });
        recallMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
        const ranked = dedupe(r.results.map((x) => keyOf.get(x.id)!).filter(Boolean));
        // Session granularity: a turn counts as retrieved when its session is.
        const rel =
          granularity === 'turn'
            ? ev.ids
            : dedupe(ev.ids.map((id) => `S${id.slice(1).split(':')[0]}`));
        const values: Record<LocomoKey, number> = {
          'recall@5': recallFraction(ranked, rel, 5),
          'recall@10': recallFraction(ranked, rel, 10),
          'recall@25': recallFraction(ranked, rel, 25),
        };
        outcomes.push({
          conversation: conv,
          category,
          evidence: ev.ids,
          top10: ranked.slice(0, 10),
          values,
        });
        bar.tick(++done, conv);
      }
    } finally {
      await bench.dispose();
    }
  }
  const agg = aggregate(
    outcomes.map((o) => ({ group: o.category, values: o.values })),
    LOCOMO_KEYS,
  );
  return {
    benchmark: 'locomo',
    n: outcomes.length,
    metrics: agg.overall,
    by_category: agg.byGroup,
    skipped,
    recall_latency_ms: {
      p50: round4(percentile(recallMs, 50)),
      p95: round4(percentile(recallMs, 95)),
    },
    ingest: { ...totals, durable: cfg.durable ?? false },
    config: {
      granularity,
      context,
      ranker: cfg.ranker ?? {},
      vector: cfg.vector ?? null,
      unit:
        granularity === 'turn'
          ? `turn → event memory (abstract "speaker: text [photo caption]"; body: the turn with ${context} neighbouring turn(s) each side), valid_from = session date`
          : 'session → event memory (all turns), valid_from = session date',
      durable: cfg.durable ?? false,
    },
    data: { file: data.path, sha256: data.sha256, conversations: convs.length, questions: total },
    questions: outcomes,
  };
}
