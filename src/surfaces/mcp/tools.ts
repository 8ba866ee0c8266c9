// The MCP tool list: each tool is a strict zod input schema and a handler over the engine. Writes
// go through engine.apply with an agent actor. No tool takes a scope: the engine was bound to one
// project when the server started. No tool accepts proposals, confirms, lifts tombstones or sets
// trust — those are human decisions and are not reachable from here.
import { z } from 'zod';
import { MnemeError } from '../../core/errors.js';
import { handle } from '../../core/revision.js';
import type { Actor } from '../../core/types.js';
import type { Engine } from '../../engine/engine.js';
import type { SessionStore } from '../compose.js';

export interface ToolDef {
  name: string;
  description: string;
  input: z.AnyZodObject;
  readOnly: boolean;
  run: (args: Record<string, unknown>, actor: Actor) => Promise<object>;
}

const id = z.string().min(1).max(200).describe('a memory id, e.g. mem_01J…');
const iso = z.string().max(64);
const reason = z.string().max(2000).optional().describe('why (recorded in the journal)');
const idempotencyKey = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe('replaying the same request with this key returns the first result');
const expectedRev = z
  .number()
  .int()
  .positive()
  .optional()
  .describe('refuse if the memory has moved past this revision');

const content = {
  abstract: z.string().describe('one line (≤ 240 chars): what gets searched and injected'),
  body: z.string().optional().describe('Markdown detail'),
  fields: z
    .record(z.string())
    .optional()
    .describe('schema fields, e.g. {"subject": "billing"}; the subject names what it is about'),
  tags: z.array(z.string()).optional(),
  valid_from: iso.optional().describe('ISO date/time the fact started to hold (default now)'),
  valid_to: iso.nullable().optional().describe('ISO date/time the fact stopped holding'),
  applies_to: z
    .array(z.string())
    .optional()
    .describe('file globs this applies to, e.g. ["src/billing/**"]'),
  reason,
  idempotency_key: idempotencyKey,
};

const TYPES =
  'decision, constraint, procedure, fact, preference, lesson, incident, reference, event or profile';

function define<S extends z.AnyZodObject>(
  name: string,
  description: string,
  input: S,
  readOnly: boolean,
  run: (args: z.infer<S>, actor: Actor) => Promise<object>,
): ToolDef {
  return { name, description, input, readOnly, run: run as ToolDef['run'] };
}

const first = async <T>(p: Promise<T[]>): Promise<T> => (await p)[0]!;
const withHandle = <T extends { id: string }>(r: T) => ({ ...r, handle: handle(r.id) });

