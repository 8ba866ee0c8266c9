// The operation vocabulary of the one write path, validated once at the boundary (zod). Every
// surface — CLI, MCP, HTTP, hooks, distiller, importer — builds these and calls apply(). The
// descriptions and bounds here are what every surface shows: MCP input schemas, HTTP bodies, the
// OpenAPI document and CLI options are derived from these schemas (see payloads.ts).
import { z } from 'zod';
import { MnemeError } from '../core/errors.js';
import { LIMITS } from '../core/limits.js';
import { buildRevisionSchema } from '../core/markdown.js';
import { PROPOSAL_KINDS } from '../core/proposal.js';

const text = z.string();
const iso = z.string().max(LIMITS.isoChars);
const memoryId = z.string().min(1).max(LIMITS.idChars);
const id = memoryId.describe('a memory id, e.g. mem_01J…');
const expectedRev = z
  .number()
  .int()
  .positive()
  .optional()
  .describe('refuse if the memory has moved past this revision');
const link = z
  .object({
    rel: z
      .enum(['supersedes', 'derived_from', 'contradicts', 'relates_to'])
      .describe('how this memory relates to the target'),
    target: memoryId.describe('the other memory id'),
  })
  .strict();

const common = {
  idempotency_key: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('replaying the same request with this key returns the first result'),
  reason: text
    .optional()
    .describe(`why (recorded in the journal; ≤ ${LIMITS.reasonChars} characters, one line)`),
  provenance: z.array(z.string()).optional(),
};

const abstract = text.describe(
  `one line (≤ ${LIMITS.abstractChars} characters): what gets searched and injected`,
);
/** A large file kept by reference beside the memory (engine/artifacts.ts); not indexed. */
const artifact = z
  .object({
    name: z.string().min(1).max(1_000).describe('the file name, e.g. "build.log"'),
    media_type: z
      .string()
      .max(200)
      .optional()
      .describe('its media type, e.g. text/plain (default: guessed from the name and bytes)'),
    content_base64: z
      .string()
      .describe(
        'the bytes, base64 (at most the cap of setting artifacts.max_bytes, 64 MiB by default)',
      ),
  })
  .strict()
  .optional()
  .describe(
    'a large file (log, diff, report) kept by reference: the abstract and body are what is searched; `read` with level artifact returns it in pages',
  );

const content = {
  abstract: abstract.optional(),
  body: text.optional().describe(`Markdown detail (≤ ${LIMITS.bodyBytes / 1024} KiB)`),
  fields: z
    .record(z.string())
    .optional()
    .describe('schema fields, e.g. {"subject": "billing"}; the subject names what it is about'),
  tags: z.array(z.string()).optional().describe(`tags (≤ ${LIMITS.tags})`),
  links: z
    .array(link)
    .optional()
    .describe('relations to other memories, e.g. [{"rel": "relates_to", "target": "mem_…"}]'),
  valid_from: iso.optional().describe('ISO date/time the fact started to hold (default now)'),
  valid_to: iso.nullable().optional().describe('ISO date/time the fact stopped holding'),
  applies_to: z
    .array(z.string())
    .optional()
    .describe('file globs this applies to, relative to the project root, e.g. ["src/billing/**"]'),
  source: z
    .string()
    .max(LIMITS.sourceChars)
    .optional()
    .describe(
      'bind the memory to a project file (path[#symbol]); recall labels it drifted when the file changes',
    ),
  artifact,
};

/** The memory types a remember may name (the registry refuses any other). */
export const TYPE_NAMES =
  'decision, constraint, procedure, fact, preference, lesson, incident, reference, event or profile';

export const RememberOp = z
  .object({
    op: z.literal('remember'),
    type: z.string().min(1).max(LIMITS.typeChars).describe(TYPE_NAMES),
    ...content,
    abstract,
    global: z
      .boolean()
      .optional()
      .describe('store in the global scope (true for facts about the user, not the project)'),
    ...common,
  })
  .strict();

const revise = <T extends 'supersede' | 'correct'>(op: T) =>
  z
    .object({
      op: z.literal(op),
      id,
      expected_rev: expectedRev,
      ...content,
      ...common,
    })
    .strict();

export const SupersedeOp = revise('supersede');
export const CorrectOp = revise('correct');

export const RetractOp = z
  .object({
    op: z.literal('retract'),
    id,
    expected_rev: expectedRev,
    reject: z
      .boolean()
      .optional()
      .describe('the value was wrong: arm a tombstone so it may not be written again'),
    ...common,
  })
  .strict();

