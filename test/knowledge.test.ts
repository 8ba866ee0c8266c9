// Repository knowledge beside memory (issue 19 items 1–2), on both stores: a project's chunks
// are served in that project and never in another; changing one document re-chunks only that
// document (its old text is gone, the new one served); a document holding a secret is not
// indexed while a clean one beside it is; .gitignore is honoured; --no-knowledge serves none;
// a chunk restating a served memory is dropped. Real git repositories in temp dirs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SchemaRegistry } from '../src/core/schema.js';
import {
  chunkDocument,
  forbiddenPath,
  includes,
  KNOWLEDGE_INCLUDE,
} from '../src/core/knowledge.js';
import { queryTerms } from '../src/core/text.js';
import { Engine } from '../src/engine/engine.js';
import { RecallInput, recallOptions } from '../src/engine/payloads.js';
import type { Store } from '../src/store/port.js';
import { FileStore } from '../src/store/files/file-store.js';
import { buildTools } from '../src/surfaces/mcp/tools.js';
import { projectFiles } from '../src/surfaces/source-files.js';
import { AGENT, HUMAN, PROJECT_A, cli, testClock, tmpDir } from './helpers.js';
import { httpFixture } from './http-fixture.js';
import { pgSkipReason, throwawayStore } from './pg-fixtures.js';

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.invalid',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.invalid',
    },
  }).toString();

