// A zod schema's JSON Schema form, as the MCP tool listing and the OpenAPI document show it. Fully
// inlined: no `$ref` (some MCP clients send a tool's schema to a model API unchanged, and those
// refuse references), and no `$schema` header. One conversion, so the two cannot differ.
import type { z } from 'zod';
import { zodToJsonSchema } from 'zod-to-json-schema';

export type JsonSchema = Record<string, unknown>;

export function jsonSchemaOf(schema: z.ZodTypeAny): JsonSchema {
  const json = zodToJsonSchema(schema, { $refStrategy: 'none' }) as JsonSchema;
  delete json.$schema;
  return json;
}