export const LinkOp = z
  .object({
    op: z.literal('link'),
    id,
    expected_rev: expectedRev,
    rel: z
      .enum(['derived_from', 'contradicts', 'relates_to'])
      .describe('how this memory relates to the target'),
    target: memoryId.describe('the other memory id'),
    ...common,
  })
  .strict();

/** One revision of an exported lineage, replayed in order by the importer. */
export const ImportOp = z
  .object({
    op: z.literal('import'),
    revision: buildRevisionSchema(z).extend({ body: z.string() }),
    bundle: z.string().max(200),
    /** The lineage's last value in the bundle: a new lineage is refused if it is rejected here. */
    final_rev: z.number().int().optional(),
    final_abstract: z.string().optional(),
    final_active: z.boolean().optional(),
    /** The person importing allowed global entries (--global). */
    global: z.boolean().optional(),
    ...common,
  })
  .strict();

const idOnly = <T extends string>(op: T) =>
  z
    .object({
      op: z.literal(op),
      id: z.string(),
      expected_rev: z.number().int().positive().optional(),
      ...common,
    })
    .strict();

/** Human only: raise a memory to `confirmed`. */
export const ConfirmOp = idOnly('confirm');
/** Human only: release a quarantined memory (the screen was wrong). */
export const ReleaseOp = idOnly('release');

/** Human only: lift a tombstone so the value may be written again. */
export const LiftOp = z
  .object({ op: z.literal('lift'), key: z.string(), scope: z.string(), ...common })
  .strict();

/** Human only: accept or reject a pending proposal. */
export const DecideOp = z
  .object({
    op: z.literal('decide'),
    proposal: z.string(),
    decision: z.enum(['accept', 'reject']),
    /** The hash of the effects the person was shown; a decision on changed effects is refused. */
    effects: z.string().max(64).optional(),
    ...common,
  })
  .strict();

/**
 * What a proposal may hold for a person to apply: only ops its proposer could apply itself.
 * Human-only effects (confirm, release, lift) are never stored: they are derived from the
 * proposal's kind and targets when a person decides (see proposal-plan.ts).
 */
export const PlanStep = z.discriminatedUnion('op', [
  RememberOp,
  SupersedeOp,
  CorrectOp,
  RetractOp,
  LinkOp,
]);
export type PlanStep = z.infer<typeof PlanStep>;

/**
 * Open a proposal for a person to decide. Only mneme's own maintenance (sleep, fsck) journals
 * this op; agents' conflicting writes, screening and hand edits open theirs inside the write
 * path, and an import re-derives each bundle proposal from what this store can check.
 */
export const ProposeOp = z
  .object({
    op: z.literal('propose'),
    kind: z.enum(PROPOSAL_KINDS),
    targets: z.array(z.string()).max(50),
    summary: z.string().max(500),
    accept: z.array(PlanStep).max(50),
    reject: z.array(PlanStep).max(50).optional(),
    evidence: z.array(z.string()).max(50).optional(),
    diff: z
      .string()
      .max(64 * 1024)
      .optional(),
    scope: z.string().optional(),
    ...common,
  })
  .strict();

/** A memory file edited outside mneme, recorded as an untrusted revision pending review. */
export const ExternalEditOp = z
  .object({
    op: z.literal('external_edit'),
    id: z.string(),
    text: z.string(),
    path: z.string(),
    ...common,
  })
  .strict();

/** Human only: set or change the review passphrase (its scrypt hash is kept in the journal). */
export const SetPassphraseOp = z
  .object({
    op: z.literal('set_passphrase'),
    salt: z.string().max(200),
    hash: z.string().max(400),
    ...common,
  })
  .strict();

/** Arm a tombstone carried by an import bundle (arming only ever makes the store stricter). */
export const ArmOp = z
  .object({ op: z.literal('arm'), value: z.string().max(2000), scope: z.string(), ...common })
  .strict();

/** Re-read a bound memory's source and journal its freshness if it moved (engine-observed). */
export const CheckSourceOp = idOnly('check_source');

/** Bind a drifted or missing memory to its source's current content: a new revision. */
export const RevalidateOp = z
  .object({
    op: z.literal('revalidate'),
    id: z.string(),
    expected_rev: z.number().int().positive().optional(),
    source: z.string().optional(),
    ...common,
  })
  .strict();

