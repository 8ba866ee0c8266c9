// The npm package holds what runs and nothing else: `npm pack` (its real file list) ships the
// binary, the bundle it loads and the Claude Code plugin, never the sources, tests, benchmarks or
// their results; and every package the bundle requires at run time is a dependency, so an
// install from the tarball has it. test/hosts-e2e.test.ts installs the tarball for real.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPO } from './hook-helpers.js';

const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

describe('the npm package', () => {
  it('packs the binary, its bundle, the plugin and the README, nothing else', () => {
    // --ignore-scripts: the build already ran (npm test builds); pack's prepack would build again.
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: REPO,
      encoding: 'utf8',
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
    const files = (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    const plugin = files.filter((f) => f.startsWith('plugin/claude-code/'));
    assert.ok(plugin.includes('plugin/claude-code/hooks/hooks.json'));
    assert.deepEqual(files.filter((f) => !plugin.includes(f)).sort(), [
      'README.md',
      'bin/mneme.js',
      'dist/mneme.cjs',
      'package.json',
    ]);
  });

  it('every package the bundle requires is a dependency (not a devDependency)', () => {
    const bundle = fs.readFileSync(path.join(REPO, 'dist', 'mneme.cjs'), 'utf8');
    const builtins = new Set(builtinModules);
    const required = new Set(
      // Plain requires, and the createRequire functions esbuild renames (require2, lazy) that load
      // a module on first use.
      [...bundle.matchAll(/\b(?:require\d*|lazy)\("([^"./][^"]*)"\)/g)]
        .map((m) => m[1]!)
        .filter((name) => !name.startsWith('node:') && !builtins.has(name))
        .map((name) =>
          name
            .split('/')
            .slice(0, name.startsWith('@') ? 2 : 1)
            .join('/'),
        ),
    );
    assert.ok(required.has('better-sqlite3'), 'the scan sees the bundle’s requires');
    // An optional embedder a user may install (docs/vectors.md) is the one allowed exception.
    const missing = [...required].filter(
      (name) => !(name in pkg.dependencies) && name !== '@huggingface/transformers',
    );
    assert.deepEqual(missing, []);
  });
});
