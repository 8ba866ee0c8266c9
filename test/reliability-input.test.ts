// Hostile and broken input (DESIGN invariant 12) and property-based fuzzing: each hostile case
// ends in a clear error or is stored literally, and nothing is lost; the parsers that meet
// untrusted text hold their properties for arbitrary input. Long mode: `npm run test:reliability`.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { runFuzz } from './reliability/fuzz.js';
import { runHostile } from './reliability/hostile.js';
import { tmpDir } from './helpers.js';

describe('hostile and broken input', () => {
  it('gets a clear error or is stored safely, and loses nothing', async () => {
    const dir = tmpDir('mneme-hostile-');
    try {
      const r = await runHostile(dir);
      assert.deepEqual(r.problems, []);
      for (const cat of [
        'path-traversal',
        'yaml-injection',
        'oversized',
        'encoding',
        'model-output',
        'hook-payload',
        'broken-files',
      ]) {
        const c = r.categories[cat];
        assert.ok(c && c.tried > 0, `category ${cat} ran`);
        assert.equal(c.refused + c.storedSafely, c.tried, `every ${cat} case had a clean outcome`);
      }
      // Both outcomes occur: refusals and literal storage (a suite that refuses all would pass
      // "nothing unsafe stored" trivially).
      assert.ok(r.categories['path-traversal']!.refused > 0);
      assert.ok(r.categories['yaml-injection']!.storedSafely > 0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('fuzzing the parsers', () => {
  it('holds every property for arbitrary input', async () => {
    const dir = tmpDir('mneme-fuzz-');
    try {
      const r = await runFuzz(300, dir);
      assert.deepEqual(r.problems, []);
      assert.equal(Object.keys(r.properties).length, 6);
      assert.equal(r.iterations, 1800);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
