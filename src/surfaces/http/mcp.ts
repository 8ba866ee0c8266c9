// MCP over Streamable HTTP at /mcp: the SDK's web-standard transport in stateless JSON mode, one
// MCP server per request over the engine bound when `mneme serve` started (surface 'agent'), or
// with `--db` one bound to the token's tenant and first allowed project (else global). The
// same auth, Host and body-size checks as the API run before it.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import { MnemeError } from '../../core/errors.js';
import type { Engine } from '../../engine/engine.js';
import { createMcpServer } from '../mcp/server.js';
import { mayRead, type Caller } from './auth.js';
import type { HttpEnv } from './context.js';

export function mcpRoutes(
  engineOf: (caller: Caller) => Engine,
  log: (line: string) => void,
): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.all('/', async (c) => {
    const caller = c.get('caller');
    const engine = engineOf(caller);
    const project = engine.binding.project;
    if (project && !mayRead(caller, project))
      throw new MnemeError('refused', `this token may not read project ${project}`);
    const server = createMcpServer(engine, {
      onInternalError: (e) => log(`mcp internal error: ${(e as Error).stack ?? String(e)}`),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  });
  return app;
}
