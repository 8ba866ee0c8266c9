// LongMemEval (S setting): per question a fresh store, every haystack session written through
// engine.apply as an `event` memory dated by its session, the question asked through
// Engine.recall, and the ranked sessions scored (README of the bench data).
import { MnemeError } from '../../src/core/errors.js';
import type { RankingModel } from '../../src/core/ranking.js';
import {
  BENCH_ACTOR,
  embedAll,
  freshStore,
  parseSlashDate,
  progress,
  readDataFile,
  type DataFile,
} from './harness.js';
import { ingestUnit, newStats, type IngestStats } from './ingest.js';
import {
  aggregate,
  dedupe,
  ndcg,
  percentile,
  reciprocalRank,
  recallAll,
  recallAny,
  round4,
} from './metrics.js';

/** Sessions are written as passages of at most this many bytes; a session ranks by its best. */
export const DEFAULT_PASSAGE_BYTES = 4096;

export const LME_KEYS = [
  'recall_any@5',
  'recall_any@10',
  'recall_all@5',
  'recall_all@10',
  'ndcg@10',
  'mrr',
] as const;
export type LmeKey = (typeof LME_KEYS)[number];

interface Turn {
  role: string;
  content: string;
}
interface Question {
  question_id: string;
  question_type: string;
  question: string;
  question_date: string;
  answer_session_ids: string[];
  haystack_dates: string[];
  haystack_session_ids: string[];
  haystack_sessions: Turn[][];
}

export interface LmeConfig {
  limit?: number;
  passageBytes?: number;
  ranker?: Partial<RankingModel>;
  durable?: boolean;
  /** The vector arm's embedder kind (hash, openai, …; off when absent); every revision is embedded before asking. */
  vector?: string;
  /** Run on Postgres: a fresh tenant per question in this database (else a files store). */
  db?: string;
}

function checkShape(json: unknown, file: string): Question[] {
  const ok =
    Array.isArray(json) &&
    json.every(
      (q) =>
        q &&
        typeof q === 'object' &&
        typeof q.question === 'string' &&
        Array.isArray(q.haystack_sessions) &&
        Array.isArray(q.haystack_session_ids) &&
        Array.isArray(q.answer_session_ids),
    );
  if (!ok)
    throw new MnemeError('invalid', `${file} is not a LongMemEval file`, {
      hint: 'expected a list of {question_id, question, answer_session_ids, haystack_session_ids, haystack_sessions, …}',
    });
  return json as Question[];
}

export const sessionText = (turns: readonly Turn[]) =>
  turns.map((t) => `${t.role}: ${t.content}`).join('\n');

export async function runLongMemEval(
  file: string,
  cfg: LmeConfig,
  stderr: (s: string) => void,
  data: DataFile = readDataFile(file),
) {
  const all = checkShape(data.json, file);
  const questions = cfg.limit ? all.slice(0, cfg.limit) : all;
  const bar = progress('longmemeval', questions.length, stderr);
  const totals: IngestStats = newStats();
  const outcomes = [];
  const recallMs: number[] = [];
  let done = 0;
  for (const q of questions) {
    const dates = q.haystack_dates.map((d) => parseSlashDate(d));
    const asked = parseSlashDate(q.question_date);
    // The clock is the latest of the question date and every session date, so that every
    // session is already valid when the question is asked (a few sessions post-date questions).
    const latest = [asked, ...dates]
      .filter((d): d is string => d !== null)
      .sort()
      .pop();
    const clockAt = new Date(Date.parse(latest ?? new Date().toISOString()) + 60_000);
    const bench = await freshStore({
      durable: cfg.durable ?? false,
      clock: () => clockAt,
      ranker: cfg.ranker,
      ...(cfg.db ? { db: cfg.db } : {}),
      ...(cfg.vector ? { vector: cfg.vector } : {}),
    });
    try {
      const keyOf = new Map<string, string>();
      for (let i = 0; i < q.haystack_sessions.length; i++) {
        const turns = q.haystack_sessions[i]!;
        const sid = q.haystack_session_ids[i] ?? `s${i}`;
        const firstUser = turns.find((t) => t.role === 'user')?.content ?? turns[0]?.content ?? '';
        const ids = await ingestUnit(
          bench.engine,
          BENCH_ACTOR,
          {
            key: sid,
            type: 'event',
            abstract: firstUser,
            body: sessionText(turns),
            validFrom: dates[i] ?? undefined,
          },
          totals,
          cfg.passageBytes ?? DEFAULT_PASSAGE_BYTES,
        );
        for (const [id, key] of ids) keyOf.set(id, key);
      }
      // Embedding the haystack is ingest work, not recall latency.
      if (cfg.vector) await embedAll(bench.engine);
      const t0 = process.hrtime.bigint();
      const r = await bench.engine.recall(q.question, {
        limit: 200,
        logUsage: false,
      });
      recallMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
      const ranked = dedupe(r.results.map((x) => keyOf.get(x.id)!).filter(Boolean));
      const rel = q.answer_session_ids;
      const values: Record<LmeKey, number> = {
        'recall_any@5': recallAny(ranked, rel, 5),
        'recall_any@10': recallAny(ranked, rel, 10),
        'recall_all@5': recallAll(ranked, rel, 5),
        'recall_all@10': recallAll(ranked, rel, 10),
        'ndcg@10': ndcg(ranked, rel, 10),
        mrr: reciprocalRank(ranked, rel),
      };
      outcomes.push({
        question_id: q.question_id,
        question_type: q.question_type,
        abstention: q.question_id.includes('_abs'),
        answer_sessions: rel,
        top10: ranked.slice(0, 10),
        values,
      });
    } finally {
      await bench.dispose();
    }
    bar.tick(++done, q.question_id);
  }
  const scored = outcomes.filter((o) => !o.abstention);
  const abst = outcomes.filter((o) => o.abstention);
  const agg = aggregate(
    scored.map((o) => ({ group: o.question_type, values: o.values })),
    LME_KEYS,
  );
  const absAgg = aggregate(
    abst.map((o) => ({ group: o.question_type, values: o.values })),
    LME_KEYS,
  );
  return {
    benchmark: 'longmemeval',
    n: scored.length,
    metrics: agg.overall,
    by_type: agg.byGroup,
    abstention: { n: abst.length, metrics: absAgg.overall },
    recall_latency_ms: {
      p50: round4(percentile(recallMs, 50)),
      p95: round4(percentile(recallMs, 95)),
    },
    ingest: { ...totals, durable: cfg.durable ?? false },
    config: {
      limit: cfg.limit ?? null,
      passage_bytes: cfg.passageBytes ?? DEFAULT_PASSAGE_BYTES,
      ranker: cfg.ranker ?? {},
      store: cfg.db ? 'postgres' : 'files',
      vector: cfg.vector ?? null,
      unit: 'session → event memories of at most passage_bytes each (first abstract: the first user turn; later ones: their first line), ranked by the best passage',
      durable: cfg.durable ?? false,
    },
    data: { file: data.path, sha256: data.sha256, questions: questions.length },
    questions: outcomes,
  };
}
