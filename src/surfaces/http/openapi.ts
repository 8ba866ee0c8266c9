// The API's OpenAPI 3.1 document, written as a typed object next to the routes it describes
// (api.ts). Request bodies and the recall parameters are not written here: they are the JSON form
// of the schemas the routes parse with (bodies.ts, from the engine's payload schemas). docs/api.md
// is generated from it (`npm run docs:api`); a test keeps the two in step.
import { z } from 'zod';
import { RecallInput } from '../../engine/payloads.js';
import { jsonSchemaOf } from '../json-schema.js';
import { BODIES, recallParam } from './bodies.js';

type Schema = Record<string, unknown>;
interface Param {
  name: string;
  in: 'query' | 'path' | 'header';
  required?: boolean;
  description: string;
  schema: Schema;
}
interface Operation {
  summary: string;
  description?: string;
  operationId: string;
  parameters?: Param[];
  requestBody?: { required: boolean; content: { 'application/json': { schema: Schema } } };
  responses: Record<string, { description: string; content?: Record<string, { schema: Schema }> }>;
}

const S = (type: string, description?: string, extra: Schema = {}): Schema => ({
  type,
  ...(description ? { description } : {}),
  ...extra,
});
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const q = (
  name: string,
  description: string,
  schema: Schema = S('string'),
  required = false,
): Param => ({
  name,
  in: 'query',
  required,
  description,
  schema,
});
const project = q(
  'project',
  'A project id (acme-shop-1a2b3c4d), an absolute repository path on the server, or on a team server (serve --db) a plain name (api). The caller reads that project and the global scope; absent means the global scope only.',
);
const idParam: Param = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'A memory id (mem_…).',
  schema: S('string'),
};
const ifMatch: Param = {
  name: 'If-Match',
  in: 'header',
  description: 'The revision the change is based on (e.g. "3"); a stale revision answers 409.',
  schema: S('string'),
};
const idemKey: Param = {
  name: 'Idempotency-Key',
  in: 'header',
  description:
    'Replaying a request with the same key returns the first result (header Idempotent-Replayed: true).',
  schema: S('string', undefined, { maxLength: 200 }),
};
const json = (schema: Schema, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});
const errors = {
  '400': json(ref('Error'), 'invalid: the request is malformed (fix the input)'),
  '403': json(
    ref('Error'),
    'refused: a rule forbids it (tombstone, human-only, token scope, cross-origin)',
  ),
  '404': json(ref('Error'), 'not_found: no such memory visible from this scope'),
  '409': json(
    ref('Error'),
    'conflict: stale If-Match revision, slug taken, idempotency key reused',
  ),
  '503': json(ref('Error'), 'locked: the store lock could not be taken in time; retry'),
};
const body = (schema: Schema) =>
  ({ required: true, content: { 'application/json': { schema } } }) as const;

/** A write's body: the JSON form of the schema the route parses with (bodies.ts). */
const writeBody = (verb: keyof typeof BODIES) => body(jsonSchemaOf(BODIES[verb]));

const sentence = (d: string) => `${d.charAt(0).toUpperCase()}${d.slice(1)}.`;

/** The recall options as query parameters, from the engine's recall schema. */
const recallParams: Param[] = Object.entries(RecallInput.shape).map(([field, schema]) => ({
  name: recallParam(field),
  in: 'query',
  required: !schema.isOptional(),
  description: sentence(schema.description ?? field),
  schema: jsonSchemaOf(schema instanceof z.ZodOptional ? schema.unwrap() : schema),
}));

