// Durable writes in one process, to count their syncs: N single-op applies, or one apply of N ops.
//   strace -f -c -e trace=fdatasync,fsync node scripts/write-syncs.mjs dist single 200
//   strace -f -c -e trace=fdatasync,fsync node scripts/write-syncs.mjs dist batch 100
// (DIST is a build's dist folder, so two builds can be counted side by side.)
const [root, mode, nText] = process.argv.slice(2);
const { resolve } = await import('node:path');
const base = resolve(root);
const { FileStore } = await import(`${base}/src/store/files/file-store.js`);
const { Engine } = await import(`${base}/src/engine/engine.js`);
const { SchemaRegistry } = await import(`${base}/src/core/schema.js`);
const fs = await import('node:fs');
const os = await import('node:os');
const path = await import('node:path');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-syncs-'));
const store = await FileStore.open(dir, { durable: true });
const engine = new Engine({
  store,
  clock: () => new Date(),
  registry: new SchemaRegistry(),
  binding: { project: 'bench-0000000b', identity: 'b' },
  surface: 'human',
});
const actor = { kind: 'agent', session: 'bench' };
const n = Number(nText);
const t0 = process.hrtime.bigint();
if (mode === 'single') {
  for (let i = 0; i < n; i++)
    await engine.apply(
      [{ op: 'remember', type: 'fact', abstract: `note ${i} about apple${i} and pear${i % 7}` }],
      actor,
    );
} else {
  await engine.apply(
    Array.from({ length: n }, (_, i) => ({
      op: 'remember',
      type: 'fact',
      abstract: `note ${i} about apple${i} and pear${i % 7}`,
    })),
    actor,
  );
}
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
process.stderr.write(`${mode} ${n}: ${ms.toFixed(0)} ms\n`);
await engine.close();
fs.rmSync(dir, { recursive: true, force: true });
