// A real server on 127.0.0.1:0 over a fresh store (for the MCP round trip and browser tests).
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../src/surfaces/http/server.js';
import { gitRepo, tmpDir } from './helpers.js';

export async function liveServer() {
  const dir = tmpDir('mneme-live-');
  const home = path.join(dir, 'store');
  const repo = gitRepo('git@github.com:acme/shop.git');
  const logs: string[] = [];
  const server = await startServer({
    store: home,
    cwd: repo,
    env: { MNEME_DURABLE: '0' },
    host: '127.0.0.1',
    port: 0,
    log: (l) => logs.push(l),
  });
  return {
    ...server,
    home,
    repo,
    logs,
    async stop() {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(repo, { recursive: true, force: true });
    },
  };
}

/** The URL a `mneme serve` child prints once it listens; rejects if it exits first. */
export function servingUrl(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /mneme serving (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
}