/** Withhold a memory whose stored text fails today's screen (fsck); only ever restricts. */
export const QuarantineOp = z
  .object({
    op: z.literal('quarantine'),
    id: z.string(),
    expected_rev: z.number().int().positive().optional(),
    rules: z.array(z.string().max(100)).min(1).max(20),
    evidence: z.array(z.string().max(500)).max(20).optional(),
    ...common,
  })
  .strict();

/** A sleep pass's record: the weight watermark it computed at and what it changed. */
export const SleepPassOp = z
  .object({
    op: z.literal('sleep_pass'),
    weights_at: z.string(),
    scopes: z.array(z.string()).max(10),
    changed: z.record(z.number()),
    report: z.string().max(300).optional(),
    ...common,
  })
  .strict();

/** fsck's checkpoint: the issue `issue` was fixed (its fix op is already committed). */
export const FsckFixOp = z
  .object({
    op: z.literal('fsck_fix'),
    issue: z.string().max(80),
    fix: z.string().max(300),
    memory: z.string().optional(),
    result: z.record(z.unknown()).optional(),
    ...common,
  })
  .strict();

/** Maintenance ops only the system's own maintenance actors may journal. */
export const MAINTENANCE_OPS = new Set(['sleep_pass', 'fsck_fix']);
export const MAINTENANCE_ACTORS = new Set(['sleep', 'fsck', 'system', 'human']);

export const Op = z.discriminatedUnion('op', [
  CheckSourceOp,
  RevalidateOp,
  QuarantineOp,
  SleepPassOp,
  FsckFixOp,
  SetPassphraseOp,
  ArmOp,
  RememberOp,
  SupersedeOp,
  CorrectOp,
  RetractOp,
  LinkOp,
  ImportOp,
  ConfirmOp,
  ReleaseOp,
  LiftOp,
  DecideOp,
  ProposeOp,
  ExternalEditOp,
]);
export type Op = z.infer<typeof Op>;
/** An op as a caller writes it, before parsing (what Engine.apply takes). */
export type OpInput = z.input<typeof Op>;

/**
 * The one refusal for a payload that does not parse, on every surface: what was refused (`what`:
 * the verb or tool), which field (in the message and as `details.field`), why, and what to do.
 */
export function payloadRefusal(schema: z.ZodTypeAny, error: z.ZodError, what: string): MnemeError {
  const issue = error.issues[0]!;
  const shape: Record<string, z.ZodTypeAny> = schema instanceof z.ZodObject ? schema.shape : {};
  const at = issue.path.join('.');
  if (issue.code === 'unrecognized_keys') {
    const names = issue.keys.map((k) => (at ? `${at}.${k}` : k));
    return new MnemeError(
      'invalid',
      `invalid ${what}: ${names.join(', ')} ${names.length > 1 ? 'are not fields' : 'is not a field'} of ${at || what}`,
      {
        hint: at
          ? `remove ${names.join(', ')}`
          : `send only these fields: ${Object.keys(shape).join(', ')}`,
        details: { field: names[0] },
      },
    );
  }
  const field = at || what;
  const missing = issue.code === 'invalid_type' && issue.received === 'undefined';
  const described = shape[String(issue.path[0])]?.description;
  return new MnemeError(
    'invalid',
    `invalid ${what}: ${field} ${missing ? 'is required' : `is refused: ${issue.message.charAt(0).toLowerCase()}${issue.message.slice(1)}`}`,
    {
      hint: described
        ? `${missing ? 'give ' : ''}${String(issue.path[0])}: ${described}`
        : `fix ${field} and send it again`,
      details: { field },
    },
  );
}
export type RememberOp = z.infer<typeof RememberOp>;
export type ReviseOp = z.infer<typeof SupersedeOp> | z.infer<typeof CorrectOp>;
export type RetractOp = z.infer<typeof RetractOp>;
export type LinkOp = z.infer<typeof LinkOp>;
export type ImportOp = z.infer<typeof ImportOp>;
export type ProposeOp = z.infer<typeof ProposeOp>;
export type DecideOp = z.infer<typeof DecideOp>;
export type ExternalEditOp = z.infer<typeof ExternalEditOp>;
export type RevalidateOp = z.infer<typeof RevalidateOp>;
export type QuarantineOp = z.infer<typeof QuarantineOp>;

/** Ops only a person on a human surface may apply (invariant 9). */
export const HUMAN_ONLY_OPS = new Set(['confirm', 'release', 'lift', 'decide', 'set_passphrase']);

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
  /** check_source: the freshness observed (journaled only when it moved). */
  freshness?: string;
  /** A proposal opened by this op (conflict, quarantine, external edit, or propose). */
  proposal?: string;
}
