// A local transformers.js model directory the user provides. The package is not a dependency of
// mneme: it is imported only when this embedder is chosen, with remote models disabled, so
// nothing is ever downloaded at run time. Mean-pooled, normalised sentence embeddings.
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Embedder } from '../../core/embed.js';
import { MnemeError } from '../../core/errors.js';

type Extractor = (
  texts: string[],
  opts: { pooling: 'mean'; normalize: boolean },
) => Promise<{ tolist(): number[][] }>;

interface TransformersModule {
  env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string };
  pipeline(task: string, model: string, opts: Record<string, unknown>): Promise<Extractor>;
}

/** The package name, kept in a variable so the compiler does not look for it. */
const PACKAGE = '@huggingface/transformers';

export function transformersEmbedder(o: { dir: string; dim?: number }): Embedder {
  let extractor: Promise<Extractor> | null = null;
  const load = async (): Promise<Extractor> => {
    let mod: TransformersModule;
    try {
      // require (which loads an ES module too): the bundle has no dynamic-import loader.
      mod = createRequire(import.meta.url)(PACKAGE) as TransformersModule;
    } catch {
      throw new MnemeError(
        'refused',
        `the transformers embedder needs ${PACKAGE}, which is not installed`,
        {
          hint: `install it beside mneme (npm install ${PACKAGE}) — mneme does not ship it — or use MNEME_EMBEDDER=ollama|openai|hash, or unset MNEME_EMBEDDER to recall lexically`,
        },
      );
    }
    mod.env.allowRemoteModels = false;
    mod.env.allowLocalModels = true;
    mod.env.localModelPath = `${path.dirname(o.dir)}${path.sep}`;
    return mod.pipeline('feature-extraction', path.basename(o.dir), { local_files_only: true });
  };
  return {
    model: `transformers:${o.dir}`,
    dim: o.dim ?? null,
    async embed(texts) {
      if (texts.length === 0) return [];
      extractor ??= load().catch((e: unknown) => {
        extractor = null;
        throw e;
      });
      const out = await (await extractor)(texts, { pooling: 'mean', normalize: true });
      return out.tolist().map((v) => Float32Array.from(v));
    },
  };
}
