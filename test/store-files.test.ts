// Runs the Store-port conformance suite against the embedded (files + SQLite) adapter.
import fs from 'node:fs';
import path from 'node:path';
import { FileStore } from '../src/store/files/file-store.js';
import { tmpDir } from './helpers.js';
import { storeConformance } from './store-conformance.js';

storeConformance('files', async () => {
  const dir = tmpDir();
  const store = await FileStore.open(dir, { durable: false });
  return {
    store,
    // A revision file edited by hand (its text no longer hashes to its journal entry).
    tamper: async (id, rev) => {
      const file = store.layout.historyFile(id, rev);
      const text = fs.readFileSync(file, 'utf8');
      fs.writeFileSync(file, text.replace(/^abstract: (.*)$/m, 'abstract: $1 (edited)'));
    },
    // The first journal line deleted (the next entry's prev no longer matches).
    tamperJournal: async () => {
      const seg = path.join(store.layout.journalDir, fs.readdirSync(store.layout.journalDir)[0]!);
      const lines = fs.readFileSync(seg, 'utf8').split('\n');
      fs.writeFileSync(seg, lines.slice(1).join('\n'));
    },
    cleanup: async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});
