// Directory reads the file store's modules share: listings that treat a missing directory as
// empty, a recursive file walk, and the clean-up of temp files a killed write left behind.
import fs from 'node:fs';
import path from 'node:path';

/** Removes `<name>.tmp-<pid>-<n>` files left by a process killed mid-write. */
export function removeStrayTemps(dir: string): void {
  for (const n of safeReaddir(dir)) {
    if (/\.tmp-\d+-\d+$/.test(n)) fs.rmSync(path.join(dir, n), { force: true });
  }
}

export function dirHasEntry(dir: string): boolean {
  let d: fs.Dir | null = null;
  try {
    d = fs.opendirSync(dir);
    for (let e = d.readSync(); e !== null; e = d.readSync())
      if (!e.name.startsWith('.')) return true;
    return false;
  } catch {
    return false;
  } finally {
    d?.closeSync();
  }
}

export function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
}

export function walk(dir: string, fn: (file: string) => void): void {
  for (const ent of safeReaddirEntries(dir)) {
    const p = path.join(dir, ent.name);
    if (ent.isDirectory()) walk(p, fn);
    else if (ent.isFile()) fn(p);
  }
}

function safeReaddirEntries(dir: string): fs.Dirent[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}
