// Dependencies point inward: core imports nothing of ours outside core; the engine never
// imports a surface or a concrete store adapter (only the ports: store/port, store/sessions); adapters never import the engine or surfaces.
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
  ['core', /^(engine|store|surfaces|bench)\//],
  ['engine', /^(surfaces|bench)\/|^store\/(?!port|sessions)/],
  ['store', /^(engine|surfaces|bench)\//],
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
