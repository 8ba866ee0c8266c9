// One schema per payload, seen from the documents: every surface's description of a write or a
// recall is derived from the engine's schemas (engine/payloads.ts), never hand-copied. The MCP tool
// list (read through the SDK's own client over stdio) carries the engine's schemas inlined, with
// no `$ref` anywhere; the OpenAPI document's request bodies and recall parameters are those
// schemas' JSON form; the CLI's options are one per field. And Engine.apply takes typed ops.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import { LIMITS } from '../src/core/limits.js';
import type { OpInput } from '../src/engine/engine.js';
import { RecallInput, WRITES, type WriteVerb } from '../src/engine/payloads.js';
import { OPENAPI } from '../src/surfaces/http/openapi.js';
import { jsonSchemaOf } from '../src/surfaces/json-schema.js';
import { BIN, cli, gitRepo, tmpDir } from './helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON documents */
type Json = any;

const VERBS = Object.keys(WRITES) as WriteVerb[];
const without = (o: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

describe('MCP tool input schemas (listed by the SDK client over stdio)', () => {
  let dir: string;
  let repo: string;
  let tools: Json[];
  before(async () => {
    dir = tmpDir('mneme-schemas-');
    repo = gitRepo('git@github.com:acme/schemas.git');
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env))
      if (v !== undefined && !/^(CLAUDE_?CODE|CODEX_|MNEME_)/.test(k)) env[k] = v;
    const client = new Client({ name: 'schemas', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp'],
        cwd: repo,
        env: { ...env, MNEME_HOME: path.join(dir, 'store'), MNEME_DURABLE: '0' },
        stderr: 'pipe',
      }),
    );
    try {
      tools = (await client.listTools()).tools;
    } finally {
      await client.close();
    }
  });
  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(repo, { recursive: true, force: true });
  });
  const tool = (name: string) => tools.find((t) => t.name === name)!;

  it('have no $ref anywhere, and carry every field of the engine’s schemas inlined', () => {
    assert.ok(tools.length >= 10, 'the tools were listed');
    for (const t of tools)
      assert.ok(!JSON.stringify(t.inputSchema).includes('"$ref"'), `${t.name} has no $ref`);
    // The twin: the fields are there, nested ones spelled out where a $ref would have been.
    const remember = tool('remember').inputSchema;
    for (const f of ['type', 'abstract', 'source', 'links', 'global', 'valid_from', 'valid_to'])
      assert.ok(remember.properties[f], `remember takes ${f}`);
    assert.deepEqual(remember.properties.links.items.properties.rel.enum, [
      'supersedes',
      'derived_from',
      'contradicts',
      'relates_to',
    ]);
    assert.equal(remember.properties.valid_to.anyOf[0].maxLength, LIMITS.isoChars);
    for (const verb of ['supersede', 'correct'])
      for (const f of ['id', 'source', 'links', 'expected_rev'])
        assert.ok(tool(verb).inputSchema.properties[f], `${verb} takes ${f}`);
    assert.equal(tool('recall').inputSchema.properties.limit.maximum, LIMITS.recallLimit);
    // What the listing used before (the SDK's converter, default options) refers instead: a
    // schema used twice (the date of valid_from and valid_to) becomes a $ref. The check bites.
    assert.ok(JSON.stringify(toJsonSchemaCompat(WRITES.remember)).includes('"$ref"'));
  });

  it('are the engine’s write and recall schemas, not copies', () => {
    for (const verb of VERBS) assert.deepEqual(tool(verb).inputSchema, jsonSchemaOf(WRITES[verb]));
    assert.deepEqual(tool('recall').inputSchema, jsonSchemaOf(RecallInput));
  });
});

