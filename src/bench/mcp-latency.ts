// Benchmark (not a test): MCP `recall` round-trip latency with the SDK client, in-process over
// InMemoryTransport and over real stdio (`node bin/mneme.js mcp`), against a store of N memories.
// Usage: node dist/src/bench/mcp-latency.js [--n 1000] [--iterations 200] [--out result.json]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { mnemeBin } from '../surfaces/install-root.js';
import { createMcpServer } from '../surfaces/mcp/server.js';
import { openEngine } from '../surfaces/compose.js';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '1000' },
    iterations: { type: 'string', default: '200' },
    out: { type: 'string' },
  },
});
const N = Number(values.n);
const ITER = Number(values.iterations);

const WORDS = (
  'billing invoice rounding deploy staging database migration schema auth token session cache ' +
  'queue retry timeout logging metrics alert release tag branch review lint format test fixture ' +
  'payment refund currency tax region tenant quota limit index search vector embedding config'
).split(' ');
const pick = (i: number, k: number) => WORDS[(i * 7 + k * 13) % WORDS.length]!;

const env = { ...process.env, MNEME_DURABLE: '0' } as Record<string, string>;

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function measure(client: Client): Promise<{ p50: number; p95: number; mean: number }> {
  const times: number[] = [];
  for (let i = 0; i < ITER + 20; i++) {
    const t0 = process.hrtime.bigint();
    const r = await client.callTool({
      name: 'recall',
      arguments: { query: `${pick(i, 1)} ${pick(i, 2)}`, limit: 10 },
    });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.isError) throw new Error(JSON.stringify(r.content));
    if (i >= 20) times.push(ms); // the first 20 warm caches and the JIT
  }
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    p50: round(percentile(times, 50)),
    p95: round(percentile(times, 95)),
    mean: round(times.reduce((a, b) => a + b, 0) / times.length),
  };
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-bench-mcp-'));
  const store = path.join(tmp, 'store');
  const repo = path.join(tmp, 'repo');
  fs.mkdirSync(repo);
  execFileSync('git', ['init', '-q', repo]);
  execFileSync('git', [
    '-C',
    repo,
    'remote',
    'add',
    'origin',
    'https://example.com/acme/bench.git',
  ]);
  try {
    const seed = await openEngine({ store, cwd: repo, env, surface: 'human' });
    const t0 = Date.now();
    const ops = Array.from({ length: N }, (_, i) => ({
      op: 'remember' as const,
      type: 'fact',
      abstract: `The ${pick(i, 1)} ${pick(i, 2)} setting for ${pick(i, 3)} is value ${i}`,
      body: `Detail about ${pick(i, 4)} and ${pick(i, 5)} (${i}).`,
      fields: { subject: `${pick(i, 1)} ${pick(i, 2)} ${i}` },
    }));
    for (let i = 0; i < ops.length; i += 100)
      await seed.applyEach(ops.slice(i, i + 100), { kind: 'system', surface: 'bench' });
    await seed.close();
    const seedMs = Date.now() - t0;

    const engine = await openEngine({ store, cwd: repo, env, surface: 'agent' });
    const [ct, st] = InMemoryTransport.createLinkedPair();
    const server = createMcpServer(engine);
    await server.connect(st);
    const mem = new Client({ name: 'bench', version: '1' });
    await mem.connect(ct);
    const inMemory = await measure(mem);
    await mem.close();
    await server.close();
    await engine.close();

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [mnemeBin(), 'mcp'],
      cwd: repo,
      env: { ...env, MNEME_HOME: store },
    });
    const stdio = new Client({ name: 'bench', version: '1' });
    const c0 = Date.now();
    await stdio.connect(transport);
    const startupMs = Date.now() - c0;
    const overStdio = await measure(stdio);
    await stdio.close();

    const result = {
      bench: 'mcp-recall-latency',
      at: new Date().toISOString(),
      memories: N,
      iterations: ITER,
      node: process.version,
      cpus: os.cpus().length,
      seed_ms: seedMs,
      in_memory_ms: inMemory,
      stdio_ms: { ...overStdio, startup_to_initialized: startupMs },
    };
    const text = `${JSON.stringify(result, null, 2)}\n`;
    process.stdout.write(text);
    if (values.out) fs.writeFileSync(values.out, text);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
