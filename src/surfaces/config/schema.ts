// Every setting of mneme, once: its key in config.toml, the environment variable that overlays
// it, the flag that wins over both, its default, what a value must be, and what it means.
// docs/configuration.md holds the same list as a table (test/config.test.ts keeps them equal).
// Loading (file, environment, flags, precedence) is in settings.ts; nothing else reads MNEME_*.
import {
  DISTILL_DEFAULTS,
  INJECT_BUDGETS,
  KNOWLEDGE_INCLUDE,
  KNOWLEDGE_MAX_FILE_BYTES,
  PROMPT_RECALL,
  WEIGHT_FLOOR,
} from '../../engine/engine.js';

/**
 * A value's type as plain data (no zod here: a hook without a config file must not load it;
 * settings.ts builds the file's zod schema from these when a file is read).
 */
export type KindSpec =
  | { type: 'int'; min?: number; max?: number; unit?: string }
  | { type: 'number'; min?: number; max?: number; unit?: string }
  | { type: 'bool' }
  | { type: 'string'; what: string }
  | { type: 'enum'; values: readonly [string, ...string[]] };

/** A value's type, with the TypeScript type of its values. */
export interface Kind<T> {
  spec: KindSpec;
  /** Never set: carries T. */
  readonly _value?: T;
}

const intKind = (min?: number, max?: number, unit?: string): Kind<number> => ({
  spec: { type: 'int', min, max, unit },
});
const numKind = (min?: number, max?: number, unit?: string): Kind<number> => ({
  spec: { type: 'number', min, max, unit },
});
/**
 * A duration in milliseconds. Node's timers (and Postgres's lock_timeout) hold at most 2^31 - 1
 * ms; past it a timer fires at once, so a "wait very long" value would mean "give up now".
 */
export const MAX_MS = 2 ** 31 - 1;
const msKind = (): Kind<number> => intKind(1, MAX_MS, 'milliseconds');
const boolKind: Kind<boolean> = { spec: { type: 'bool' } };
const strKind = (what: string): Kind<string> => ({ spec: { type: 'string', what } });
const oneOf = <T extends string>(values: readonly [T, ...T[]]): Kind<T> => ({
  spec: { type: 'enum', values },
});

const range = (min?: number, max?: number) =>
  min !== undefined && max !== undefined
    ? ` from ${min} to ${max}`
    : min !== undefined
      ? ` ≥ ${min}`
      : max !== undefined
        ? ` ≤ ${max}`
        : '';

/** What a value of this kind must be, as a refusal says it. */
export function expected(k: KindSpec): string {
  switch (k.type) {
    case 'int':
      return `an integer${range(k.min, k.max)}${k.unit ? ` (${k.unit})` : ''}`;
    case 'number':
      return `a number${range(k.min, k.max)}${k.unit ? ` (${k.unit})` : ''}`;
    case 'bool':
      return 'true or false (in the environment: 1/0, true/false, yes/no, on/off)';
    case 'string':
      return k.what;
    case 'enum':
      return `one of ${k.values.join(', ')}`;
  }
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off']);

/** An environment variable's (or a flag's) text as a value of this kind, or the text itself. */
export function fromText(k: KindSpec, v: string): unknown {
  const t = v.trim();
  switch (k.type) {
    case 'int':
      return /^-?\d+$/.test(t) ? Number(t) : v;
    case 'number':
      return t !== '' && Number.isFinite(Number(t)) ? Number(t) : v;
    case 'bool':
      return TRUE.has(t.toLowerCase()) ? true : FALSE.has(t.toLowerCase()) ? false : v;
    case 'string':
      return v;
    case 'enum':
      return t;
  }
}

const inRange = (n: number, k: { min?: number; max?: number }) =>
  (k.min === undefined || n >= k.min) && (k.max === undefined || n <= k.max);

/** Whether a value is of this kind (the same rule as the file's zod schema; a test holds them). */
export function isValid(k: KindSpec, v: unknown): boolean {
  switch (k.type) {
    case 'int':
      return typeof v === 'number' && Number.isInteger(v) && inRange(v, k);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) && inRange(v, k);
    case 'bool':
      return typeof v === 'boolean';
    case 'string':
      return typeof v === 'string' && v.length > 0;
    case 'enum':
      return typeof v === 'string' && k.values.includes(v);
  }
}

/**
 * Where a setting may be given. `any`: config file, environment, flag. `no-store-file`: chooses
 * the store, so the store's own config.toml cannot hold it (a --config file can). `env`: only
 * the environment (secrets, and what belongs to one process).
 */
