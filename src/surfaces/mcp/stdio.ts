// `mneme mcp`: the MCP server over stdio. The project is bound once, from the directory the
// client started us in; stdout belongs to the protocol, so diagnostics go to stderr only.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { FileStore } from '../../store/files/file-store.js';
import { SessionFiles } from '../../store/files/session-files.js';
import { openEngine } from '../open.js';
import { createMcpServer } from './server.js';

export interface StdioOptions {
  store?: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  stderr: (s: string) => void;
}

/** Serves until the client closes stdin; resolves when the server has shut down. */
export async function serveStdio(o: StdioOptions): Promise<void> {
  const engine = await openEngine({ store: o.store, cwd: o.cwd, env: o.env, surface: 'agent' });
  const store = engine.ctx.store;
  const server = createMcpServer(engine, {
    session: o.env.MNEME_SESSION || undefined,
    sessions: store instanceof FileStore ? new SessionFiles(store.layout.root) : null,
    onInternalError: (e) => o.stderr(`mneme mcp: internal error: ${(e as Error).stack ?? e}\n`),
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    process.stdin.once('end', () => void server.close());
  });
  await server.connect(transport);
  try {
    await closed;
  } finally {
    await engine.close();
  }
}
