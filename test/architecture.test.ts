// Dependencies point inward: core imports nothing of ours outside core; the engine never
// imports a surface or a concrete store adapter (only the ports: store/port, store/sessions); adapters never import the engine or surfaces.
// Surfaces reach the engine only through its facade and never its context; only the composition
// root (surfaces/compose.ts) builds stores, archives and engines.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { ROOT } from './helpers.js';

const SRC = path.join(ROOT, 'src');

function files(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? files(path.join(dir, e.name))
        : e.name.endsWith('.ts')
          ? [path.join(dir, e.name)]
          : [],
    );
}

function imports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)[^'"]*from\s+'(\.[^']+)'/gm)].map((m) =>
    path.relative(SRC, path.resolve(path.dirname(file), m[1]!)),
  );
}

const rules: [string, RegExp][] = [
  ['core', /^(engine|store|surfaces)\//],
  ['engine', /^surfaces\/|^store\/(?!port|sessions)/],
  ['store', /^(engine|surfaces)\//],
];

it('dependencies point inward (surfaces → engine → core; adapters implement the port)', () => {
  const violations: string[] = [];
  let checked = 0;
  for (const [layer, forbidden] of rules) {
    for (const f of files(path.join(SRC, layer))) {
      for (const imp of imports(f)) {
        checked++;
        if (forbidden.test(imp)) violations.push(`${path.relative(SRC, f)} imports ${imp}`);
      }
    }
  }
  assert.ok(checked > 20, 'the rule actually looked at imports');
  assert.deepEqual(violations, []);
});

/** Every module a file names: static imports and re-exports, and dynamic import('…'). */
function allImports(file: string): { spec: string; typeOnly: boolean }[] {
  const text = fs.readFileSync(file, 'utf8');
  const out: { spec: string; typeOnly: boolean }[] = [];
  for (const m of text.matchAll(/^\s*(import|export)(\s+type\b)?[^'"]*?from\s+'(\.[^']+)'/gm))
    out.push({ spec: m[3]!, typeOnly: m[2] !== undefined });
  for (const m of text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g))
    out.push({ spec: m[1]!, typeOnly: false });
  return out.map(({ spec, typeOnly }) => ({
    spec: path.relative(SRC, path.resolve(path.dirname(file), spec)),
    typeOnly,
  }));
}

const rel = (f: string) => path.relative(SRC, f).split(path.sep).join('/');
const COMPOSE = 'surfaces/compose.ts';

it('surfaces reach the engine only through its facade (engine/engine.ts) and payload schemas, never its modules', () => {
  const violations: string[] = [];
  let checked = 0;
  for (const f of files(path.join(SRC, 'surfaces'))) {
    for (const { spec } of allImports(f)) {
      if (!spec.startsWith('engine/')) continue;
      checked++;
      // The facade, and the payload schemas every surface derives its inputs from.
      if (spec !== 'engine/engine.js' && spec !== 'engine/payloads.js')
        violations.push(`${rel(f)} imports ${spec}`);
    }
  }
  assert.ok(checked > 10, 'the rule actually looked at engine imports');
  assert.deepEqual(violations, []);
});

it('surfaces reach the store only through the composition root', () => {
  const violations: string[] = [];
  let checked = 0;
  for (const f of files(path.join(SRC, 'surfaces'))) {
    if (rel(f) === COMPOSE) continue;
    for (const { spec } of allImports(f)) {
      checked++;
      if (spec.startsWith('store/')) violations.push(`${rel(f)} imports ${spec}`);
    }
  }
  assert.ok(checked > 100, 'the rule actually looked at surface imports');
  assert.deepEqual(violations, []);
});

it('nothing outside the engine reaches through it to its context or store (`.ctx`)', () => {
  // Surfaces and the composition root alike: what they need of the store
  // is a named engine operation. The engine keeps its context in a private field (`#ctx`).
  const violations: string[] = [];
  let scanned = 0;
  for (const f of files(SRC)) {
    if (rel(f).startsWith('engine/')) continue;
    scanned++;
    fs.readFileSync(f, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/\.ctx\b/.test(line)) violations.push(`${rel(f)}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.ok(scanned > 50, 'the rule actually looked at the source tree');
  assert.deepEqual(violations, []);
  // And the facade gives no way in: its context is an ES private field, not a property.
  const facade = fs.readFileSync(path.join(SRC, 'engine', 'engine.ts'), 'utf8');
  assert.match(facade, /readonly #ctx: EngineContext;/);
  assert.doesNotMatch(facade, /(readonly|public|private|protected)\s+ctx\b|get ctx\(/);
});

it('only the composition root builds stores, archives and engines', () => {
  // Adapters construct their own parts.
  const exempt = (r: string) => r === COMPOSE || r === 'engine/engine.ts' || /^store\//.test(r);
  const construct =
    /\bnew\s+(FileStore|PostgresStore|SessionFiles|Engine)\b|\b(FileStore|PostgresStore)\.open\s*\(|\bopenDatabase\s*\(|\bcreateEngine\s*\(/;
  // A value import of an adapter that opens stores is construction by another name.
  const adapter =
    /^store\/(files\/(file-store|session-files)|postgres\/(postgres-store|database))\.js$/;
  const violations: string[] = [];
  let scanned = 0;
  for (const f of files(SRC)) {
    const r = rel(f);
    if (exempt(r)) continue;
    scanned++;
    fs.readFileSync(f, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (construct.test(line)) violations.push(`${r}:${i + 1}: ${line.trim()}`);
      });
    for (const { spec, typeOnly } of allImports(f))
      if (!typeOnly && adapter.test(spec)) violations.push(`${r} imports ${spec}`);
  }
  assert.ok(scanned > 50, 'the rule actually looked at the source tree');
  assert.deepEqual(violations, []);
  // And the root does build them (the rule is not vacuous).
  const root = fs.readFileSync(path.join(SRC, COMPOSE), 'utf8');
  for (const needle of ['FileStore.open(', 'PostgresStore.open(', 'createEngine(', 'openDatabase('])
    assert.ok(root.includes(needle), `${COMPOSE} builds ${needle}`);
});

// ---- product and tooling apart (issue 15 item 8) ----------------------------------------------

const TOOLING = ['bench/src', 'test/reliability'];

it('the shipped tree (src/) imports nothing outside itself: no benchmark or fault-injection code', () => {
  const violations: string[] = [];
  let checked = 0;
  for (const f of files(SRC)) {
    for (const { spec } of allImports(f)) {
      checked++;
      if (spec.startsWith('..')) violations.push(`${rel(f)} imports ${spec}`);
    }
  }
  assert.ok(checked > 500, 'the rule actually looked at the source tree');
  assert.deepEqual(violations, []);
  // The tooling lives outside src/ and does import the product (the rule is not vacuous).
  for (const dir of TOOLING) {
    const intoSrc = files(path.join(ROOT, dir)).flatMap((f) =>
      allImports(f).filter(({ spec }) => !spec.startsWith('..')),
    );
    assert.ok(intoSrc.length > 10, `${dir} imports the product from outside src/`);
  }
});

/**
 * A fault hook in product code: an environment variable that arms a crash or a kill, a process
 * killing itself, or product code arming one of the test seams (the store's `faultPoint`, fsck's
 * `afterFix`), which only test-side processes may pass in.
 */
const FAULT_HOOK: [string, RegExp][] = [
  ['a crash/fault/kill variable', /\bMNEME_\w*(CRASH|FAULT|KILL)\w*/],
  ['a process killing itself', /process\.kill\(\s*process\.pid\b/],
  ['an armed fault seam', /\b(faultPoint|afterFix)\s*:/],
];

function faultHooks(file: string): string[] {
  const found: string[] = [];
  fs.readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (/^\s*(\/\/|\*|\/\*)/.test(line)) return; // comments name the seams
      for (const [what, re] of FAULT_HOOK)
        if (re.test(line))
          found.push(`${path.relative(ROOT, file)}:${i + 1}: ${what}: ${line.trim()}`);
    });
  return found;
}

it('the shipped product has no fault hook; fault injection is installed from the test side', () => {
  const product = files(SRC);
  assert.ok(product.length > 100, 'the rule actually looked at the source tree');
  assert.deepEqual(product.flatMap(faultHooks), []);
  // The product declares the seams (options it never sets) ...
  const text = (f: string) => fs.readFileSync(f, 'utf8');
  assert.ok(
    product.some((f) => /\bfaultPoint\?:/.test(text(f))),
    'the store declares faultPoint',
  );
  assert.ok(
    product.some((f) => /\bafterFix\?:/.test(text(f))),
    'fsck declares afterFix',
  );
  // ... and the test-side children arm them (the rule sees a hook where there is one).
  const armed = files(path.join(ROOT, 'test', 'reliability')).flatMap(faultHooks);
  for (const [kind] of FAULT_HOOK)
    assert.ok(
      armed.some((v) => v.includes(`: ${kind}: `)),
      `test/reliability holds ${kind} (the fault injection the product does not)`,
    );
});
