// `mneme mcp`: the MCP server over stdio. The project is bound once, from the directory the
// client started us in; stdout belongs to the protocol, so diagnostics go to stderr only.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { openEngine } from '../compose.js';
import { loadSettings } from '../config/settings.js';
import type { StoreFlags } from '../open.js';
import { createMcpServer } from './server.js';

export interface StdioOptions extends StoreFlags {
  /** The vector arm's embedder (--embedder). */
  embedder?: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  stderr: (s: string) => void;
}

/** Serves until the client closes stdin; resolves when the server has shut down. */
export async function serveStdio(o: StdioOptions): Promise<void> {
  const flags = { store: o.store, db: o.db, tenant: o.tenant, config: o.config };
  const settings = loadSettings({ ...flags, embedder: o.embedder }, o.env);
  const engine = await openEngine({
    ...flags,
    settings,
    cwd: o.cwd,
    env: o.env,
    surface: 'agent',
  });
  const server = createMcpServer(engine, {
    session: settings.settings.mcp.session,
    // The session archive the hooks keep for this same store (trace resolves provenance in it).
    sessions: engine.archive(),
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