describe('the OpenAPI document', () => {
  const routes: Record<WriteVerb, [string, string[]]> = {
    // The fields a request carries in its path and headers instead of its body.
    remember: ['/api/memories', ['idempotency_key']],
    supersede: ['/api/memories/{id}/supersede', ['id', 'expected_rev', 'idempotency_key']],
    correct: ['/api/memories/{id}/correct', ['id', 'expected_rev', 'idempotency_key']],
    retract: ['/api/memories/{id}/retract', ['id', 'expected_rev', 'idempotency_key']],
    link: ['/api/memories/{id}/link', ['id', 'expected_rev', 'idempotency_key']],
  };
  const paths = OPENAPI.paths as Json;

  it('documents each write body as the engine’s schema (less what the URL and headers carry)', () => {
    for (const verb of VERBS) {
      const [route, carried] = routes[verb];
      const body = paths[route].post.requestBody.content['application/json'].schema;
      const engine = jsonSchemaOf(WRITES[verb]) as Json;
      assert.deepEqual(
        without(body.properties, ['project']),
        without(engine.properties, carried),
        `${verb}: the body's fields are the engine's`,
      );
      assert.deepEqual(
        body.required ?? [],
        (engine.required ?? []).filter((f: string) => !carried.includes(f)),
        `${verb}: required`,
      );
      assert.equal(body.additionalProperties, false, `${verb}: unknown fields refused`);
      assert.ok(body.properties.project, `${verb}: the project is chosen in the body too`);
      // What the URL and headers carry is documented there.
      const params = paths[route].post.parameters.map((p: Json) => p.name);
      if (carried.includes('id')) assert.ok(params.includes('id'));
      assert.ok(params.includes('Idempotency-Key'));
    }
    // HTTP had drifted (no source, links or global); now it has what the engine takes.
    const remember = paths['/api/memories'].post.requestBody.content['application/json'].schema;
    for (const f of ['source', 'links', 'global']) assert.ok(remember.properties[f], f);
  });

  it('documents the recall parameters as the engine’s recall schema', () => {
    const params: Json[] = paths['/api/recall'].get.parameters;
    const shape = RecallInput.shape as Record<string, Json>;
    for (const [field, schema] of Object.entries(shape)) {
      const name = field === 'query' ? 'q' : field;
      const p = params.find((x) => x.name === name);
      assert.ok(p, `recall documents ${name}`);
      assert.deepEqual(p.schema, jsonSchemaOf(schema.isOptional() ? schema.unwrap() : schema));
      assert.equal(p.required, !schema.isOptional(), `${name} required`);
    }
    const limit = params.find((x) => x.name === 'limit');
    assert.equal(limit.schema.maximum, LIMITS.recallLimit, 'one limit on every surface');
  });
});

describe('the CLI', () => {
  const help = (args: string[]) => {
    const home = tmpDir('mneme-help-');
    try {
      const r = cli([...args, '--help'], { home });
      assert.equal(r.code, 0, r.stderr);
      return r.stdout;
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  };

  it('offers one option per field of the engine’s schemas, described by them', () => {
    const remember = help(['remember']);
    for (const flag of [
      '--type',
      '--abstract',
      '--body',
      '--field',
      '--tag',
      '--link',
      '--valid-from',
      '--valid-to',
      '--applies-to',
      '--source',
      '--global',
      '--reason',
      '--idempotency-key',
    ])
      assert.ok(remember.includes(flag), `remember ${flag}`);
    assert.ok(remember.includes(WRITES.remember.shape.source.description!.slice(0, 40)));
    assert.ok(!remember.includes('--provenance'), 'what only the engine sets is not offered');
    const supersede = help(['supersede']);
    for (const flag of ['--source', '--link', '--expected-rev'])
      assert.ok(supersede.includes(flag), `supersede ${flag}`);
    const link = help(['link']);
    for (const flag of ['--rel', '--target']) assert.ok(link.includes(flag), `link ${flag}`);
    const recall = help(['recall']);
    for (const flag of ['--limit', '--as-of', '--known-at', '--explain', '--min-trust'])
      assert.ok(recall.includes(flag), `recall ${flag}`);
    assert.ok(recall.includes(`at most ${LIMITS.recallLimit}`));
  });
});

describe('Engine.apply', () => {
  it('takes ops typed by the schema', () => {
    const good: OpInput = { op: 'remember', type: 'fact', abstract: 'typed' };
    // @ts-expect-error -- a field the schema does not have is a type error, not a runtime surprise
    const bad: OpInput = { op: 'remember', type: 'fact', abstract: 'x', trust: 'confirmed' };
    assert.ok(good && bad);
  });
});