const paths: Record<string, Record<string, Operation>> = {
  '/api/health': {
    get: {
      operationId: 'health',
      summary:
        'Liveness, version, store backend and (local caller only) journal head; without a token on a server that needs one, a probe: {ok} only',
      responses: {
        '200': json(S('object'), 'The server is up'),
        '503': json(S('object'), 'The server cannot reach its store (probe only)'),
      },
    },
  },
  '/api/projects': {
    get: {
      operationId: 'listProjects',
      summary: 'Projects in the store the caller may read, with memory counts',
      responses: { '200': json(S('object'), '{projects: [{id, memories}]}') },
    },
  },
  '/api/memories': {
    get: {
      operationId: 'listMemories',
      summary: 'Browse current memories (no query), newest first',
      parameters: [
        project,
        q('type', 'Only this type (decision, fact, …).'),
        q(
          'trust',
          'Only this trust level.',
          S('string', undefined, { enum: ['untrusted', 'claimed', 'verified', 'confirmed'] }),
        ),
        q(
          'status',
          'Only this status.',
          S('string', undefined, {
            enum: ['active', 'retracted', 'rejected', 'merged', 'quarantined', 'pending'],
          }),
        ),
        q(
          'freshness',
          'Only this source freshness.',
          S('string', undefined, { enum: ['unbound', 'fresh', 'drifted', 'missing', 'unchecked'] }),
        ),
        q('limit', 'At most this many (default 100, max 500).', S('integer')),
      ],
      responses: {
        '200': json(
          S('object', undefined, {
            properties: { memories: S('array', undefined, { items: ref('MemoryRow') }) },
          }),
          'The memories',
        ),
        ...errors,
      },
    },
    post: {
      operationId: 'remember',
      summary: 'Remember: store a new memory',
      description:
        'Unknown fields are refused (trust, for one, is assigned by the write path, never taken from the request).',
      parameters: [project, idemKey],
      requestBody: writeBody('remember'),
      responses: {
        '201': json(ref('ApplyResult'), 'Stored (Location and ETag headers set)'),
        ...errors,
      },
    },
  },
  '/api/memories/{id}': {
    get: {
      operationId: 'readMemory',
      summary: 'Read one memory (ETag is its revision)',
      parameters: [idParam, project, q('level', 'abstract, outline or full (default).')],
      responses: { '200': json(S('object'), 'The current revision'), ...errors },
    },
  },
  '/api/memories/{id}/artifact': {
    get: {
      operationId: 'readArtifact',
      summary:
        'One page (up to 1 MiB) of the large file kept beside a memory: text as utf8, other bytes as base64; `next` names the following range. Refused once the memory is retracted or forgotten, or its bytes were purged',
      parameters: [
        idParam,
        project,
        q('range', 'bytes A-B (both included) or A- (from A); default the first page'),
      ],
      responses: {
        '200': json(S('object'), '{id, rev, artifact, range, next, encoding, content}'),
        ...errors,
      },
    },
  },
  '/api/memories/{id}/history': {
    get: {
      operationId: 'history',
      summary: 'Every revision of a memory, oldest first',
      parameters: [idParam, project],
      responses: { '200': json(S('object'), '{id, revisions: [...]}'), ...errors },
    },
  },
  '/api/memories/{id}/trace': {
    get: {
      operationId: 'trace',
      summary:
        'Provenance: each revision’s pointers resolved (archived transcript lines) and the journal entries',
      parameters: [idParam, project],
      responses: { '200': json(S('object'), 'The trace'), ...errors },
    },
  },
  '/api/memories/{id}/supersede': {
    post: {
      operationId: 'supersede',
      summary: 'The fact changed: a new revision replaces the old from valid_from',
      parameters: [idParam, project, ifMatch, idemKey],
      requestBody: writeBody('supersede'),
      responses: { '200': json(ref('ApplyResult'), 'The new revision'), ...errors },
    },
  },
  '/api/memories/{id}/correct': {
    post: {
      operationId: 'correct',
      summary: 'The value was wrong: a new revision replaces it and the old one is rejected',
      parameters: [idParam, project, ifMatch, idemKey],
      requestBody: writeBody('correct'),
      responses: { '200': json(ref('ApplyResult'), 'The new revision'), ...errors },
    },
  },
  '/api/memories/{id}/retract': {
    post: {
      operationId: 'retract',
      summary:
        'Withdraw a memory; with reject the value was wrong and may not come back (tombstone)',
      parameters: [idParam, project, ifMatch, idemKey],
      requestBody: writeBody('retract'),
      responses: { '200': json(ref('ApplyResult'), 'Retracted'), ...errors },
    },
  },
  '/api/memories/{id}/purge': {
    post: {
      operationId: 'purge',
      summary:
        'Always refused (403): purging erases a value from every byte of the store and is a person’s decision in a terminal, `mneme purge ID --reason TEXT`, never an API call',
      parameters: [idParam, project],
      responses: {
        '403': json(
          ref('Error'),
          'refused: purging is not possible over the API; the hint says where to do it',
        ),
      },
    },
  },
  '/api/memories/{id}/link': {
    post: {
      operationId: 'link',
      summary: 'Relate a memory to another: derived_from, contradicts or relates_to',
      parameters: [idParam, project, ifMatch, idemKey],
      requestBody: writeBody('link'),
      responses: { '200': json(ref('ApplyResult'), 'The new revision'), ...errors },
    },
  },
  '/api/recall': {
    get: {
      operationId: 'recall',
      summary:
        'Search: eligible memories only, ranked; explain adds score parts and the exclusion trace',
      parameters: [...recallParams, project],
      responses: { '200': json(S('object'), '{query, results, excluded?}'), ...errors },
    },
  },
  '/api/proposals': {
    get: {
      operationId: 'listProposals',
      summary: 'The review queue (read-only; decisions are made in the dashboard by a person)',
      parameters: [project, q('state', 'pending (default), accepted, rejected or all.')],
      responses: { '200': json(S('object'), '{proposals: [...]}'), ...errors },
    },
  },
  '/api/journal': {
    get: {
      operationId: 'journal',
      summary: 'The hash-chained journal, newest first, with the chain’s verification status',
      parameters: [
        project,
        q('actor', 'Only entries by this kind of actor (human, agent, …).'),
        q('op', 'Only this operation (remember, decide, refuse, …).'),
        q('id', 'Only entries about this memory.'),
        q('limit', 'At most this many (default 100, max 1000).', S('integer')),
      ],
      responses: {
        '200': json(S('object'), '{entries, chain: {ok, entries, head, firstBad}}'),
        ...errors,
      },
    },
  },
  '/api/tombstones': {
    get: {
      operationId: 'tombstones',
      summary: 'Armed tombstones (rejected values) of the scope',
      parameters: [project],
      responses: { '200': json(S('object'), '{tombstones: [...]}'), ...errors },
    },
  },
  '/api/reports': {
    get: {
      operationId: 'listReports',
      summary: 'Sleep and fsck reports under <store>/reports, newest first',
      responses: {
        '200': json(S('object'), '{reports: [{name, kind, size, modified}]}'),
        ...errors,
      },
    },
  },
  '/api/reports/{name}': {
    get: {
      operationId: 'readReport',
      summary: 'One report, as text',
      parameters: [
        {
          name: 'name',
          in: 'path',
          required: true,
          description: 'The report’s relative name.',
          schema: S('string'),
        },
      ],
      responses: {
        '200': {
          description: 'The report text',
          content: { 'text/plain': { schema: S('string') } },
        },
        ...errors,
      },
    },
  },
};

