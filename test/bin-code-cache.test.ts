// bin/mneme.js runs the bundled CLI with a V8 code cache. The cache may only ever make a start
// faster: a run with no cache, a good cache, a corrupt cache or a cache of another build of the
// bundle gives the same answer, a rebuilt bundle gets a cache of its own, and a missing bundle
// is a clear error. Each case runs a copy of the installation in a temp directory (real child
// processes), so the checkout's own cache is never touched.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ROOT, tmpDir } from './helpers.js';

describe('the code cache of the bundled CLI', () => {
  let install: string;
  let home: string;
  const cacheDir = () => path.join(install, 'dist', '.v8-cache');
  const caches = () => (fs.existsSync(cacheDir()) ? fs.readdirSync(cacheDir()) : []);
  const mneme = (...args: string[]) => {
    const r = spawnSync(process.execPath, [path.join(install, 'bin', 'mneme.js'), ...args], {
      env: { ...process.env, MNEME_HOME: home, MNEME_DURABLE: '0' },
      cwd: home,
      encoding: 'utf8',
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  before(() => {
    install = tmpDir('mneme-install-');
    home = tmpDir('mneme-home-');
    fs.mkdirSync(path.join(install, 'bin'));
    fs.mkdirSync(path.join(install, 'dist'));
    fs.copyFileSync(path.join(ROOT, 'bin', 'mneme.js'), path.join(install, 'bin', 'mneme.js'));
    fs.copyFileSync(path.join(ROOT, 'dist', 'mneme.cjs'), path.join(install, 'dist', 'mneme.cjs'));
    fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(install, 'package.json'));
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(install, 'node_modules'));
    const r = mneme('remember', '--type', 'fact', '--abstract', 'Deploys go out on Tuesdays');
    assert.equal(r.code, 0, r.stderr);
  });
  after(() => {
    fs.rmSync(install, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('gives the same answer without a cache, with it, and with a corrupt one', () => {
    fs.rmSync(cacheDir(), { recursive: true, force: true });
    const cold = mneme('recall', 'deploys', '--json');
    assert.equal(cold.code, 0, cold.stderr);
    assert.match(cold.stdout, /Deploys go out on Tuesdays/);
    const [file] = caches();
    assert.ok(file, 'a cache was written');
    const warm = mneme('recall', 'deploys', '--json');
    assert.deepEqual(
      { ...warm, stdout: JSON.parse(warm.stdout).results.map((x: { id: string }) => x.id) },
      { ...cold, stdout: JSON.parse(cold.stdout).results.map((x: { id: string }) => x.id) },
    );
    const garbage = Buffer.from('not a V8 code cache '.repeat(100));
    fs.writeFileSync(path.join(cacheDir(), file), garbage);
    const corrupt = mneme('recall', 'deploys', '--json');
    assert.equal(corrupt.code, 0, corrupt.stderr);
    assert.equal(corrupt.stderr, '');
    assert.match(corrupt.stdout, /Deploys go out on Tuesdays/);
    assert.ok(!fs.readFileSync(path.join(cacheDir(), file)).equals(garbage), 'replaced');
  });

  it('a rebuilt bundle gets a cache of its own and the old one goes', () => {
    assert.equal(mneme('recall', 'deploys').code, 0);
    const before = caches();
    assert.equal(before.length, 1);
    const bundle = path.join(install, 'dist', 'mneme.cjs');
    fs.appendFileSync(bundle, '\n// rebuilt\n');
    const r = mneme('recall', 'deploys');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Deploys go out on Tuesdays/);
    const now = caches();
    assert.equal(now.length, 1);
    assert.notEqual(now[0], before[0]);
  });

  it('a missing bundle is an error that says how to make it', () => {
    fs.renameSync(path.join(install, 'dist', 'mneme.cjs'), path.join(install, 'dist', 'gone.cjs'));
    try {
      const r = mneme('recall', 'deploys');
      assert.equal(r.code, 3);
      assert.match(r.stderr, /mneme\.cjs is missing; run `npm run build`/);
      assert.equal(r.stdout, '');
    } finally {
      fs.renameSync(
        path.join(install, 'dist', 'gone.cjs'),
        path.join(install, 'dist', 'mneme.cjs'),
      );
    }
    assert.equal(mneme('recall', 'deploys').code, 0, 'and it runs again once the bundle is back');
  });
});
