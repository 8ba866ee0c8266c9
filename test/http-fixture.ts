// A hono app over a real file store for in-process HTTP tests (`app.request`), and a server
// listening on 127.0.0.1:0 for the MCP and browser tests.
import fs from 'node:fs';
import path from 'node:path';
import { SchemaRegistry } from '../src/core/schema.js';
import { Engine } from '../src/engine/engine.js';
import { FileStore } from '../src/store/files/file-store.js';
import { createApp, type AppOptions } from '../src/surfaces/http/app.js';
import { Sessions } from '../src/surfaces/http/session.js';
import { testClock, tmpDir } from './helpers.js';

export async function httpFixture(extra: Partial<AppOptions> = {}) {
  const dir = tmpDir('mneme-http-');
  const store = await FileStore.open(dir, { durable: false });
  const clock = testClock('2026-03-01T10:00:00.000Z');
  const registry = new SchemaRegistry();
  const sessions = new Sessions();
  const logs: string[] = [];
  // Each request moves time on a minute, so a successor always starts after its predecessor.
  const engineFor: AppOptions['engineFor'] = ({ binding, surface }) => {
    clock.advance(60_000);
    return new Engine({ store, clock, registry, binding, surface });
  };
  const app = createApp({
    engineFor,
    sessions,
    reportsDir: path.join(dir, 'reports'),
    log: (l) => logs.push(l),
    ...extra,
  });
  const engine = (project: string | null, surface: 'human' | 'agent' = 'human') =>
    engineFor({ binding: { project, identity: project }, surface, tenant: null });
  return {
    dir,
    store,
    clock,
    app,
    sessions,
    logs,
    engine,
    async close() {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const jsonPost = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json', ...headers },
  body: JSON.stringify(body),
});
