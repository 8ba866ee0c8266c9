// applies_to globs decide which constraints surface before an edit: a constraint on
// src/billing/** surfaces for files there and not elsewhere.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { matchGlob } from '../src/core/glob.js';

it('matches the globs constraints are written with, and only those paths', () => {
  const yes: [string, string][] = [
    ['src/billing/pay.ts', 'src/billing/**'],
    ['src/billing/a/b/c.ts', 'src/billing/**'],
    ['src/billing/pay.ts', 'src/billing/'],
    ['src/x.test.ts', '**/*.test.ts'],
    ['x.test.ts', '**/*.test.ts'],
    ['src/a.ts', 'src/*.{ts,tsx}'],
    ['docs/b.md', 'docs/?.md'],
  ];
  const no: [string, string][] = [
    ['src/other/x.ts', 'src/billing/**'],
    ['src/billingx/pay.ts', 'src/billing/**'],
    ['src/a/b.ts', 'src/*.ts'],
    ['src/a.js', 'src/*.{ts,tsx}'],
    ['docs/bb.md', 'docs/?.md'],
    ['src/x.ts', '[unclosed'],
  ];
  for (const [p, g] of yes) assert.equal(matchGlob(p, g), true, `${p} ~ ${g}`);
  for (const [p, g] of no) assert.equal(matchGlob(p, g), false, `${p} !~ ${g}`);
});
