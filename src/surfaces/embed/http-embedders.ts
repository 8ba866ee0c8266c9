// Embedders behind an HTTP endpoint: any OpenAI-compatible `/embeddings` (OpenAI, vLLM, LM Studio,
// llama.cpp server…) and Ollama's `/api/embed`. Each call has a timeout; any failure throws,
// and the vector arm turns that into "lexical only for now" — never a failed write.
import type { Embedder } from '../../core/embed.js';

interface HttpOptions {
  base: string;
  model: string;
  dim?: number;
  timeoutMs: number;
}

async function postJson(
  url: string,
  body: unknown,
  timeoutMs: number,
  key?: string,
): Promise<unknown> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 300)}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${url} did not return JSON`);
  }
}

function toVector(x: unknown, where: string): Float32Array {
  if (!Array.isArray(x) || x.length === 0 || !x.every((n) => typeof n === 'number'))
    throw new Error(`${where}: not a list of numbers`);
  return Float32Array.from(x as number[]);
}

const trimSlash = (s: string) => s.replace(/\/+$/, '');

/** POST {base}/embeddings with `{model, input, dimensions?}`; vectors come back in `data[].embedding`. */
export function openaiEmbedder(o: HttpOptions & { key?: string }): Embedder {
  const url = `${trimSlash(o.base)}/embeddings`;
  return {
    model: `openai:${o.model}@${trimSlash(o.base)}`,
    dim: o.dim ?? null,
    async embed(texts) {
      if (texts.length === 0) return [];
      const body = { model: o.model, input: texts, ...(o.dim ? { dimensions: o.dim } : {}) };
      const json = (await postJson(url, body, o.timeoutMs, o.key)) as {
        data?: { embedding?: unknown; index?: number }[];
      };
      if (!Array.isArray(json.data)) throw new Error(`${url}: no "data" list in the answer`);
      const rows = [...json.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      return rows.map((r, i) => toVector(r.embedding, `${url} data[${i}].embedding`));
    },
  };
}

/** POST {base}/api/embed with `{model, input}`; vectors come back in `embeddings`. */
export function ollamaEmbedder(o: HttpOptions): Embedder {
  const url = `${trimSlash(o.base)}/api/embed`;
  return {
    model: `ollama:${o.model}@${trimSlash(o.base)}`,
    dim: o.dim ?? null,
    async embed(texts) {
      if (texts.length === 0) return [];
      const json = (await postJson(url, { model: o.model, input: texts }, o.timeoutMs)) as {
        embeddings?: unknown;
      };
      if (!Array.isArray(json.embeddings))
        throw new Error(`${url}: no "embeddings" list in the answer`);
      return json.embeddings.map((v, i) => toVector(v, `${url} embeddings[${i}]`));
    },
  };
}
