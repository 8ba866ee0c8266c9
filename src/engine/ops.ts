// The operation vocabulary of the one write path, validated once at the boundary (zod). Every
// surface — CLI, MCP, HTTP, hooks, distiller, importer — builds these and calls apply().
import { z } from 'zod';
import { RevisionSchema } from '../core/markdown.js';

const text = z.string();
const fields = z.record(z.string());
const link = z
  .object({
    rel: z.enum(['supersedes', 'derived_from', 'contradicts', 'relates_to']),
    target: z.string(),
  })
  .strict();

const common = {
  idempotency_key: z.string().min(1).max(200).optional(),
  reason: z.string().optional(),
  provenance: z.array(z.string()).optional(),
};

const content = {
  abstract: text.optional(),
  body: text.optional(),
  fields: fields.optional(),
  tags: z.array(z.string()).optional(),
  links: z.array(link).optional(),
  valid_from: text.optional(),
  valid_to: text.nullable().optional(),
  applies_to: z.array(z.string()).optional(),
  source: z.string().optional(),
};

export const RememberOp = z
  .object({
    op: z.literal('remember'),
    type: z.string(),
    abstract: text,
    body: text.optional(),
    fields: fields.optional(),
    tags: z.array(z.string()).optional(),
    links: z.array(link).optional(),
    valid_from: text.optional(),
    valid_to: text.nullable().optional(),
    applies_to: z.array(z.string()).optional(),
    source: z.string().optional(),
    global: z.boolean().optional(),
    ...common,
  })
  .strict();

const revise = <T extends 'supersede' | 'correct'>(op: T) =>
  z
    .object({
      op: z.literal(op),
      id: z.string(),
      expected_rev: z.number().int().positive().optional(),
      ...content,
      ...common,
    })
    .strict();

export const SupersedeOp = revise('supersede');
export const CorrectOp = revise('correct');

export const RetractOp = z
  .object({
    op: z.literal('retract'),
    id: z.string(),
    expected_rev: z.number().int().positive().optional(),
    reject: z.boolean().optional(),
    ...common,
  })
  .strict();

export const LinkOp = z
  .object({
    op: z.literal('link'),
    id: z.string(),
    expected_rev: z.number().int().positive().optional(),
    rel: z.enum(['derived_from', 'contradicts', 'relates_to']),
    target: z.string(),
    ...common,
  })
  .strict();

/** One revision of an exported lineage, replayed in order by the importer. */
export const ImportOp = z
  .object({
    op: z.literal('import'),
    revision: RevisionSchema.extend({ body: z.string() }),
    bundle: z.string().max(200),
    ...common,
  })
  .strict();

export const Op = z.discriminatedUnion('op', [
  RememberOp,
  SupersedeOp,
  CorrectOp,
  RetractOp,
  LinkOp,
  ImportOp,
]);
export type Op = z.infer<typeof Op>;
export type RememberOp = z.infer<typeof RememberOp>;
export type ReviseOp = z.infer<typeof SupersedeOp> | z.infer<typeof CorrectOp>;
export type RetractOp = z.infer<typeof RetractOp>;
export type LinkOp = z.infer<typeof LinkOp>;
export type ImportOp = z.infer<typeof ImportOp>;

export interface ApplyResult {
  op: Op['op'];
  id: string;
  rev: number;
  seq: number | null;
  /** The same request was already applied under this idempotency key (or is a no-op). */
  replayed?: boolean;
  unchanged?: boolean;
  trust?: string;
  quarantined?: boolean;
  redacted?: string[];
}
