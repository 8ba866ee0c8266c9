// Where this mneme installation lives: the package root (holding package.json and bin/mneme.js),
// found from this module's own location so it works from src/ under tsx and from dist/.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: { root: string; version: string } | null = null;

function locate(): { root: string; version: string } {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg)) {
      const data = JSON.parse(fs.readFileSync(pkg, 'utf8')) as { name?: string; version?: string };
      if (data.name === 'mneme') return (cached = { root: dir, version: data.version ?? '0.0.0' });
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the mneme package root');
    dir = parent;
  }
}

export const installRoot = () => locate().root;
export const mnemeVersion = () => locate().version;
/** The CLI entry point, for spawning `mneme` as a child process. */
export const mnemeBin = () => path.join(locate().root, 'bin', 'mneme.js');
