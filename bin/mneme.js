#!/usr/bin/env node
// The `mneme` binary: runs the bundled CLI (dist/mneme.cjs, made by `npm run build`) with a V8
// code cache beside it, so a hook or a recall, each a whole process, skips compiling the bundle.
// The cache is keyed on the bundle's size and mtime and on node's version: a rebuilt bundle or
// another node never meets an old cache (V8 checks its own version and flags as well). A cache
// that cannot be read or written only costs the compile.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const bundle = path.join(dist, 'mneme.cjs');
let source;
let stat;
try {
  source = fs.readFileSync(bundle, 'utf8');
  stat = fs.statSync(bundle);
} catch {
  process.stderr.write(
    `mneme: ${bundle} is missing; run \`npm run build\` in ${path.dirname(dist)}\n`,
  );
  process.exit(3);
}
const cacheDir = path.join(dist, '.v8-cache');
const key = `${stat.size}-${Math.trunc(stat.mtimeMs)}-${process.version}-${process.arch}`;
const cacheFile = path.join(cacheDir, `mneme-${key}.bin`);
let cachedData;
try {
  cachedData = fs.readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}
const script = new vm.Script(
  `(function (exports, require, module, __filename, __dirname) {${source}\n})`,
  // No dynamic-import loader: the bundle loads everything with require (scripts/bundle.mjs checks).
  { filename: bundle, cachedData },
);
if (cachedData === undefined || script.cachedDataRejected) {
  // Written at exit, so the functions this run compiled are in it too.
  process.once('exit', () => {
    try {
      fs.mkdirSync(cacheDir, { recursive: true });
      for (const old of fs.readdirSync(cacheDir))
        fs.rmSync(path.join(cacheDir, old), { force: true });
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, script.createCachedData());
      fs.renameSync(tmp, cacheFile);
    } catch {
      // a read-only install: every run compiles, nothing else changes
    }
  });
}
const module = { exports: {} };
script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, dist);
