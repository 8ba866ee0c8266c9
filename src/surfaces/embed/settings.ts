// Turning the vector arm on: builds the embedder the settings name (embed.* in config.toml,
// MNEME_EMBEDDER and MNEME_EMBED_* in the environment, --embedder; loaded by config/settings.ts).
// Off unless one is named; nothing here loads a model or sqlite-vec.
import fs from 'node:fs';
import path from 'node:path';
import { hashEmbedder, type Embedder } from '../../core/embed.js';
import { MnemeError } from '../../core/errors.js';
import { EMBEDDERS } from '../config/schema.js';
import { loadSettings, type Settings } from '../config/settings.js';
import { ollamaEmbedder, openaiEmbedder } from './http-embedders.js';
import { transformersEmbedder } from './transformers.js';

export { EMBEDDERS };
export type EmbedderKind = (typeof EMBEDDERS)[number];

const TURN_OFF =
  'set embed.embedder = "off" (or unset MNEME_EMBEDDER, or pass --embedder off) to recall lexically';

function required(v: string | undefined, key: string, env: string, kind: string, example: string) {
  if (!v)
    throw new MnemeError('invalid', `the ${kind} embedder needs ${key}`, {
      hint: `set ${key} in config.toml or ${env} (e.g. ${example}), or ${TURN_OFF}`,
    });
  return v;
}

/** The embedder the settings name, or undefined when the vector arm is off. */
export function embedderFrom(s: Settings): Embedder | undefined {
  const e = baseEmbedder(s);
  const floor = s.embed.min_similarity;
  return e && floor !== undefined ? { ...e, minSimilarity: floor } : e;
}

/** The embedder of the environment and an --embedder flag alone (no config file). */
export function embedderFromEnv(env: NodeJS.ProcessEnv, flag?: string): Embedder | undefined {
  return embedderFrom(loadSettings({ embedder: flag }, env, { storeFile: false }).settings);
}

function baseEmbedder(s: Settings): Embedder | undefined {
  const { dim, timeout_ms: timeoutMs } = s.embed;
  switch (s.embed.embedder) {
    case 'off':
      return undefined;
    case 'hash':
      if (dim !== undefined && (dim < 8 || dim > 4096))
        throw new MnemeError('invalid', `embed.dim must be in 8..4096 for the hash embedder`, {
          hint: 'fix embed.dim (MNEME_EMBED_DIM) or leave it unset for 256',
        });
      return hashEmbedder(dim ?? 256);
    case 'openai': {
      const key = s.embed.key_env ? s.embed.api_key : (s.embed.api_key ?? s.openai.api_key);
      if (s.embed.key_env && !key)
        throw new MnemeError(
          'invalid',
          `embed.key_env names ${s.embed.key_env}, which is not set`,
          { hint: `export ${s.embed.key_env}=… or unset embed.key_env (MNEME_EMBED_KEY_ENV)` },
        );
      return openaiEmbedder({
        base: s.embed.url ?? s.openai.base_url,
        model: required(
          s.embed.model,
          'embed.model',
          'MNEME_EMBED_MODEL',
          'openai',
          'text-embedding-3-small',
        ),
        ...(key ? { key } : {}),
        ...(dim !== undefined ? { dim } : {}),
        timeoutMs,
      });
    }
    case 'ollama':
      return ollamaEmbedder({
        base: s.embed.url ?? 'http://127.0.0.1:11434',
        model: required(
          s.embed.model,
          'embed.model',
          'MNEME_EMBED_MODEL',
          'ollama',
          'nomic-embed-text',
        ),
        ...(dim !== undefined ? { dim } : {}),
        timeoutMs,
      });
    case 'transformers': {
      const dir = path.resolve(
        required(
          s.embed.dir,
          'embed.dir',
          'MNEME_EMBED_DIR',
          'transformers',
          '~/models/all-MiniLM-L6-v2',
        ),
      );
      if (!fs.existsSync(path.join(dir, 'config.json')))
        throw new MnemeError('invalid', `${dir} is not a transformers.js model directory`, {
          hint: `point embed.dir (MNEME_EMBED_DIR) at a directory holding config.json, the tokenizer files and onnx/model.onnx (mneme never downloads a model), or ${TURN_OFF}`,
        });
      return transformersEmbedder({ dir, ...(dim !== undefined ? { dim } : {}) });
    }
  }
}
