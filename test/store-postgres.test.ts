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
    return {
      store,
      // A revision row's document updated outside mneme.
      tamper: async (id, rev) => {
        await store.pool.query(
          `UPDATE revisions SET doc = jsonb_set(doc::jsonb, '{abstract}',
             to_jsonb((doc::jsonb->>'abstract') || ' (edited)'))::text
           WHERE tenant_id = $1 AND id = $2 AND rev = $3`,
          [store.tenant, id, rev],
        );
      },
      // The first journal row deleted (the next entry's prev no longer matches).
      tamperJournal: async () => {
        await store.pool.query('DELETE FROM journal WHERE tenant_id = $1 AND seq = 1', [
          store.tenant,
        ]);
      },
      cleanup,
    };
  });
}
