// What a surface may send the engine, defined once: the writes an agent or a person submits (the
// write ops of ops.ts without `op` and the engine-only provenance) and the options of a recall.
// CLI options, MCP tool input schemas, HTTP bodies and the OpenAPI document are derived from these
// schemas, and every surface parses with them, so a bad field gets the same refusal everywhere:
// what was refused, which field, why, and what to do. (Surfaces import this module and the facade,
// engine.ts, nothing else of the engine; it loads zod, so the recall and hook fast paths do not.)
import { z } from 'zod';
import { LIMITS, RECALL_DEFAULT_LIMIT } from '../core/limits.js';
import { TRUST_LEVELS, type Actor } from '../core/types.js';
import {
  CorrectOp,
  LinkOp,
  RememberOp,
  RetractOp,
  SupersedeOp,
  payloadRefusal,
  type OpInput,
} from './ops.js';
import type { RecallOptions } from './recall.js';

export { payloadRefusal, TYPE_NAMES, type OpInput } from './ops.js';

const surfaceInput = { op: true, provenance: true } as const;

/** The writes a surface may send, by verb: each op's fields as a surface submits them. */
export const WRITES = {
  remember: RememberOp.omit(surfaceInput),
  supersede: SupersedeOp.omit(surfaceInput),
  correct: CorrectOp.omit(surfaceInput),
  retract: RetractOp.omit(surfaceInput),
  link: LinkOp.omit(surfaceInput),
};
export type WriteVerb = keyof typeof WRITES;
export type WriteInput<V extends WriteVerb> = z.infer<(typeof WRITES)[V]>;

/** The op a verb's parsed input stands for, as Engine.apply takes it. */
export const writeOp = <V extends WriteVerb>(verb: V, input: WriteInput<V>): OpInput =>
  ({ op: verb, ...input }) as OpInput;

/** A recall's query and options, as every surface takes them. */
export const RecallInput = z
  .object({
    query: z
      .string()
      .max(LIMITS.queryChars)
      .regex(/\S/, 'the query is blank')
      .describe('what to look for'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(LIMITS.recallLimit)
      .optional()
      .describe(
        `how many results (default ${RECALL_DEFAULT_LIMIT}, at most ${LIMITS.recallLimit})`,
      ),
    as_of: z
      .string()
      .max(LIMITS.isoChars)
      .optional()
      .describe('what held at this time (validity time, ISO 8601)'),
    known_at: z
      .string()
      .max(LIMITS.isoChars)
      .optional()
      .describe('what the store believed at this time (transaction time, ISO 8601)'),
    explain: z
      .boolean()
      .optional()
      .describe('add score parts, and what matched but was not served and why'),
    min_trust: z
      .enum(TRUST_LEVELS)
      .optional()
      .describe('trust floor: serve only memories at least this trusted'),
    no_knowledge: z
      .boolean()
      .optional()
      .describe("leave out repository knowledge (the project's indexed documents)"),
  })
  .strict();
export type RecallInput = z.infer<typeof RecallInput>;

/** A parsed recall input as the engine's recall options (the query is passed beside them). */
export const recallOptions = (r: RecallInput, actor: Actor): RecallOptions => ({
  limit: r.limit ?? RECALL_DEFAULT_LIMIT,
  asOf: r.as_of,
  knownAt: r.known_at,
  explain: r.explain,
  minTrust: r.min_trust,
  ...(r.no_knowledge ? { knowledge: false } : {}),
  actor,
});

/** Parses a surface's payload with its schema: the value, or the one refusal shape. */
export function parsePayload<S extends z.ZodTypeAny>(
  schema: S,
  value: unknown,
  what: string,
): z.infer<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw payloadRefusal(schema, r.error, what);
}