export const OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'mneme HTTP API',
    version: '1',
    description:
      'The engine’s read and write operations as JSON. Loopback by default (a request without a token may come from any local process, so its writes are recorded as agent/http-local and cannot overturn a value a person confirmed); any other bind needs `Authorization: Bearer <token>` on every request (recorded as agent/http). State-changing requests from another origin are refused; there are no CORS headers. Bodies are limited to 1 MiB (413). Review decisions are not part of this API: they are made by a person in the dashboard.',
  },
  components: {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    schemas: {
      Error: {
        type: 'object',
        required: ['error'],
        properties: {
          error: {
            type: 'object',
            required: ['code', 'message'],
            properties: {
              code: S('string', undefined, {
                enum: [
                  'invalid',
                  'not_found',
                  'conflict',
                  'refused',
                  'locked',
                  'corrupt',
                  'internal',
                ],
              }),
              message: S('string'),
              hint: S('string', 'What to do about it.'),
            },
          },
        },
      },
      ApplyResult: {
        type: 'object',
        required: ['op', 'id', 'rev'],
        properties: {
          op: S('string'),
          id: S('string'),
          rev: S('integer'),
          seq: S('integer', 'Journal sequence number.'),
          replayed: S('boolean'),
          unchanged: S('boolean'),
          trust: S('string'),
          quarantined: S('boolean'),
          redacted: S('array', undefined, { items: S('string') }),
          proposal: S('string', 'A proposal this write opened (e.g. a conflict).'),
        },
      },
      MemoryRow: {
        type: 'object',
        properties: {
          id: S('string'),
          rev: S('integer'),
          type: S('string'),
          scope: S('string'),
          abstract: S('string'),
          trust: S('string'),
          status: S('string'),
          review: S('string'),
          freshness: S('string'),
          valid_from: S('string'),
          valid_to: S('string'),
          recorded_at: S('string'),
        },
      },
    },
  },
  security: [{}, { bearer: [] }],
  paths,
} as const;