export function buildTools(engine: Engine, sessions: SessionStore | null = null): ToolDef[] {
  return [
    define(
      'recall',
      'Search the memories of this project and the global scope. Returns the best eligible matches (current, in scope, valid) as one-line abstracts with [mem:ID] handles; cite a memory by its handle when you use it. explain adds score parts and what matched but was not served, and why.',
      z
        .object({
          query: z.string().min(1).max(2000).describe('what to look for'),
          limit: z.number().int().min(1).max(50).optional().describe('how many results (10)'),
          as_of: iso.optional().describe('what held at this time (validity time)'),
          known_at: iso.optional().describe('what the store believed at this time'),
          explain: z.boolean().optional(),
        })
        .strict(),
      true,
      (a, actor) =>
        engine.recall(a.query, {
          limit: a.limit ?? 10,
          asOf: a.as_of,
          knownAt: a.known_at,
          explain: a.explain,
          actor,
        }),
    ),
    define(
      'read',
      'Open one memory at the depth needed: abstract, outline (headings) or full (default).',
      z.object({ id, level: z.enum(['abstract', 'outline', 'full']).optional() }).strict(),
      true,
      (a) => engine.read(a.id, a.level ?? 'full'),
    ),
    define(
      'trace',
      'Where a memory came from: each revision with its actor and provenance pointers, and the journal entries that touched it.',
      z.object({ id }).strict(),
      true,
      (a) => engine.trace(a.id as string, sessions),
    ),
    define(
      'history',
      'Every revision of a memory, oldest first, with its status, trust, validity and who wrote it.',
      z.object({ id }).strict(),
      true,
      (a) => engine.history(a.id),
    ),
    define(
      'remember',
      `Store a new memory in this project (or in the global scope with global: true). type is one of ${TYPES}. Write one memory per durable fact, decision or rule worth knowing in a later session; not transient task state.`,
      z
        .object({
          type: z.string().min(1).max(40).describe(TYPES),
          ...content,
          global: z
            .boolean()
            .optional()
            .describe('store in the global scope (true for facts about the user, not the project)'),
        })
        .strict(),
      false,
      async (a, actor) => withHandle(await first(engine.apply([{ op: 'remember', ...a }], actor))),
    ),
    define(
      'supersede',
      'Record that a fact changed: a new revision replaces the memory from valid_from (default now); the old value stays in history as what held before.',
      z
        .object({
          id,
          expected_rev: expectedRev,
          ...content,
          abstract: content.abstract.optional(),
        })
        .strict(),
      false,
      async (a, actor) => withHandle(await first(engine.apply([{ op: 'supersede', ...a }], actor))),
    ),
    define(
      'correct',
      'Fix a value that was wrong all along: a new revision replaces it and the old value is marked rejected.',
      z
        .object({
          id,
          expected_rev: expectedRev,
          ...content,
          abstract: content.abstract.optional(),
        })
        .strict(),
      false,
      async (a, actor) => withHandle(await first(engine.apply([{ op: 'correct', ...a }], actor))),
    ),
    define(
      'retract',
      'Withdraw a memory: it leaves every read path and stays in history. With reject: true the value was wrong and may not be written again.',
      z
        .object({
          id,
          reject: z.boolean().optional(),
          reason,
          expected_rev: expectedRev,
          idempotency_key: idempotencyKey,
        })
        .strict(),
      false,
      async (a, actor) => withHandle(await first(engine.apply([{ op: 'retract', ...a }], actor))),
    ),
    define(
      'link',
      'Relate one memory to another: derived_from, contradicts or relates_to.',
      z
        .object({
          id,
          rel: z.enum(['derived_from', 'contradicts', 'relates_to']),
          target: id.describe('the other memory id'),
          reason,
          expected_rev: expectedRev,
          idempotency_key: idempotencyKey,
        })
        .strict(),
      false,
      async (a, actor) => withHandle(await first(engine.apply([{ op: 'link', ...a }], actor))),
    ),
    define(
      'feedback',
      'Say whether a memory you were shown helped (useful: true) or not (false). Recorded as a usage event that feeds its ranking weight; it does not change the memory.',
      z.object({ id, useful: z.boolean() }).strict(),
      false,
      async (a, actor) => {
        const { at } = await engine.feedback(a.id, a.useful, actor);
        return { id: a.id, handle: handle(a.id), useful: a.useful, recorded_at: at };
      },
    ),
    define(
      'status',
      'Which project this server is bound to and what it and the global scope hold.',
      z.object({}).strict(),
      true,
      async () => {
        const s = await engine.status();
        return {
          project: s.project,
          identity: s.identity,
          scopes: s.scopes,
          memories: s.memories,
          activeMemories: s.activeMemories,
          revisions: s.revisions,
          byType: s.byType,
          backend: s.backend,
        };
      },
    ),
  ];
}

/** Boundary validation: a discriminated result, turned into a domain error by the caller. */
export function parseArgs(tool: ToolDef, args: unknown): Record<string, unknown> {
  const r = tool.input.safeParse(args ?? {});
  if (r.success) return r.data as Record<string, unknown>;
  const issues = r.error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`)
    .join('; ');
  throw new MnemeError('invalid', `invalid arguments for ${tool.name}: ${issues}`, {
    hint: `pass only the arguments listed in the ${tool.name} tool's input schema`,
  });
}
