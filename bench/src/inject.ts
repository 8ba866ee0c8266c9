// `mneme bench inject`: the prompt hook, measured as a host runs it. The dev questions of
// LongMemEval and LoCoMo are written into a store (as the retrieval benchmarks write them), then
// each question is sent as a UserPromptSubmit payload to the real `mneme hook
// user-prompt-submit` — one child process per prompt and per floor, the floor set through its
// setting (MNEME_PROMPT_SCORE_FLOOR) and nothing else — and the block it prints is read back:
// per floor, the share of prompts that inject, the evidence found in the block, its bytes, and
// the share of injected entries that are evidence.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Engine } from '../../src/engine/engine.js';
import { isAgentVariable } from '../../src/surfaces/agent-env.js';
import { openEngine } from '../../src/surfaces/compose.js';
import { BENCH_ACTOR, parseSlashDate, progress, readDataFile } from './harness.js';
import { ingestUnit, newStats, type IngestStats } from './ingest.js';
import { sessionsOf, turnText, DEFAULT_CONTEXT } from './locomo.js';
import { DEFAULT_PASSAGE_BYTES, sessionText } from './longmemeval.js';
import { parseEvidence, round4 } from './metrics.js';
import { REPO_ROOT } from './scale.js';

export { INJECT_COLUMNS } from './inject-columns.js';
export const DEFAULT_FLOORS = [0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8] as const;
/** Fixed samples (a child per prompt and floor): every Nth question, from the first. */
export const DEFAULT_SAMPLE = { longmemeval: 3, locomo: 10 } as const;

export interface InjectConfig {
  longmemeval?: string;
  locomo?: string;
  floors?: readonly number[];
  /** Every Nth question of each data set (1: all). */
  lmeEvery?: number;
  locomoEvery?: number;
}

interface Prompt {
  data: 'longmemeval' | 'locomo';
  id: string;
  question: string;
  /** The evidence units (sessions, turns) the question's answer is in. */
  evidence: string[];
}

/** One store with its questions: memory id → evidence unit, and the directory hooks run in. */
interface Haystack {
  home: string;
  repo: string;
  keyOf: Map<string, string>;
  prompts: Prompt[];
}

/** A store in a scratch repository (the hook binds the project from its cwd, as in a host). */
async function scratch(): Promise<{ home: string; repo: string; engine: Engine }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-bench-inject-'));
  const home = path.join(dir, 'store');
  const repo = path.join(dir, 'repo');
  fs.mkdirSync(path.join(repo, '.git'), { recursive: true });
  fs.writeFileSync(
    path.join(repo, '.git', 'config'),
    '[remote "origin"]\n\turl = git@example.com:bench/inject.git\n',
  );
  const engine = await openEngine({
    cwd: repo,
    store: home,
    surface: 'human',
    env: { ...process.env, MNEME_DATABASE_URL: '', MNEME_DURABLE: '0' },
    embedder: 'off',
  });
  return { home, repo, engine };
}

/** The environment of the hook child: a person's, without agent markers or store overrides. */
function hookEnv(home: string, floor: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith('MNEME_') && !isAgentVariable(k)) env[k] = v;
  return {
    ...env,
    MNEME_HOME: home,
    MNEME_DURABLE: '0',
    XDG_STATE_HOME: path.join(home, '..', 'state'),
    MNEME_PROMPT_SCORE_FLOOR: String(floor),
    // Quality, not speed: a busy machine must not turn a slow hook into "nothing injected".
    MNEME_HOOK_TIMEOUT_MS: '20000',
  };
}

const BIN = path.join(REPO_ROOT, 'bin', 'mneme.js');
const ENTRY = /^- \[mem:([A-Za-z0-9_-]+)\]/gm;

