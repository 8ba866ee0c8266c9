// The reliability suite's adversary part: the attacks of test/adversary-*.test.ts (a hostile
// bundle, a cut journal, look-alike values, a value written back through global, smaller holes),
// each run through the real CLI, MCP or hook with its positive control, counted per file. The
// tests are the cases: this runs the built test files and reports what held.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface AdversaryPart {
  file: string;
  cases: number;
  held: number;
  /** Cases that could not run here (e.g. no Postgres): neither held nor failed. */
  skipped: number;
  failed: string[];
}

export interface AdversaryReport {
  parts: AdversaryPart[];
  cases: number;
  held: number;
  skipped: number;
}

/** Leaf results of a TAP stream from node's test runner (suites are not counted). */
export function tapLeaves(tap: string): { name: string; ok: boolean; skipped: boolean }[] {
  const lines = tap.split('\n');
  const out: { name: string; ok: boolean; skipped: boolean }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*(not )?ok \d+ - (.*)$/.exec(lines[i]!);
    if (!m) continue;
    let suite = false;
    for (let j = i + 1; j < lines.length && !/^\s*\.\.\.\s*$/.test(lines[j]!); j++)
      if (/^\s*type: 'suite'/.test(lines[j]!)) suite = true;
    if (!suite)
      out.push({
        name: m[2]!.replace(/ # SKIP.*$/, ''),
        ok: m[1] === undefined,
        skipped: / # SKIP/.test(m[2]!),
      });
  }
  return out;
}

export function runAdversary(testDir: string, env: NodeJS.ProcessEnv): AdversaryReport {
  const files = fs
    .readdirSync(testDir)
    .filter((n) => /^adversary-.*\.test\.js$/.test(n))
    .sort();
  const parts: AdversaryPart[] = [];
  for (const file of files) {
    const r = spawnSync(
      process.execPath,
      ['--test', '--test-reporter=tap', path.join(testDir, file)],
      { env, encoding: 'utf8', timeout: 600_000, maxBuffer: 64 * 1024 * 1024 },
    );
    const leaves = tapLeaves(r.stdout ?? '');
    parts.push({
      file: file.replace(/\.js$/, '.ts'),
      cases: leaves.length,
      held: leaves.filter((l) => l.ok && !l.skipped).length,
      skipped: leaves.filter((l) => l.skipped).length,
      failed: [
        ...leaves.filter((l) => !l.ok).map((l) => l.name),
        ...(leaves.length === 0 ? [`no result (exit ${r.status}): ${r.stderr.slice(0, 300)}`] : []),
      ],
    });
  }
  return {
    parts,
    cases: parts.reduce((n, p) => n + p.cases, 0),
    held: parts.reduce((n, p) => n + p.held, 0),
    skipped: parts.reduce((n, p) => n + p.skipped, 0),
  };
}
