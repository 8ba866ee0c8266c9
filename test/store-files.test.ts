// Runs the Store-port conformance suite against the embedded (files + SQLite) adapter.
import fs from 'node:fs';
import { FileStore } from '../src/store/files/file-store.js';
import { tmpDir } from './helpers.js';
import { storeConformance } from './store-conformance.js';

storeConformance('files', async () => {
  const dir = tmpDir();
  const store = await FileStore.open(dir, { durable: false });
  return {
    store,
    cleanup: async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});