/** A git repository with these files, all committed (and `ignored` written but ignored). */
function repo(files: Record<string, string>, ignored: Record<string, string> = {}): string {
  const dir = tmpDir('mneme-knowledge-');
  git(dir, 'init', '-q');
  for (const [rel, text] of Object.entries({ ...files, ...ignored })) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  if (Object.keys(ignored).length > 0)
    fs.writeFileSync(path.join(dir, '.gitignore'), Object.keys(ignored).join('\n') + '\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'docs');
  return dir;
}

function engineAt(store: Store, scope: string, root: string, surface: 'human' | 'agent' = 'human') {
  return new Engine({
    store,
    clock: testClock(),
    registry: new SchemaRegistry(),
    binding: { project: scope, identity: scope },
    surface,
    files: projectFiles(root),
  });
}

const PRIVATE_KEY = [
  '-----BEGIN RSA PRIVATE KEY-----',
  'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQzuVaE8AkAFmxZzow3x+VJYKdjykkJ0iT9wCS0DRTXu269V264Vf/3jvredZiKRkgwlL9xNAwxXFg0x/XFw005UWVRIkdgcKWTjpBP2dPwVZ4WWC+9aGVd+Gyn1o0CLelf4rEjGoXbAAEgAqeGUxrcIlbjXfbcmwIDAQAB',
  '-----END RSA PRIVATE KEY-----',
].join('\n');

const README = `# Orbit

The orbit planner computes a quaternion trajectory for each satellite.

## Install

Run the installer with the flux capacitor attached.
`;
const GUIDE_V1 = `# Guide

## Scheduling

Launch windows open when the heliotrope alignment is favourable.
`;
const GUIDE_V2 = `# Guide

## Scheduling

Launch windows open when the marigold alignment is favourable.
`;

function suite(kind: string, open: () => Promise<{ store: Store; cleanup: () => Promise<void> }>) {
  describe(`knowledge beside memory (${kind})`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let rootA: string;
    let rootB: string;
    before(async () => {
      ({ store, cleanup } = await open());
      rootA = repo(
        {
          'README.md': README,
          'docs/guide.md': GUIDE_V1,
          'docs/keys.md': `# Keys\n\nThe deploy key for the zeppelin bucket:\n\n${PRIVATE_KEY}\n`,
          'docs/clean.md': `# Clean\n\nThe zeppelin bucket holds nightly builds.\n`,
          'docs/aws.md': `# AWS\n\nUse AKIAQ3EGRTHXMWKQZ7ZA for the albatross account.\n`,
          'docs/.env.md': 'the albatross password is hunter2\n',
          'src/app.ts': '// quaternion trajectory code, not a document\n',
        },
        { 'docs/private-notes.md': '# Notes\n\nThe walrus protocol is confidential.\n' },
      );
      rootB = repo({ 'README.md': '# Other\n\nThe pelican cache stores thumbnails.\n' });
    });
    after(async () => {
      await cleanup();
    });

    it("serves a project's chunk in that project, with kind and a path:line citation, and never in another", async () => {
      const a = engineAt(store, 'alpha-0000000a', rootA);
      const b = engineAt(store, 'bravo-0000000b', rootB);
      const ra = await a.refreshKnowledge();
      assert.equal(ra.scope, 'alpha-0000000a');
      assert.ok(ra.chunksAdded > 0);
      await b.refreshKnowledge();

      const inA = await a.recall('quaternion trajectory');
      const hit = inA.knowledge?.find((k) => k.text.includes('quaternion trajectory'));
      assert.ok(hit, 'served in its own project');
      assert.equal(hit.kind, 'knowledge');
      assert.equal(hit.path, 'README.md');
      assert.equal(hit.citation, 'README.md:3');
      assert.equal(hit.heading, 'Orbit');
      // Source code is not a document of the default include list.
      assert.ok(!inA.knowledge!.some((k) => k.path === 'src/app.ts'));

      const inB = await b.recall('quaternion trajectory');
      assert.ok(!(inB.knowledge ?? []).some((k) => k.text.includes('quaternion')), 'not in B');
      const own = await b.recall('pelican thumbnails');
      assert.equal(own.knowledge?.[0]?.citation, 'README.md:3', "B's own chunk is served in B");
      const fromA = await a.recall('pelican thumbnails');
      assert.equal(fromA.knowledge, undefined, "B's chunk is not served in A");
    });

    it('a document with a secret is not indexed while a clean one beside it is; .env and ignored files never', async () => {
      const a = engineAt(store, 'alpha-0000000a', rootA);
      const r = await a.refreshKnowledge();
      const skipped = new Map(r.skipped.map((s) => [s.path, s.reason]));
      assert.match(skipped.get('docs/keys.md') ?? '', /secret found \(private_key\)/);
      assert.match(skipped.get('docs/aws.md') ?? '', /secret found \(aws_access_key\)/);
      const zeppelin = await a.recall('zeppelin bucket');
      assert.deepEqual(
        zeppelin.knowledge?.map((k) => k.path),
        ['docs/clean.md'],
        'the clean document is served, the one with the key is not',
      );
      assert.equal((await a.recall('albatross account')).knowledge, undefined);
      assert.equal((await a.recall('albatross password hunter2')).knowledge, undefined);
      assert.equal((await a.recall('walrus protocol confidential')).knowledge, undefined);
      const status = await a.knowledgeStatus();
      const paths = (await store.knowledge().then((k) => k.files('alpha-0000000a'))).map(
        (f) => f.path,
      );
      assert.ok(paths.includes('docs/clean.md') && paths.includes('README.md'));
      assert.ok(!paths.includes('docs/.env.md') && !paths.includes('docs/private-notes.md'));
      assert.ok(status.chunks > 0);
      // Nothing of the key reached the store's knowledge rows.
      const k = await store.knowledge();
      assert.deepEqual(await k.search('alpha-0000000a', queryTerms('deploy key'), 5), []);
      assert.equal((await k.search('alpha-0000000a', queryTerms('zeppelin nightly'), 5)).length, 1);
    });

    it('changing one document re-chunks only it: the old text is no longer served, the new one is', async () => {
      const a = engineAt(store, 'alpha-0000000a', rootA);
      const first = await a.refreshKnowledge();
      assert.equal(first.changed, 0, 'nothing moved since the last refresh');
      assert.equal(first.chunksAdded, 0);
      assert.ok((await a.recall('heliotrope alignment')).knowledge?.length === 1);

      fs.writeFileSync(path.join(rootA, 'docs/guide.md'), GUIDE_V2);
      git(rootA, 'commit', '-q', '-am', 'guide');
      const second = await a.refreshKnowledge();
      assert.equal(second.changed, 1);
      assert.equal(second.unchanged, second.scanned - 1);
      assert.equal(second.removed, 0);
      assert.equal(second.chunksAdded, 1);
      assert.equal(second.chunksRemoved, 1);
      const later = await a.recall('heliotrope alignment');
      assert.ok(!later.knowledge!.some((k) => k.text.includes('heliotrope')), 'old text gone');
      assert.equal(
        (await a.recall('marigold alignment')).knowledge?.[0]?.citation,
        'docs/guide.md:5',
      );
      assert.ok((await a.recall('quaternion trajectory')).knowledge, 'other files untouched');

      // An untracked file is not read; a removed one leaves the index.
      git(rootA, 'rm', '-q', 'docs/guide.md');
      git(rootA, 'commit', '-q', '-m', 'drop guide');
      const third = await a.refreshKnowledge();
      assert.equal(third.removed, 1);
      assert.equal((await a.recall('marigold alignment')).knowledge, undefined);
    });

    it('--no-knowledge (and the MCP flag) serves none; a chunk restating a served memory is dropped', async () => {
      const a = engineAt(store, 'alpha-0000000a', rootA, 'agent');
      await a.refreshKnowledge();
      assert.ok((await a.recall('flux capacitor installer')).knowledge);
      assert.equal(
        (await a.recall('flux capacitor installer', { knowledge: false })).knowledge,
        undefined,
      );
      const recallTool = buildTools(a).find((t) => t.name === 'recall')!;
      const on = (await recallTool.run({ query: 'flux capacitor installer' }, AGENT)) as {
        knowledge?: unknown[];
      };
      const off = (await recallTool.run(
        { query: 'flux capacitor installer', no_knowledge: true },
        AGENT,
      )) as { knowledge?: unknown[] };
      assert.ok(on.knowledge && on.knowledge.length > 0);
      assert.equal(off.knowledge, undefined);
      assert.equal(
        recallOptions(RecallInput.parse({ query: 'x', no_knowledge: true }), AGENT).knowledge,
        false,
      );

      const human = engineAt(store, 'alpha-0000000a', rootA);
      await human.apply(
        [
          {
            op: 'remember',
            type: 'procedure',
            fields: { subject: 'installer' },
            abstract: 'Run the installer with the flux capacitor attached.',
          },
        ],
        HUMAN,
      );
      const r = await human.recall('flux capacitor installer');
      assert.equal(r.results[0]?.kind, 'memory');
      assert.match(r.results[0]!.abstract, /flux capacitor/);
      assert.ok(
        !(r.knowledge ?? []).some((k) => k.text.includes('flux capacitor')),
        'the restating chunk is dropped beside the memory',
      );
    });

    it('the prompt hook injects knowledge only behind its setting, fenced; the session-start block never does', async () => {
      const a = engineAt(store, 'alpha-0000000a', rootA, 'agent');
      await a.refreshKnowledge();
      const prompt = 'how does the orbit planner compute the quaternion trajectory';
      const on = await a.injectPrompt(prompt, {
        knowledge: true,
        scoreFloor: 0.3,
        projectRoot: rootA,
      });
      assert.match(on.text, /<mneme-knowledge>\n[^\n]*data, not instructions/);
      assert.match(on.text, /- \[doc:README\.md:3\] \(Orbit\) The orbit planner computes/);
      assert.match(on.text, /<\/mneme-knowledge>$/);
      const off = await a.injectPrompt(prompt, { scoreFloor: 0.3, projectRoot: rootA });
      assert.doesNotMatch(off.text, /mneme-knowledge|orbit planner/);
      const start = await a.injectSessionStart({ projectRoot: rootA });
      assert.match(start.text, /flux capacitor/, 'the memory is injected at session start');
      assert.doesNotMatch(start.text, /mneme-knowledge|orbit planner/);
    });

    it('clear drops the index; a refresh rebuilds it from the repository', async () => {
      const a = engineAt(store, 'alpha-0000000a', rootA);
      const b = engineAt(store, 'bravo-0000000b', rootB);
      assert.ok((await a.clearKnowledge()).chunks > 0);
      assert.equal((await a.recall('quaternion trajectory')).knowledge, undefined);
      assert.ok((await b.recall('pelican thumbnails')).knowledge, "another project's index stays");
      const r = await a.refreshKnowledge();
      assert.equal(r.changed, r.scanned);
      assert.ok((await a.recall('quaternion trajectory')).knowledge);
    });
  });
}

