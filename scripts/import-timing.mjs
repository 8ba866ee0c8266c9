// Benchmark (not a test): `mneme import` of a bundle, chunked (the default, 500 ops per
// applyEach) beside one applyEach per lineage (chunkOps 1, the old way), each into a fresh store
// in a fresh child process; wall and CPU seconds and the journal's size. The bundle is exported
// from STORE (e.g. one seeded by scripts/write-profile.mjs).
//   node scripts/import-timing.mjs run TREE STORE [--durable] [--out FILE]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [mode, tree, store, ...rest] = process.argv.slice(2);
const durable = rest.includes('--durable');
const open = async (dir) => {
  const { openEngine } = await import(
    pathToFileURL(path.join(tree, 'dist', 'src', 'surfaces', 'compose.js')).href
  );
  return openEngine({
    store: dir,
    cwd: dir,
    env: { ...process.env, MNEME_DATABASE_URL: '', MNEME_DURABLE: durable ? '1' : '0' },
    embedder: 'off',
    binding: { project: null, identity: 'bench' },
    surface: 'human',
  });
};

if (mode === 'child') {
  const [bundleFile, chunk] = rest;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-import-'));
  const engine = await open(dir);
  const text = fs.readFileSync(bundleFile, 'utf8');
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const r = await engine.importBundle(
    text,
    'bundle.json',
    { kind: 'import', surface: 'cli' },
    {
      global: true,
      ...(chunk === 'default' ? {} : { chunkOps: Number(chunk) }),
    },
  );
  const c = process.cpuUsage(c0);
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  await engine.close();
  fs.rmSync(dir, { recursive: true, force: true });
  process.stdout.write(
    JSON.stringify({
      wall_s: wall,
      cpu_s: (c.user + c.system) / 1e6,
      imported: r.imported,
      refused: r.refused.length,
    }),
  );
} else if (mode === 'run') {
  const src = await open(store);
  const bundle = await src.exportBundle();
  await src.close();
  const file = path.join(os.tmpdir(), `mneme-bundle-${process.pid}.json`);
  fs.writeFileSync(file, JSON.stringify(bundle));
  const self = fileURLToPath(import.meta.url);
  const out = { memories: bundle.memories.length, durable, runs: {} };
  for (const chunk of ['1', 'default']) {
    const r = spawnSync(
      process.execPath,
      [self, 'child', tree, store, ...(durable ? ['--durable'] : []), file, chunk],
      {
        encoding: 'utf8',
      },
    );
    if (r.status !== 0) throw new Error(r.stderr);
    out.runs[chunk === '1' ? 'per_lineage' : 'chunked_500'] = JSON.parse(r.stdout);
  }
  fs.rmSync(file, { force: true });
  const at = rest.indexOf('--out');
  if (at >= 0) fs.writeFileSync(rest[at + 1], `${JSON.stringify(out, null, 1)}\n`);
  process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
}