/** The real hook for one prompt: the block it printed (additionalContext) and its entries' ids. */
function runHook(h: Haystack, p: Prompt, floor: number): { bytes: number; ids: string[] } {
  const payload = {
    session_id: `bench-inject-${p.id}`,
    transcript_path: '',
    cwd: h.repo,
    hook_event_name: 'UserPromptSubmit',
    prompt: p.question,
  };
  const r = spawnSync(process.execPath, [BIN, 'hook', 'user-prompt-submit'], {
    cwd: h.repo,
    env: hookEnv(h.home, floor),
    input: JSON.stringify(payload),
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`the hook exited ${r.status}: ${r.stderr}`);
  const out = r.stdout.trim();
  if (out === '') return { bytes: 0, ids: [] };
  const block =
    (JSON.parse(out) as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput
      ?.additionalContext ?? '';
  return {
    bytes: Buffer.byteLength(block),
    ids: [...block.matchAll(ENTRY)].map((m) => m[1]!),
  };
}

interface LmeQuestion {
  question_id: string;
  question: string;
  answer_session_ids: string[];
  haystack_dates: string[];
  haystack_session_ids: string[];
  haystack_sessions: { role: string; content: string }[][];
}

/** LongMemEval: a store per sampled question, its sessions written as the retrieval bench does. */
const lmePicked = (json: unknown, every: number) =>
  (json as LmeQuestion[]).filter((q, i) => i % every === 0 && !q.question_id.includes('_abs'));

async function* lmeHaystacks(picked: LmeQuestion[], stats: IngestStats) {
  for (const q of picked) {
    const s = await scratch();
    const keyOf = new Map<string, string>();
    try {
      for (let i = 0; i < q.haystack_sessions.length; i++) {
        const turns = q.haystack_sessions[i]!;
        const first = turns.find((t) => t.role === 'user')?.content ?? turns[0]?.content ?? '';
        const date = parseSlashDate(q.haystack_dates[i] ?? '');
        const unit = {
          key: q.haystack_session_ids[i] ?? `s${i}`,
          type: 'event' as const,
          abstract: first,
          body: sessionText(turns),
          ...(date ? { validFrom: date } : {}),
        };
        for (const [id, key] of await ingestUnit(
          s.engine,
          BENCH_ACTOR,
          unit,
          stats,
          DEFAULT_PASSAGE_BYTES,
        ))
          keyOf.set(id, key);
      }
    } finally {
      await s.engine.close();
    }
    const prompt: Prompt = {
      data: 'longmemeval',
      id: q.question_id,
      question: q.question,
      evidence: q.answer_session_ids,
    };
    yield { home: s.home, repo: s.repo, keyOf, prompts: [prompt] } satisfies Haystack;
  }
}

/** LoCoMo: a store per conversation (turn memories, as the retrieval bench), its sampled questions. */
type Conversation = Parameters<typeof sessionsOf>[0] & {
  sample_id?: string;
  qa: { question: string; evidence?: unknown[] }[];
};

async function* locomoHaystacks(convs: Conversation[], every: number, stats: IngestStats) {
  let n = 0;
  for (const [ci, c] of convs.entries()) {
    const sessions = sessionsOf(c);
    const known = new Set(sessions.flatMap((x) => x.turns.map((t) => t.dia_id)));
    const prompts: Prompt[] = [];
    c.qa.forEach((qa, qi) => {
      const ev = parseEvidence(qa.evidence ?? [], known);
      if (ev.ids.length === 0) return;
      if (n++ % every !== 0) return;
      prompts.push({
        data: 'locomo',
        id: `${c.sample_id ?? `conv-${ci}`}#${qi}`,
        question: String(qa.question),
        evidence: ev.ids,
      });
    });
    if (prompts.length === 0) continue;
    const s = await scratch();
    const keyOf = new Map<string, string>();
    try {
      for (const x of sessions)
        for (const [i, t] of x.turns.entries()) {
          const unit = {
            key: t.dia_id,
            type: 'event' as const,
            abstract: turnText(t),
            body: x.turns
              .slice(Math.max(0, i - DEFAULT_CONTEXT), i + DEFAULT_CONTEXT + 1)
              .map(turnText)
              .join('\n'),
            ...(x.date ? { validFrom: x.date } : {}),
          };
          for (const [id, key] of await ingestUnit(s.engine, BENCH_ACTOR, unit, stats))
            keyOf.set(id, key);
        }
    } finally {
      await s.engine.close();
    }
    yield { home: s.home, repo: s.repo, keyOf, prompts } satisfies Haystack;
  }
}

interface Tally {
  prompts: number;
  injecting: number;
  entries: number;
  evidenceEntries: number;
  bytes: number;
  recallSum: number;
}

const emptyTally = (): Tally => ({
  prompts: 0,
  injecting: 0,
  entries: 0,
  evidenceEntries: 0,
  bytes: 0,
  recallSum: 0,
});

const per = (x: number, n: number) => round4(x / Math.max(1, n));

const summary = (t: Tally, off: Tally) => ({
  prompts: t.prompts,
  inject_share: per(t.injecting, t.prompts),
  evidence_recall: per(t.recallSum, t.prompts),
  bytes_per_prompt: per(t.bytes, t.prompts),
  entries_per_prompt: per(t.entries, t.prompts),
  precision: t.entries === 0 ? null : round4(t.evidenceEntries / t.entries),
  off_topic_prompts: off.prompts,
  off_topic_inject_share: off.prompts === 0 ? null : per(off.injecting, off.prompts),
  off_topic_bytes_per_prompt: off.prompts === 0 ? null : per(off.bytes, off.prompts),
});
type Summary = ReturnType<typeof summary>;

/** Off-topic prompts per store: questions of the other data set, none of whose evidence is here. */
export const OFF_TOPIC_PER_STORE = { longmemeval: 2, locomo: 10 } as const;

export async function runInject(cfg: InjectConfig, stderr: (s: string) => void) {
  const floors = [...(cfg.floors ?? DEFAULT_FLOORS)];
  const lmeEvery = cfg.lmeEvery ?? DEFAULT_SAMPLE.longmemeval;
  const locomoEvery = cfg.locomoEvery ?? DEFAULT_SAMPLE.locomo;
  const stats = newStats();
  const perPrompt: {
    data: string;
    id: string;
    off_topic: boolean;
    evidence: string[];
    by_floor: Record<string, string[]>;
  }[] = [];
  let hookRuns = 0;
  const started = Date.now();
  const sources: [keyof typeof OFF_TOPIC_PER_STORE, AsyncGenerator<Haystack>, number][] = [];
  const sha: Record<string, string> = {};
  // Every question of each data set, the other set's off-topic pool.
  const pool: Record<string, string[]> = { longmemeval: [], locomo: [] };
  if (cfg.longmemeval) {
    const data = readDataFile(cfg.longmemeval);
    sha.longmemeval = data.sha256;
    const picked = lmePicked(data.json, lmeEvery);
    pool.longmemeval = lmePicked(data.json, 1).map((q) => q.question);
    sources.push(['longmemeval', lmeHaystacks(picked, stats), picked.length]);
  }
  if (cfg.locomo) {
    const data = readDataFile(cfg.locomo);
    sha.locomo = data.sha256;
    const convs = data.json as Conversation[];
    const withEvidence = convs.reduce(
      (a, c) => a + c.qa.filter((q) => (q.evidence ?? []).length > 0).length,
      0,
    );
    pool.locomo = convs.flatMap((c) => c.qa.map((q) => String(q.question)));
    sources.push([
      'locomo',
      locomoHaystacks(convs, locomoEvery, stats),
      Math.ceil(withEvidence / locomoEvery),
    ]);
  }
  const tallies = new Map<string, { on: Map<number, Tally>; off: Map<number, Tally> }>();
  let offAt = 0;
  for (const [name, gen, total] of sources) {
    const bar = progress(`inject ${name}`, total, stderr);
    const t = {
      on: new Map(floors.map((f) => [f, emptyTally()])),
      off: new Map(floors.map((f) => [f, emptyTally()])),
    };
    tallies.set(name, t);
    const others = pool[name === 'longmemeval' ? 'locomo' : 'longmemeval']!;
    let done = 0;
    for await (const h of gen) {
      // A fixed walk through the other set's questions (a stride prime to any pool size here).
      const offTopic: Prompt[] = [];
      for (let k = 0; k < OFF_TOPIC_PER_STORE[name] && others.length > 0; k++) {
        const i = (offAt++ * 97) % others.length;
        offTopic.push({ data: name, id: `off-topic#${i}`, question: others[i]!, evidence: [] });
      }
      try {
        for (const p of [...h.prompts, ...offTopic]) {
          const off = p.evidence.length === 0;
          const record: Record<string, string[]> = {};
          for (const floor of floors) {
            const { bytes, ids } = runHook(h, p, floor);
            hookRuns++;
            const units = ids.map((id) => h.keyOf.get(id) ?? '');
            const ev = new Set(p.evidence);
            const tally = (off ? t.off : t.on).get(floor)!;
            tally.prompts++;
            if (ids.length > 0) tally.injecting++;
            tally.entries += ids.length;
            tally.bytes += bytes;
            if (!off) {
              tally.evidenceEntries += units.filter((u) => ev.has(u)).length;
              tally.recallSum += new Set(units.filter((u) => ev.has(u))).size / ev.size;
            }
            record[String(floor)] = units;
          }
          perPrompt.push({
            data: p.data,
            id: p.id,
            off_topic: off,
            evidence: p.evidence,
            by_floor: record,
          });
          if (!off) bar.tick(++done, p.id);
        }
      } finally {
        fs.rmSync(path.dirname(h.home), { recursive: true, force: true });
      }
    }
  }
  const add = (a: Tally, b: Tally) => {
    for (const k of Object.keys(a) as (keyof Tally)[]) a[k] += b[k];
  };
  const byData: Record<string, Record<string, Summary>> = {};
  const all = { on: new Map<number, Tally>(), off: new Map<number, Tally>() };
  for (const f of floors) {
    all.on.set(f, emptyTally());
    all.off.set(f, emptyTally());
  }
  for (const [name, t] of tallies) {
    byData[name] = {};
    for (const f of floors) {
      byData[name][String(f)] = summary(t.on.get(f)!, t.off.get(f)!);
      add(all.on.get(f)!, t.on.get(f)!);
      add(all.off.get(f)!, t.off.get(f)!);
    }
  }
  const overall: Record<string, Summary> = Object.fromEntries(
    floors.map((f) => [String(f), summary(all.on.get(f)!, all.off.get(f)!)]),
  );
  const chosen = chooseFloor(overall);
  const at = overall[String(chosen.floor)]!;
  return {
    benchmark: 'inject',
    n: perPrompt.filter((p) => !p.off_topic).length,
    metrics: {
      floor: chosen.floor,
      inject_share: at.inject_share,
      evidence_recall: at.evidence_recall,
      bytes_per_prompt: at.bytes_per_prompt,
      precision: at.precision,
      off_topic_inject_share: at.off_topic_inject_share,
    },
    chosen,
    by_floor: overall,
    by_data: byData,
    hook_runs: hookRuns,
    seconds: Math.round((Date.now() - started) / 1000),
    ingest: stats,
    config: {
      floors,
      sample: {
        longmemeval: `one non-abstention question in ${lmeEvery}, from the first (a store each)`,
        locomo: `one question with evidence in ${locomoEvery}, in file order (a store per conversation)`,
        off_topic: `per store, ${OFF_TOPIC_PER_STORE.longmemeval} (LongMemEval store) or ${OFF_TOPIC_PER_STORE.locomo} (LoCoMo store) questions of the other data set, in a fixed walk: prompts with nothing to find, where every injection is noise`,
      },
      hook: 'mneme hook user-prompt-submit, one child process per prompt and floor (floor via MNEME_PROMPT_SCORE_FLOOR; MNEME_HOOK_TIMEOUT_MS=20000 so machine load does not count as no injection)',
      units:
        'as the retrieval benchmarks: LongMemEval sessions as passage event memories, LoCoMo turns as event memories with one neighbouring turn each side',
    },
    data: { sha256: sha },
    questions: perPrompt,
  };
}

/** The most off-topic prompts a default floor may let inject. */
export const OFF_TOPIC_BUDGET = 0.25;

/**
 * The floor the measurement supports. Below it a floor changes little on prompts that have
 * something to find (the top three are injected); what it is for is the prompts that have
 * nothing to find, where every entry is noise. So: the lowest floor at which at most
 * OFF_TOPIC_BUDGET of off-topic prompts inject — it keeps the most evidence among those; none
 * qualifying (or no off-topic prompts measured), the floor of best precision.
 */
export function chooseFloor(overall: Record<string, Summary>): { floor: number; rule: string } {
  const rule = `the lowest floor at which at most ${OFF_TOPIC_BUDGET * 100}% of off-topic prompts (questions of the other data set) inject: it keeps the most evidence among the floors that keep the hook quiet on prompts with nothing to find`;
  const rows = Object.entries(overall)
    .map(([f, s]) => ({ floor: Number(f), s }))
    .sort((a, b) => a.floor - b.floor);
  const ok = rows.find(
    (r) => r.s.off_topic_inject_share !== null && r.s.off_topic_inject_share <= OFF_TOPIC_BUDGET,
  );
  if (ok) return { floor: ok.floor, rule };
  const best = rows
    .filter((r) => r.s.precision !== null)
    .sort((a, b) => b.s.precision! - a.s.precision! || a.floor - b.floor)[0];
  return {
    floor: best?.floor ?? rows[rows.length - 1]!.floor,
    rule: 'no floor kept off-topic prompts under budget: the floor of best precision',
  };
}
