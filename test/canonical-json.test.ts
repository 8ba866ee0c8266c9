// canonicalJson is what the journal chain and idempotency keys hash: its one-pass writer must
// give exactly the text of JSON.stringify over the key-sorted copy, for any value a payload,
// a revision or a journal entry can hold (and for the odd ones too).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { canonicalJson, sortKeys } from '../src/core/hash.js';

const reference = (v: unknown) => JSON.stringify(sortKeys(v));

it('writes the text of JSON.stringify over the sorted copy, for any value', () => {
  fc.assert(
    fc.property(
      fc.anything({
        withObjectString: true,
        withNullPrototype: true,
        withDate: true,
        withSparseArray: true,
        withBoxedValues: true,
        key: fc.oneof(
          fc.string(),
          fc.constantFrom('0', '10', '2', '01', '-1', '4294967295', 'toJSON', '__proto__'),
        ),
      }),
      (v) => assert.equal(canonicalJson(v), reference(v)),
    ),
    { numRuns: 5000 },
  );
});

it('keeps an own __proto__ member (JSON.parse makes one) instead of dropping it', () => {
  const parsed = JSON.parse('{"b":2,"__proto__":{"a":1}}') as unknown;
  assert.equal(canonicalJson(parsed), '{"__proto__":{"a":1},"b":2}');
  assert.equal(reference(parsed), '{"__proto__":{"a":1},"b":2}');
  // A different member value gives a different text: the member is hashed, not lost.
  assert.notEqual(canonicalJson(JSON.parse('{"b":2,"__proto__":{"a":9}}')), canonicalJson(parsed));
});

it('sorts keys and drops undefined members, integer-like keys first as JSON orders them', () => {
  assert.equal(canonicalJson({ b: 1, a: [undefined, 2], c: undefined }), '{"a":[null,2],"b":1}');
  assert.equal(canonicalJson({ b: 1, 10: 'x', 2: 'y', a: 0 }), '{"2":"y","10":"x","a":0,"b":1}');
  assert.equal(
    canonicalJson({ toJSON: () => 'custom', a: 1 }),
    reference({ toJSON: () => 'custom', a: 1 }),
  );
});
