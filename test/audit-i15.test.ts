// Holes found by attacking what issue 15 merged (configuration, one schema per payload, the
// session archive on Postgres, the complete store port, the closed engine) through the real
// entry points. Each case pairs the "must not" with the "does" in the same fixture.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { cli, tmpDir } from './helpers.js';
import { pgSkipReason, throwawayDb } from './pg-fixtures.js';

const pgSkip = await pgSkipReason();
const dirs: string[] = [];
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
const home = () => {
  const d = tmpDir('mneme-audit15-');
  dirs.push(d);
  return d;
};

describe('a database password given as a URL parameter is never shown', () => {
  it('mneme config masks ?password= and ?sslpassword= and shows the rest of the URL', () => {
    const r = cli(['config', '--json'], {
      home: home(),
      env: {
        MNEME_DATABASE_URL:
          'postgres://u@db.example/x?password=s3cret&sslpassword=k3y&sslmode=require',
        MNEME_TENANT: 't',
      },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /s3cret|k3y/);
    const shown = r.json().settings['store.database_url'].value as string;
    assert.match(shown, /^postgres:\/\/u@db\.example\/x\?/);
    assert.match(shown, /sslmode=require/);
  });

  it(
    'status and a missing tenant over the real --db store mask it too',
    { skip: pgSkip ?? false },
    async () => {
      const db = await throwawayDb(['acme']);
      try {
        const url = `${db.url}${db.url.includes('?') ? '&' : '?'}password=s3cret`;
        const h = home();
        const status = cli(['--db', url, '--tenant', 'acme', 'status'], { home: h });
        assert.equal(status.code, 0, status.stderr);
        assert.match(status.stdout, /tenant acme/, 'the URL with the parameter connects');
        assert.doesNotMatch(status.stdout, /s3cret/);
        const missing = cli(['--db', url, '--tenant', 'nope', 'status'], { home: h });
        assert.notEqual(missing.code, 0);
        assert.match(missing.stderr, /no tenant "nope"/);
        assert.doesNotMatch(missing.stderr, /s3cret/);
      } finally {
        await db.drop();
      }
    },
  );
});
