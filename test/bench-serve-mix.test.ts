// `mneme bench serve --mix`: the shares a person names, scaled to sum to 1; a name that is no
// op, or shares that add up to nothing, are refused with the form to use.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_MIX, parseMix } from '../bench/src/serve.js';
import { sameMix } from '../bench/src/serve-mix.js';

test('--mix scales the named shares to 1 and leaves the others at 0', () => {
  assert.deepEqual(parseMix('remember=1'), {
    recall: 0,
    remember: 1,
    supersede: 0,
    forget: 0,
    health: 0,
  });
  assert.deepEqual(parseMix('recall=3, remember=1'), {
    recall: 0.75,
    remember: 0.25,
    supersede: 0,
    forget: 0,
    health: 0,
  });
  const mix = parseMix('recall=0.8,remember=0.15,supersede=0.035,forget=0.015');
  for (const [k, v] of Object.entries(DEFAULT_MIX))
    assert.ok(Math.abs(mix[k as keyof typeof mix] - v) < 1e-12, k);
});

test('a result file without the health share is of the default mix; one with a share is not', () => {
  const older = { recall: 0.8, remember: 0.15, supersede: 0.035, forget: 0.015 };
  assert.ok(sameMix(older, DEFAULT_MIX));
  assert.ok(!sameMix({ ...older, health: 0.1 }, DEFAULT_MIX));
  assert.ok(!sameMix(parseMix('health=1'), DEFAULT_MIX));
  assert.equal(parseMix('health=1').health, 1);
});

test('--mix refuses an unknown op and shares that add up to 0', () => {
  assert.throws(() => parseMix('remember=1,delete=1'), /"delete=1" is not op=share/);
  assert.throws(() => parseMix('remember=0'), /add up to 0/);
  assert.throws(() => parseMix('remember=-1'), /is not op=share/);
});