export type Where = 'any' | 'no-store-file' | 'env';

export interface SettingDef<T = unknown> {
  key: string;
  env: string;
  flag?: string;
  kind: Kind<T>;
  /** undefined: unset unless given (the meaning says what happens then). */
  default: T | undefined;
  /** The default as the docs print it when it is not a plain value. */
  defaultText?: string;
  where: Where;
  secret?: boolean;
  meaning: string;
}

const def = <T, const D extends T | undefined>(
  d: Omit<SettingDef<T>, 'where' | 'default'> & { where?: Where; default: D },
): SettingDef<T> & { default: D } => ({ where: 'any', ...d });

export const EMBEDDERS = ['off', 'hash', 'openai', 'ollama', 'transformers'] as const;
export const EXECUTORS = ['claude', 'codex', 'openai', 'command'] as const;
/** What runs a host's sessions: an executor, or `off` (archived, never distilled). */
export const HOST_EXECUTORS = ['off', ...EXECUTORS] as const;
/** distill.executor: `host` (each session's host decides, below), or one choice for every host. */
export const EXECUTOR_CHOICES = ['host', ...HOST_EXECUTORS] as const;

/** Every setting, grouped as config.toml groups them (`[section] name = value`). */
export const SETTINGS = {
  store: {
    home: def({
      key: 'store.home',
      env: 'MNEME_HOME',
      flag: '--store',
      kind: strKind('a directory'),
      default: undefined,
      defaultText: '~/.mneme',
      where: 'no-store-file',
      meaning: 'the embedded store directory (relative to the config file when set there)',
    }),
    database_url: def({
      key: 'store.database_url',
      env: 'MNEME_DATABASE_URL',
      flag: '--db',
      kind: strKind('a postgres:// URL'),
      default: undefined,
      where: 'no-store-file',
      secret: true,
      meaning: 'a shared Postgres store instead of the embedded one (needs store.tenant)',
    }),
    tenant: def({
      key: 'store.tenant',
      env: 'MNEME_TENANT',
      flag: '--tenant',
      kind: strKind('a tenant name'),
      default: undefined,
      where: 'no-store-file',
      meaning: 'the tenant of the Postgres store',
    }),
    lock_timeout_ms: def({
      key: 'store.lock_timeout_ms',
      env: 'MNEME_LOCK_TIMEOUT_MS',
      kind: msKind(),
      default: 10_000,
      meaning: 'how long a writer waits for the store lock before a `locked` error',
    }),
    durable: def({
      key: 'store.durable',
      env: 'MNEME_DURABLE',
      kind: boolKind,
      default: true,
      meaning: 'fsync each write (false trades crash safety for speed; for benchmarks)',
    }),
  },
  embed: {
    embedder: def({
      key: 'embed.embedder',
      env: 'MNEME_EMBEDDER',
      flag: '--embedder',
      kind: oneOf(EMBEDDERS),
      default: 'off',
      meaning: 'the vector arm of recall: off, or the embedder that feeds it (docs/vectors.md)',
    }),
    url: def({
      key: 'embed.url',
      env: 'MNEME_EMBED_URL',
      kind: strKind('an http(s) URL'),
      default: undefined,
      defaultText: 'openai: openai.base_url; ollama: http://127.0.0.1:11434',
      meaning: 'the embedding endpoint (openai, ollama)',
    }),
    model: def({
      key: 'embed.model',
      env: 'MNEME_EMBED_MODEL',
      kind: strKind('a model name'),
      default: undefined,
      meaning: 'the embedding model (required for openai and ollama)',
    }),
    dim: def({
      key: 'embed.dim',
      env: 'MNEME_EMBED_DIM',
      kind: intKind(1, undefined),
      default: undefined,
      defaultText: "the model's (hash: 256)",
      meaning: 'vector dimensions (hash: 8 to 4096)',
    }),
    dir: def({
      key: 'embed.dir',
      env: 'MNEME_EMBED_DIR',
      kind: strKind('a directory'),
      default: undefined,
      meaning: 'a local transformers.js model directory (required for transformers)',
    }),
    key_env: def({
      key: 'embed.key_env',
      env: 'MNEME_EMBED_KEY_ENV',
      kind: strKind('an environment variable name'),
      default: undefined,
      defaultText: 'MNEME_EMBED_API_KEY, then MNEME_OPENAI_API_KEY',
      meaning: 'the environment variable that holds the embedding API key',
    }),
    api_key: def({
      key: 'embed.api_key',
      env: 'MNEME_EMBED_API_KEY',
      kind: strKind('an API key'),
      default: undefined,
      where: 'env',
      secret: true,
      meaning: 'the embedding API key (environment only; falls back to MNEME_OPENAI_API_KEY)',
    }),
    timeout_ms: def({
      key: 'embed.timeout_ms',
      env: 'MNEME_EMBED_TIMEOUT_MS',
      kind: msKind(),
      default: 15_000,
      meaning: 'how long one embedding request may take',
    }),
    min_similarity: def({
      key: 'embed.min_similarity',
      env: 'MNEME_EMBED_MIN_SIMILARITY',
      kind: numKind(-1, 1),
      default: undefined,
      defaultText: 'hash: 0.2, others: 0',
      meaning: 'vector candidates below this cosine are dropped',
    }),
  },
  openai: {
    base_url: def({
      key: 'openai.base_url',
      env: 'MNEME_OPENAI_BASE_URL',
      kind: strKind('an http(s) URL'),
      default: 'https://api.openai.com/v1',
      meaning: 'an OpenAI-compatible endpoint (the openai executor and embedder)',
    }),
    model: def({
      key: 'openai.model',
      env: 'MNEME_OPENAI_MODEL',
      kind: strKind('a model name'),
      default: undefined,
      defaultText: 'distill.model',
      meaning: 'the chat model the openai distill executor asks',
    }),
    api_key: def({
      key: 'openai.api_key',
      env: 'MNEME_OPENAI_API_KEY',
      kind: strKind('an API key'),
      default: undefined,
      where: 'env',
      secret: true,
      meaning: 'the key for openai.base_url (environment only)',
    }),
  },
  distill: {
    executor: def({
      key: 'distill.executor',
      env: 'MNEME_DISTILL_EXECUTOR',
      flag: '--executor',
      kind: oneOf(EXECUTOR_CHOICES),
      default: 'host',
      meaning:
        "the model the distiller runs: `host` follows the session's host (the three keys below); `off` stops the distiller (sessions are still archived); any other value runs for every host (docs/distiller.md)",
    }),
    claude_code_executor: def({
      key: 'distill.claude_code_executor',
      env: 'MNEME_DISTILL_CLAUDE_CODE_EXECUTOR',
      kind: oneOf(HOST_EXECUTORS),
      default: 'claude',
      meaning: 'with distill.executor = host: what distils Claude Code sessions (`claude -p`)',
    }),
    codex_executor: def({
      key: 'distill.codex_executor',
      env: 'MNEME_DISTILL_CODEX_EXECUTOR',
      kind: oneOf(HOST_EXECUTORS),
      default: 'codex',
      meaning: 'with distill.executor = host: what distils Codex sessions (`codex exec`)',
    }),
    generic_executor: def({
      key: 'distill.generic_executor',
      env: 'MNEME_DISTILL_GENERIC_EXECUTOR',
      kind: oneOf(HOST_EXECUTORS),
      default: 'off',
      meaning:
        'with distill.executor = host: what distils sessions of other hosts (`hook --host generic`); off: they have no CLI of their own',
    }),
    command: def({
      key: 'distill.command',
      env: 'MNEME_DISTILL_COMMAND',
      flag: '--command',
      kind: strKind('a shell command'),
      default: undefined,
      meaning: 'the program the command executor runs (prompt on stdin, op lines on stdout)',
    }),
    model: def({
      key: 'distill.model',
      env: 'MNEME_DISTILL_MODEL',
      kind: strKind('a model name'),
      default: undefined,
      defaultText: "the host CLI's",
      meaning: 'the model passed to claude / codex (--model)',
    }),
    timeout_ms: def({
      key: 'distill.timeout_ms',
      env: 'MNEME_DISTILL_TIMEOUT_MS',
      kind: msKind(),
      default: 180_000,
      meaning: 'how long one executor run may take',
    }),
    max_output_bytes: def({
      key: 'distill.max_output_bytes',
      env: 'MNEME_DISTILL_MAX_OUTPUT_BYTES',
      kind: intKind(1),
      default: 1 << 20,
      meaning: "the cap on an executor run's output",
    }),
    max_batch_chars: def({
      key: 'distill.max_batch_chars',
      env: 'MNEME_DISTILL_MAX_BATCH_CHARS',
      kind: intKind(1),
      default: DISTILL_DEFAULTS.maxBatchChars,
      meaning: 'transcript characters per batch',
    }),
    max_runs_per_hour: def({
      key: 'distill.max_runs_per_hour',
      env: 'MNEME_DISTILL_MAX_RUNS_PER_HOUR',
      kind: intKind(0),
      default: DISTILL_DEFAULTS.maxRunsPerHour,
      meaning: 'executor runs per hour across the store (0 stops the distiller)',
    }),
    sheet_size: def({
      key: 'distill.sheet_size',
      env: 'MNEME_DISTILL_SHEET_SIZE',
      kind: intKind(0),
      default: DISTILL_DEFAULTS.sheetSize,
      meaning: 'existing memories shown to the model so it updates instead of duplicating',
    }),
    max_batches: def({
      key: 'distill.max_batches',
      env: 'MNEME_DISTILL_MAX_BATCHES',
      kind: intKind(1),
      default: DISTILL_DEFAULTS.maxBatches,
      meaning: 'batches per distiller invocation',
    }),
    max_rounds: def({
      key: 'distill.max_rounds',
      env: 'MNEME_DISTILL_MAX_ROUNDS',
      kind: intKind(1, 10),
      default: DISTILL_DEFAULTS.maxRounds,
      meaning:
        'executor runs per batch: lookups the model asks are answered and it is asked again, up to this many rounds (1: no lookups answered)',
    }),
  },
  hooks: {
    disabled: def({
      key: 'hooks.disabled',
      env: 'MNEME_HOOKS_DISABLED',
      kind: boolKind,
      default: false,
      meaning: "every hook exits at once (the distiller sets it for its own model's sessions)",
    }),
    timeout_ms: def({
      key: 'hooks.timeout_ms',
      env: 'MNEME_HOOK_TIMEOUT_MS',
      kind: msKind(),
      default: undefined,
      defaultText: '900 for injecting hooks, 5000 for the others',
      meaning: 'a hook past this time logs a timeout and exits 0',
    }),
    prompt: def({
      key: 'hooks.prompt',
      env: 'MNEME_PROMPT_HOOK',
      kind: boolKind,
      default: true,
      meaning:
        'the UserPromptSubmit hook, where installed (setup --prompt-hook), recalls on each prompt; false turns it off without uninstalling',
    }),
    prompt_score_floor: def({
      key: 'hooks.prompt_score_floor',
      env: 'MNEME_PROMPT_SCORE_FLOOR',
      kind: numKind(0, 1),
      default: PROMPT_RECALL.scoreFloor,
      meaning:
        'recall results scoring below this (0–1: the share of the prompt matched) are not injected on a prompt; measured by `mneme bench inject`',
    }),
    prompt_knowledge: def({
      key: 'hooks.prompt_knowledge',
      env: 'MNEME_PROMPT_KNOWLEDGE',
      kind: boolKind,
      default: false,
      meaning:
        "the prompt hook also injects the best repository-knowledge chunks (the project's indexed documents), fenced as data",
    }),
  },
  knowledge: {
    include: def({
      key: 'knowledge.include',
      env: 'MNEME_KNOWLEDGE_INCLUDE',
      kind: strKind('comma-separated globs (a pattern without / matches a file name at any depth)'),
      default: KNOWLEDGE_INCLUDE.join(','),
      defaultText: 'README*, docs/**, *.md and 4 more (docs/knowledge.md)',
      meaning:
        '`mneme knowledge refresh` indexes the tracked files matching these (never .env* or key files)',
    }),
    max_file_bytes: def({
      key: 'knowledge.max_file_bytes',
      env: 'MNEME_KNOWLEDGE_MAX_FILE_BYTES',
      kind: intKind(1, undefined, 'bytes'),
      default: KNOWLEDGE_MAX_FILE_BYTES,
      meaning: 'the knowledge index skips documents larger than this',
    }),
    refresh_on_start: def({
      key: 'knowledge.refresh_on_start',
      env: 'MNEME_KNOWLEDGE_REFRESH_ON_START',
      kind: boolKind,
      default: true,
      meaning:
        'the SessionStart hook starts a detached `mneme knowledge refresh` (one at a time) in a project that has a knowledge index',
    }),
  },
  inject: {
    max_bytes: def({
      key: 'inject.max_bytes',
      env: 'MNEME_INJECT_MAX_BYTES',
      kind: intKind(0),
      default: INJECT_BUDGETS.sessionStart.maxBytes,
      meaning: 'the session-start block: at most this many bytes',
    }),
    max_lines: def({
      key: 'inject.max_lines',
      env: 'MNEME_INJECT_MAX_LINES',
      kind: intKind(0),
      default: INJECT_BUDGETS.sessionStart.maxLines,
      meaning: 'the session-start block: at most this many lines',
    }),
    file_max_bytes: def({
      key: 'inject.file_max_bytes',
      env: 'MNEME_FILE_INJECT_MAX_BYTES',
      kind: intKind(0),
      default: INJECT_BUDGETS.file.maxBytes,
      meaning: 'the block before an edit: at most this many bytes',
    }),
    file_max_lines: def({
      key: 'inject.file_max_lines',
      env: 'MNEME_FILE_INJECT_MAX_LINES',
      kind: intKind(0),
      default: INJECT_BUDGETS.file.maxLines,
      meaning: 'the block before an edit: at most this many lines',
    }),
    weight_floor: def({
      key: 'inject.weight_floor',
      env: 'MNEME_INJECT_WEIGHT_FLOOR',
      kind: numKind(0),
      default: WEIGHT_FLOOR,
      meaning: 'memories whose weight is below this are not injected unasked',
    }),
  },
  sleep: {
    auto: def({
      key: 'sleep.auto',
      env: 'MNEME_SLEEP_AUTO',
      kind: boolKind,
      default: true,
      meaning: 'the SessionStart hook starts `mneme sleep --if-due` when a pass is due',
    }),
    interval_hours: def({
      key: 'sleep.interval_hours',
      env: 'MNEME_SLEEP_INTERVAL_HOURS',
      kind: numKind(0.001, undefined, 'hours'),
      default: 24,
      meaning: 'a sleep pass is due this long after the last one',
    }),
  },
  serve: {
    headers_timeout_ms: def({
      key: 'serve.headers_timeout_ms',
      env: 'MNEME_HTTP_HEADERS_TIMEOUT_MS',
      kind: msKind(),
      default: 10_000,
      meaning: '`mneme serve` cuts off a client whose request headers take longer',
    }),
    request_timeout_ms: def({
      key: 'serve.request_timeout_ms',
      env: 'MNEME_HTTP_REQUEST_TIMEOUT_MS',
      kind: msKind(),
      default: 60_000,
      meaning: '`mneme serve` cuts off a request that takes longer (at least the headers timeout)',
    }),
  },
  artifacts: {
    max_bytes: def({
      key: 'artifacts.max_bytes',
      env: 'MNEME_ARTIFACT_MAX_BYTES',
      kind: intKind(1, undefined, 'bytes'),
      default: 64 * 1024 * 1024,
      meaning: 'the largest file `remember --artifact` keeps (docs/artifacts.md)',
    }),
  },
  mcp: {
    session: def({
      key: 'mcp.session',
      env: 'MNEME_SESSION',
      kind: strKind('a session name'),
      default: undefined,
      where: 'env',
      meaning:
        '`mneme mcp` records this session in the provenance of its writes (environment only)',
    }),
  },
} as const;

