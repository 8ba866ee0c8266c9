// The distiller's output format: one JSON operation per line (new, update, supersede, retract,
// skip) citing evidence as message ranges of the batch, and lookups (recall a query, read a
// memory by id) the distiller answers before asking again. Parsing never throws: every line is
// either an operation or a counted, explained malformed line.
import { z } from 'zod';
import { ID_PATTERN } from './ids.js';

const range = z.tuple([z.number().int(), z.number().int()]);
const evidence = z.array(range).min(1).max(16);
const fields = z.record(z.string());
/** A sheet handle (h3), or the id of a memory a lookup put on the sheet. */
const handle = z
  .string()
  .refine((h) => /^h\d{1,4}$/.test(h) || ID_PATTERN.test(h), 'a handle looks like h3 (or mem_…)');

const content = {
  abstract: z.string().optional(),
  body: z.string().optional(),
  fields: fields.optional(),
  tags: z.array(z.string()).max(32).optional(),
};

/** The longest recall query a lookup may ask. */
export const LOOKUP_QUERY_CHARS = 300;

export const ModelOp = z.discriminatedUnion('op', [
  z.object({
    op: z.literal('new'),
    type: z.string(),
    abstract: z.string(),
    body: z.string().optional(),
    fields: fields.optional(),
    tags: z.array(z.string()).max(32).optional(),
    evidence,
    valid_from: z.string().optional(),
  }),
  z.object({ op: z.literal('update'), handle, ...content, evidence }),
  z.object({
    op: z.literal('supersede'),
    handle,
    ...content,
    evidence,
    valid_from: z.string().optional(),
  }),
  z.object({ op: z.literal('retract'), handle, reason: z.string().optional(), evidence }),
  z.object({ op: z.literal('skip'), reason: z.string().optional() }),
  z.object({
    op: z.literal('lookup'),
    recall: z.string().trim().min(1).max(LOOKUP_QUERY_CHARS).optional(),
    read: z.string().regex(ID_PATTERN, 'a memory id looks like mem_01J…').optional(),
  }),
]);
export type ModelOp = z.infer<typeof ModelOp>;

export type Lookup = { kind: 'recall'; query: string } | { kind: 'read'; id: string };

export interface ParsedOutput {
  /** Every operation but lookups (skip included), in output order. */
  ops: { line: number; op: Exclude<ModelOp, { op: 'lookup' }> }[];
  lookups: { line: number; lookup: Lookup }[];
  malformed: { line: number; problem: string }[];
}

export const MAX_OPS_PER_BATCH = 50;
/** Lookup lines answered per round; more are malformed. */
export const MAX_LOOKUPS_PER_ROUND = 8;

export function parseModelOutput(text: string): ParsedOutput {
  const out: ParsedOutput = { ops: [], lookups: [], malformed: [] };
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const s = raw.trim();
    if (s === '' || s.startsWith('```')) return;
    let value: unknown;
    try {
      value = JSON.parse(s);
    } catch {
      out.malformed.push({ line: i + 1, problem: 'not JSON' });
      return;
    }
    const r = ModelOp.safeParse(value);
    if (!r.success) {
      const issue = r.error.issues[0];
      out.malformed.push({
        line: i + 1,
        problem: `${issue?.path.join('.') || 'op'}: ${issue?.message ?? 'malformed'}`,
      });
      return;
    }
    const op = r.data;
    if (op.op === 'lookup') {
      if ((op.recall === undefined) === (op.read === undefined)) {
        out.malformed.push({ line: i + 1, problem: 'lookup: give exactly one of recall or read' });
        return;
      }
      if (out.lookups.length >= MAX_LOOKUPS_PER_ROUND) {
        out.malformed.push({
          line: i + 1,
          problem: `more than ${MAX_LOOKUPS_PER_ROUND} lookups in one round`,
        });
        return;
      }
      out.lookups.push({
        line: i + 1,
        lookup:
          op.recall !== undefined
            ? { kind: 'recall', query: op.recall }
            : { kind: 'read', id: op.read! },
      });
      return;
    }
    if (out.ops.length >= MAX_OPS_PER_BATCH) {
      out.malformed.push({ line: i + 1, problem: `more than ${MAX_OPS_PER_BATCH} operations` });
      return;
    }
    out.ops.push({ line: i + 1, op });
  });
  return out;
}
