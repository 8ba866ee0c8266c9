// What the full CLI (run.ts, commander) and the fast dispatch (fast.ts) must do the same way:
// the meaning of the recall flags, who the caller is, how a result is printed and how a failure
// becomes output and an exit code. Light on purpose: fast.ts loads it on every hook and recall.
import { MnemeError, type ErrorCode } from '../../core/errors.js';
import { TRUST_LEVELS, type Actor, type Trust } from '../../core/types.js';
import type { Engine } from '../../engine/engine.js';
import { agentSessionMarker } from '../agent-env.js';
import { formatRecall } from './format.js';

export interface Io {
  stdout: (s: string) => void;
  /** Raw bytes to stdout (a binary artifact); absent where stdout takes text only. */
  stdoutBytes?: (b: Uint8Array) => void;
  stderr: (s: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Whether stdin and stdout are terminals (human-only commands need both); stderr for progress. */
  tty?: { stdin: boolean; stdout: boolean; stderr?: boolean };
  /** Reads one answer from the person at the terminal. */
  ask?: (question: string, opts?: { secret?: boolean }) => Promise<string>;
}

export const EXIT: Record<ErrorCode, number> = {
  invalid: 1,
  not_found: 1,
  conflict: 2,
  refused: 2,
  locked: 2,
  corrupt: 3,
  internal: 3,
};

export const parseIntOpt = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new MnemeError('invalid', `${name} must be a positive integer, not "${v}"`);
  return n;
};

/** The CLI acts as the agent inside an agent's session, as the human otherwise. */
export const cliSurface = (env: NodeJS.ProcessEnv): 'agent' | 'human' =>
  agentSessionMarker(env) ? 'agent' : 'human';

export const cliActor = (env: NodeJS.ProcessEnv): Actor => ({
  kind: cliSurface(env),
  surface: 'cli',
});

/** A result as the CLI prints it: pretty JSON with --json, the human text otherwise. */
export const printResult = (
  io: Io,
  json: boolean | undefined,
  value: unknown,
  human: () => string,
) => io.stdout(`${json ? JSON.stringify(value, null, 2) : human()}\n`);

/** A failed command: the error as JSON on stdout with --json, a message on stderr; the exit code. */
export function reportError(e: unknown, json: boolean | undefined, io: Io): number {
  const err = e instanceof MnemeError ? e : null;
  const code = err ? EXIT[err.code] : 3;
  if (json) {
    io.stdout(
      `${JSON.stringify({ error: err ? err.toJSON() : { code: 'internal', message: 'internal error; see stderr' } }, null, 2)}\n`,
    );
  }
  if (err) io.stderr(`mneme: ${err.message}${err.hint ? `\n  hint: ${err.hint}` : ''}\n`);
  else io.stderr(`mneme: internal error: ${(e as Error).stack ?? String(e)}\n`);
  return code;
}

// ---- recall ---------------------------------------------------------------------------------

/** The trust levels, as the engine's recall schema takes them for min_trust. */
export const MIN_TRUST_CHOICES = TRUST_LEVELS;

export interface RecallFlags {
  limit: number;
  asOf?: string;
  knownAt?: string;
  explain?: boolean;
  minTrust?: Trust;
  /** false: leave repository knowledge out (--no-knowledge). */
  knowledge?: boolean;
}

export { RECALL_DEFAULT_LIMIT } from '../../core/limits.js';

/** `mneme recall WORDS...`: one engine recall, printed. */
export async function recallAndPrint(
  engine: Engine,
  words: string[],
  o: RecallFlags,
  io: Io,
  json: boolean | undefined,
): Promise<void> {
  const r = await engine.recall(words.join(' '), {
    limit: o.limit,
    asOf: o.asOf,
    knownAt: o.knownAt,
    explain: o.explain,
    minTrust: o.minTrust,
    ...(o.knowledge === false ? { knowledge: false } : {}),
    actor: cliActor(io.env),
  });
  printResult(io, json, r, () => formatRecall(r));
}