type Tree = typeof SETTINGS;
type ValueOf<D> = D extends SettingDef<infer T> ? T : never;
type Defaulted<D> = D extends { default: infer V }
  ? undefined extends V
    ? ValueOf<D> | undefined
    : ValueOf<D>
  : never;

/** The effective settings, as surfaces receive them. */
export type Settings = {
  -readonly [S in keyof Tree]: { -readonly [K in keyof Tree[S]]: Defaulted<Tree[S][K]> };
};

/** The config file itself: `--config FILE`, or $MNEME_CONFIG, else <store>/config.toml. */
export const CONFIG_FILE_SETTING = {
  env: 'MNEME_CONFIG',
  flag: '--config',
  meaning:
    "the config file to read instead of the store's config.toml (it may also choose the store)",
} as const;

/** Every setting in a list, in the order of the tree (and of docs/configuration.md). */
export const SETTING_LIST: readonly SettingDef[] = Object.values(SETTINGS).flatMap(
  (section) => Object.values(section) as SettingDef[],
);

export const settingByKey = new Map(SETTING_LIST.map((d) => [d.key, d]));

/** A setting's default as the docs and `mneme config` show it. */
export function defaultText(d: SettingDef): string {
  if (d.defaultText !== undefined) return d.defaultText;
  if (d.default === undefined) return 'unset';
  return typeof d.default === 'string' ? d.default : JSON.stringify(d.default);
}
