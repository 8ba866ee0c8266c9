// Turning the vector arm on: one place reads the flag and the environment and builds the
// embedder (no config.toml yet; flags win over the environment, as for the distiller). Off
// unless MNEME_EMBEDDER (or --embedder) names one; nothing here loads a model or sqlite-vec.
import fs from 'node:fs';
import path from 'node:path';
import { hashEmbedder, type Embedder } from '../../core/embed.js';
import { MnemeError } from '../../core/errors.js';
import { ollamaEmbedder, openaiEmbedder } from './http-embedders.js';
import { transformersEmbedder } from './transformers.js';

export const EMBEDDERS = ['off', 'hash', 'openai', 'ollama', 'transformers'] as const;
export type EmbedderKind = (typeof EMBEDDERS)[number];

const TURN_OFF = 'unset MNEME_EMBEDDER (or pass --embedder off) to recall lexically';

function positiveInt(v: string | undefined, name: string): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new MnemeError('invalid', `${name} must be a positive integer, not "${v}"`);
  return n;
}

function required(env: NodeJS.ProcessEnv, name: string, kind: string, example: string): string {
  const v = env[name];
  if (!v)
    throw new MnemeError('invalid', `the ${kind} embedder needs ${name}`, {
      hint: `set ${name} (e.g. ${example}), or ${TURN_OFF}`,
    });
  return v;
}

/**
 * The embedder the flag or environment names, or undefined when the arm is off:
 * MNEME_EMBEDDER=off|hash|openai|ollama|transformers, MNEME_EMBED_URL (endpoint base),
 * MNEME_EMBED_MODEL, MNEME_EMBED_DIM, MNEME_EMBED_DIR (a local transformers.js model),
 * MNEME_EMBED_KEY_ENV (the variable holding the API key; default MNEME_EMBED_API_KEY, then
 * MNEME_OPENAI_API_KEY), MNEME_EMBED_TIMEOUT_MS (default 15000), MNEME_EMBED_MIN_SIMILARITY
 * (vector candidates below this cosine are dropped; default 0.2 for hash, else 0).
 */
export function embedderFromEnv(env: NodeJS.ProcessEnv, flag?: string): Embedder | undefined {
  const e = baseEmbedder(env, flag);
  const floor = env.MNEME_EMBED_MIN_SIMILARITY;
  if (!e || floor === undefined || floor === '') return e;
  const n = Number(floor);
  if (!Number.isFinite(n) || n < -1 || n > 1)
    throw new MnemeError('invalid', `MNEME_EMBED_MIN_SIMILARITY must be in -1..1, not "${floor}"`);
  return { ...e, minSimilarity: n };
}

function baseEmbedder(env: NodeJS.ProcessEnv, flag?: string): Embedder | undefined {
  const kind = (flag ?? env.MNEME_EMBEDDER ?? 'off').trim() || 'off';
  if (!(EMBEDDERS as readonly string[]).includes(kind))
    throw new MnemeError('invalid', `unknown embedder "${kind}"`, {
      hint: `use one of: ${EMBEDDERS.join(', ')}`,
    });
  const dim = positiveInt(env.MNEME_EMBED_DIM, 'MNEME_EMBED_DIM');
  const timeoutMs = positiveInt(env.MNEME_EMBED_TIMEOUT_MS, 'MNEME_EMBED_TIMEOUT_MS') ?? 15_000;
  switch (kind as EmbedderKind) {
    case 'off':
      return undefined;
    case 'hash':
      if (dim !== undefined && (dim < 8 || dim > 4096))
        throw new MnemeError('invalid', `MNEME_EMBED_DIM must be in 8..4096 for the hash embedder`);
      return hashEmbedder(dim ?? 256);
    case 'openai': {
      const keyEnv = env.MNEME_EMBED_KEY_ENV;
      const key = keyEnv ? env[keyEnv] : (env.MNEME_EMBED_API_KEY ?? env.MNEME_OPENAI_API_KEY);
      if (keyEnv && !key)
        throw new MnemeError('invalid', `MNEME_EMBED_KEY_ENV names ${keyEnv}, which is not set`, {
          hint: `export ${keyEnv}=… or unset MNEME_EMBED_KEY_ENV`,
        });
      return openaiEmbedder({
        base: env.MNEME_EMBED_URL ?? env.MNEME_OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
        model: required(env, 'MNEME_EMBED_MODEL', 'openai', 'text-embedding-3-small'),
        ...(key ? { key } : {}),
        ...(dim !== undefined ? { dim } : {}),
        timeoutMs,
      });
    }
    case 'ollama':
      return ollamaEmbedder({
        base: env.MNEME_EMBED_URL ?? 'http://127.0.0.1:11434',
        model: required(env, 'MNEME_EMBED_MODEL', 'ollama', 'nomic-embed-text'),
        ...(dim !== undefined ? { dim } : {}),
        timeoutMs,
      });
    case 'transformers': {
      const dir = path.resolve(
        required(env, 'MNEME_EMBED_DIR', 'transformers', '~/models/all-MiniLM-L6-v2'),
      );
      if (!fs.existsSync(path.join(dir, 'config.json')))
        throw new MnemeError('invalid', `${dir} is not a transformers.js model directory`, {
          hint: `point MNEME_EMBED_DIR at a directory holding config.json, the tokenizer files and onnx/model.onnx (mneme never downloads a model), or ${TURN_OFF}`,
        });
      return transformersEmbedder({ dir, ...(dim !== undefined ? { dim } : {}) });
    }
  }
}
