// docs/api.md, generated from the OpenAPI document (`npm run docs:api`). A test checks the
// committed file matches, so the reference cannot drift from the routes' document.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OPENAPI } from './openapi.js';

type Any = Record<string, unknown>;

const schemaLine = (s: Any | undefined): string => {
  if (!s) return '';
  if (typeof s.$ref === 'string') return s.$ref.split('/').pop()!;
  if (Array.isArray(s.enum)) return (s.enum as string[]).join(' \\| ');
  if (Array.isArray(s.anyOf)) return (s.anyOf as Any[]).map(schemaLine).join(' \\| ');
  if (s.type === 'array' && s.items) return `${schemaLine(s.items as Any)}[]`;
  return String(s.type ?? '');
};

export function renderApiMarkdown(): string {
  const out: string[] = [
    '# HTTP API reference',
    '',
    '<!-- Generated from src/surfaces/http/openapi.ts by `npm run docs:api`; do not edit by hand. -->',
    '',
    OPENAPI.info.description,
    '',
    'The OpenAPI 3.1 document is served at `GET /api/openapi.json`. Errors are `{"error": {"code", "message", "hint"?}}`:',
    '',
    '| code | status |',
    '| --- | --- |',
    '| invalid | 400 (413 for a body over the limit) |',
    '| not_found | 404 |',
    '| conflict | 409 |',
    '| refused | 403 (401 when the bearer token is missing or wrong) |',
    '| locked | 503 |',
    '| corrupt, internal | 500 |',
    '',
  ];
  for (const [p, methods] of Object.entries(OPENAPI.paths)) {
    for (const [method, op] of Object.entries(methods as unknown as Record<string, Any>)) {
      out.push(`## ${method.toUpperCase()} ${p}`, '', String(op.summary), '');
      if (op.description) out.push(String(op.description), '');
      const params = (op.parameters ?? []) as Any[];
      if (params.length) {
        out.push(
          '| parameter | in | type | required | description |',
          '| --- | --- | --- | --- | --- |',
        );
        for (const x of params)
          out.push(
            `| \`${x.name}\` | ${x.in} | ${schemaLine(x.schema as Any)} | ${x.required ? 'yes' : 'no'} | ${x.description} |`,
          );
        out.push('');
      }
      const rb = op.requestBody as { content: { 'application/json': { schema: Any } } } | undefined;
      if (rb) {
        const s = rb.content['application/json'].schema;
        const req = new Set((s.required ?? []) as string[]);
        out.push(
          'Body (JSON, unknown fields refused):',
          '',
          '| field | type | required | description |',
          '| --- | --- | --- | --- |',
        );
        for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Any>))
          out.push(
            `| \`${k}\` | ${schemaLine(v)} | ${req.has(k) ? 'yes' : 'no'} | ${v.description ?? ''} |`,
          );
        out.push('');
      }
      out.push('Responses:', '');
      for (const [code, r] of Object.entries(op.responses as Record<string, Any>))
        out.push(`- \`${code}\` ${r.description}`);
      out.push('');
    }
  }
  return out.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = process.argv[2];
  if (target) fs.writeFileSync(target, renderApiMarkdown());
  else process.stdout.write(renderApiMarkdown());
}
