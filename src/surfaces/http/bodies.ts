// The API's request shapes, derived from the engine's payload schemas (engine/payloads.ts). A write
// body is the write's fields less those the request carries elsewhere (the memory id in the path,
// the revision in If-Match, the idempotency key in its header), plus `project`; a recall's options
// are query parameters of the same names (the query itself is `q`). The routes (api.ts) parse with
// these and the OpenAPI document (openapi.ts) shows their JSON form, so the two cannot drift.
import { z } from 'zod';
import { RecallInput, WRITES } from '../../engine/payloads.js';

const project = z
  .string()
  .optional()
  .describe(
    'the project to write in (id, repository path, or with serve --db a plain name); default global',
  );
const inHeaders = { expected_rev: true, idempotency_key: true } as const;
const inPathAndHeaders = { id: true, ...inHeaders } as const;

export const BODIES = {
  remember: WRITES.remember.omit({ idempotency_key: true }).extend({ project }),
  supersede: WRITES.supersede.omit(inPathAndHeaders).extend({ project }),
  correct: WRITES.correct.omit(inPathAndHeaders).extend({ project }),
  retract: WRITES.retract.omit(inPathAndHeaders).extend({ project }),
  link: WRITES.link.omit(inPathAndHeaders).extend({ project }),
};

/** The query parameter that carries a recall option. */
export const recallParam = (field: string): string => (field === 'query' ? 'q' : field);

const base = (t: z.ZodTypeAny): z.ZodTypeAny => (t instanceof z.ZodOptional ? base(t.unwrap()) : t);

/** A recall's input from query parameters: numbers and booleans read from their text. */
export function recallFromQuery(query: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, schema] of Object.entries(RecallInput.shape)) {
    const v = query[recallParam(field)] ?? query[field];
    if (v === undefined) continue;
    const t = base(schema);
    if (t instanceof z.ZodBoolean) {
      const b = ['', '1', 'true', 'yes'].includes(v)
        ? true
        : ['0', 'false', 'no'].includes(v)
          ? false
          : v;
      out[field] = b;
    } else if (v === '') continue;
    else if (t instanceof z.ZodNumber) out[field] = /^-?\d+$/.test(v) ? Number(v) : v;
    else out[field] = v;
  }
  return out;
}