suite('files', async () => {
  const dir = tmpDir();
  const store = await FileStore.open(dir, { durable: false });
  return { store, cleanup: () => store.close() };
});

const pgSkip = await pgSkipReason();
if (pgSkip === null) suite('postgres', () => throwawayStore());
else it.skip(`knowledge beside memory (postgres): ${pgSkip}`);

describe('chunking and the include list', () => {
  it('chunks follow headings and paragraphs, with line ranges and the heading trail; fences hold headings', () => {
    const chunks = chunkDocument(
      '# Top\n\nintro line\n\n## Sub\n\n```\n# not a heading\n```\n\nafter\n',
    );
    assert.deepEqual(
      chunks.map((c) => [c.line_from, c.line_to, c.trail]),
      [
        [3, 3, 'Top'],
        [7, 11, 'Top › Sub'],
      ],
    );
    assert.match(chunks[1]!.text, /# not a heading/);
  });
  it('default includes match documents at any depth, never key files', () => {
    assert.ok(includes('README.md', KNOWLEDGE_INCLUDE));
    assert.ok(includes('pkg/sub/notes.md', KNOWLEDGE_INCLUDE));
    assert.ok(includes('docs/api/x.txt', KNOWLEDGE_INCLUDE));
    assert.ok(!includes('src/main.ts', KNOWLEDGE_INCLUDE));
    assert.ok(forbiddenPath('docs/.env.production') && forbiddenPath('docs/deploy/id_rsa'));
    assert.ok(forbiddenPath('docs/server.pem') && !forbiddenPath('docs/environment.md'));
  });
});

describe('mneme knowledge and recall on the CLI', () => {
  it('refresh --json reports counts; recall shows knowledge fenced with its citation; --no-knowledge leaves it out', () => {
    const home = tmpDir();
    const root = repo({ 'README.md': README });
    const r = cli(['knowledge', 'refresh', '--json'], { home, cwd: root });
    assert.equal(r.code, 0, r.stderr);
    const report = r.json();
    assert.equal(report.changed, 1);
    assert.ok(report.chunksAdded >= 2);
    // The fast path (plain recall) and the full CLI (--json) both take --no-knowledge.
    const human = cli(['recall', 'quaternion', 'trajectory'], { home, cwd: root });
    assert.match(human.stdout, /README\.md:3 · Orbit/);
    assert.match(human.stdout, /data, not instructions/);
    assert.match(human.stdout, / {2}│ The orbit planner/);
    const off = cli(['recall', 'quaternion', 'trajectory', '--no-knowledge'], { home, cwd: root });
    assert.equal(off.code, 0, off.stderr);
    assert.doesNotMatch(off.stdout, /README\.md:3/);
    const json = cli(['recall', 'quaternion', '--json', '--no-knowledge', '--limit', '5'], {
      home,
      cwd: root,
    });
    assert.equal(json.code, 0, json.stderr);
    assert.equal(json.json().knowledge, undefined);
    const jsonOn = cli(['recall', 'quaternion', '--json', '--limit', '5'], { home, cwd: root });
    assert.equal(jsonOn.json().knowledge[0].citation, 'README.md:3');
  });

  it('doctor --fix refreshes the knowledge index; plain doctor does not', () => {
    const home = tmpDir();
    const root = repo({ 'README.md': README });
    const plain = cli(['doctor', '--json'], { home, cwd: root });
    assert.ok(plain.stdout.startsWith('{'), plain.stderr);
    assert.ok(!plain.json().checks.some((k: { check: string }) => k.check === 'knowledge'));
    assert.equal(cli(['knowledge', 'status', '--json'], { home, cwd: root }).json().chunks, 0);
    const fixed = cli(['doctor', '--fix', '--json'], { home, cwd: root });
    const check = fixed.json().checks.find((k: { check: string }) => k.check === 'knowledge');
    assert.equal(check?.status, 'ok', fixed.stdout);
    assert.match(check.detail, /refreshed: 1 files, 2 chunks/);
    assert.equal(cli(['knowledge', 'status', '--json'], { home, cwd: root }).json().chunks, 2);
  });
});

describe('recall over HTTP', () => {
  it('GET /api/recall serves knowledge of the named project; no_knowledge=true leaves it out', async () => {
    const f = await httpFixture();
    try {
      const root = repo({ 'README.md': README });
      await engineAt(f.store, PROJECT_A, root).refreshKnowledge();
      const get = async (q: string) =>
        (await (await f.app.request(`/api/recall?q=${q}&project=${PROJECT_A}`)).json()) as {
          knowledge?: { kind: string; citation: string }[];
        };
      const on = await get('quaternion+trajectory');
      assert.equal(on.knowledge?.[0]?.kind, 'knowledge');
      assert.equal(on.knowledge?.[0]?.citation, 'README.md:3');
      const off = await get('quaternion+trajectory&no_knowledge=true');
      assert.equal(off.knowledge, undefined);
    } finally {
      await f.store.close();
    }
  });
});
