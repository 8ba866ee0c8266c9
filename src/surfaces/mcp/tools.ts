// The MCP tool list: each tool is a strict zod input schema and a handler over the engine. The
// recall and write tools take the engine's own payload schemas (engine/payloads.ts). Writes
// go through engine.apply with an agent actor. No tool takes a scope: the engine was bound to one
// project when the server started. No tool accepts proposals, confirms, lifts tombstones or sets
// trust — those are human decisions and are not reachable from here.
import { z } from 'zod';
import { LIMITS } from '../../core/limits.js';
import { handle } from '../../core/revision.js';
import type { Actor } from '../../core/types.js';
import type { Engine } from '../../engine/engine.js';
import {
  RecallInput,
  TYPE_NAMES,
  WRITES,
  parsePayload,
  recallOptions,
  writeOp,
} from '../../engine/payloads.js';
import type { SessionStore } from '../compose.js';

export interface ToolDef {
  name: string;
  description: string;
  input: z.AnyZodObject;
  readOnly: boolean;
  run: (args: Record<string, unknown>, actor: Actor) => Promise<object>;
}

const id = z.string().min(1).max(LIMITS.idChars).describe('a memory id, e.g. mem_01J…');

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
      RecallInput,
      true,
      (a, actor) => engine.recall(a.query, recallOptions(a, actor)),
    ),
    define(
      'read',
      'Open one memory at the depth needed: abstract, outline (headings) or full (default); level artifact returns the large file kept beside it, one page (up to 1 MiB) at a time: text as utf8, other bytes as base64, with `next` naming the range of the following page.',
      z
        .object({
          id,
          level: z.enum(['abstract', 'outline', 'full', 'artifact']).optional(),
          range: z
            .string()
            .max(40)
            .optional()
            .describe(
              'with level artifact: bytes A-B (both included) or A- (from A); default the first page',
            ),
        })
        .strict(),
      true,
      (a) =>
        a.level === 'artifact'
          ? engine.readArtifact(a.id, a.range)
          : engine.read(a.id, a.level ?? 'full'),
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
      `Store a new memory in this project (or in the global scope with global: true). type is one of ${TYPE_NAMES}. Write one memory per durable fact, decision or rule worth knowing in a later session; not transient task state.`,
      WRITES.remember,
      false,
      async (a, actor) => withHandle(await first(engine.apply([writeOp('remember', a)], actor))),
    ),
    define(
      'supersede',
      'Record that a fact changed: a new revision replaces the memory from valid_from (default now); the old value stays in history as what held before.',
      WRITES.supersede,
      false,
      async (a, actor) => withHandle(await first(engine.apply([writeOp('supersede', a)], actor))),
    ),
    define(
      'correct',
      'Fix a value that was wrong all along: a new revision replaces it and the old value is marked rejected.',
      WRITES.correct,
      false,
      async (a, actor) => withHandle(await first(engine.apply([writeOp('correct', a)], actor))),
    ),
    define(
      'retract',
      'Withdraw a memory: it leaves every read path and stays in history. With reject: true the value was wrong and may not be written again.',
      WRITES.retract,
      false,
      async (a, actor) => withHandle(await first(engine.apply([writeOp('retract', a)], actor))),
    ),
    define(
      'link',
      'Relate one memory to another: derived_from, contradicts or relates_to.',
      WRITES.link,
      false,
      async (a, actor) => withHandle(await first(engine.apply([writeOp('link', a)], actor))),
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
          // Which store this server writes to (the directory, or the database and tenant).
          store: s.location,
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

/** Boundary validation with the tool's schema: the engine's one refusal shape on failure. */
export const parseArgs = (tool: ToolDef, args: unknown): Record<string, unknown> =>
  parsePayload(tool.input, args ?? {}, tool.name);
