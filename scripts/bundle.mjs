// Bundles the compiled CLI (dist/src/surfaces/cli/main.js) into one CommonJS file,
// dist/mneme.cjs, which bin/mneme.js loads. A hook or a recall is a whole node process, and
// node's ES module loader costs about half a millisecond per module: one file instead of sixty
// is most of the difference between a hook that keeps the agent waiting and one that does not.
// CommonJS, because there a dependency that only one command needs stays a lazy require inside
// that command's code, where an ES module bundle would hoist it to a static import.
// Packages stay outside the bundle (stemmer, which is ES-module-only and small, goes inside).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { asciiOnly } from './bundle-ascii.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const external = Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }).filter(
  (name) => name !== 'stemmer',
);

const result = await build({
  entryPoints: [path.join(root, 'dist/src/surfaces/cli/main.js')],
  outfile: path.join(root, 'dist/mneme.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // Optional packages a user may install (@huggingface/transformers) are imported by name.
  external: [...external, '@huggingface/transformers'],
  // import.meta.url in a CommonJS bundle: the bundle's own URL (package root is found from it).
  define: { 'import.meta.url': 'import_meta_url' },
  inject: [path.join(root, 'scripts/import-meta-url.mjs')],
  logLevel: 'warning',
  write: false,
});

// esbuild's interop helper copies every property of a required module onto a fresh object, once
// per importing module: for sixty modules importing node:fs and node:path that is thousands of
// property definitions (about 10 ms) at every start. Its result depends only on the module, so
// the bundle memoizes it. The helper's text is checked, so an esbuild that changes it fails the
// build here instead of silently skipping the memo.
const HELPER = 'var __toESM = (mod, isNodeMode, target) => (';
const MEMO = `var __toESMMemo = new WeakMap();
var __toESM = (mod, isNodeMode) => {
  if (!isNodeMode || mod === null || (typeof mod !== "object" && typeof mod !== "function"))
    return __toESMOnce(mod, isNodeMode);
  let ns = __toESMMemo.get(mod);
  if (ns === undefined) __toESMMemo.set(mod, (ns = __toESMOnce(mod, isNodeMode)));
  return ns;
};
var __toESMOnce = (mod, isNodeMode, target) => (`;
const [out] = result.outputFiles;
if (!out.text.includes(HELPER))
  throw new Error(`scripts/bundle.mjs: esbuild's __toESM helper changed; update HELPER`);
// bin/mneme.js runs the bundle as a vm.Script (for its code cache), where import() has no loader.
const dynamic = out.text.match(/\bimport\([^)]*\)/g);
if (dynamic)
  throw new Error(
    `scripts/bundle.mjs: use require, not ${dynamic.join(', ')}, in code the CLI bundles`,
  );
// ASCII, so that node reads it into a one-byte string (scripts/bundle-ascii.mjs says why).
fs.writeFileSync(out.path, asciiOnly(out.text.replace(HELPER, MEMO)));
