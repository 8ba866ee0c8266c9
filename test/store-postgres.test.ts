// Runs the Store-port conformance suite, unchanged, against the Postgres adapter: each fixture
// gets its own throwaway database. Skips with the reason printed when no Postgres answers.
import { test } from 'node:test';
import { pgSkipReason, throwawayStore } from './pg-fixtures.js';
import { storeConformance } from './store-conformance.js';

const skip = await pgSkipReason();
if (skip) {
  console.log(`# skipping the Postgres conformance suite: ${skip}`);
  test('Store conformance: postgres', { skip }, () => {});
} else {
  storeConformance('postgres', async () => {
    const { store, cleanup } = await throwawayStore();
    return { store, cleanup };
  });
}
