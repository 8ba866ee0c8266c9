// The distiller's output format: one JSON operation per line (new, update, supersede, retract,
// skip) citing evidence as message ranges of the batch. Parsing never throws: every line is
// either an operation or a counted, explained malformed line.
import { z } from 'zod';

const range = z.tuple([z.number().int(), z.number().int()]);
const evidence = z.array(range).min(1).max(16);
const fields = z.record(z.string());
const handle = z.string().regex(/^h\d{1,4}$/, 'a handle looks like h3');

const content = {
  abstract: z.string().optional(),
  body: z.string().optional(),
  fields: fields.optional(),
  tags: z.array(z.string()).max(32).optional(),
};

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
]);
export type ModelOp = z.infer<typeof ModelOp>;

export interface ParsedOutput {
  ops: { line: number; op: ModelOp }[];
  malformed: { line: number; problem: string }[];
}

export const MAX_OPS_PER_BATCH = 50;

export function parseModelOutput(text: string): ParsedOutput {
  const out: ParsedOutput = { ops: [], malformed: [] };
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
    if (out.ops.length >= MAX_OPS_PER_BATCH) {
      out.malformed.push({ line: i + 1, problem: `more than ${MAX_OPS_PER_BATCH} operations` });
      return;
    }
    out.ops.push({ line: i + 1, op: r.data });
  });
  return out;
}
