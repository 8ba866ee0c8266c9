// Hostile and broken input (DESIGN invariant 12): each case must end in a clear MnemeError (a
// code and a message) or be stored literally and safely — and afterwards nothing is lost: the
// sentinel memories are still served, the journal verifies, no file appeared outside the store.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MnemeError } from '../../core/errors.js';
import { LIMITS } from '../../core/limits.js';
import { parseRevision } from '../../core/markdown.js';
import { SchemaRegistry } from '../../core/schema.js';
import type { Actor } from '../../core/types.js';
import { DISTILL_DEFAULTS, Engine, type OpInput } from '../../engine/engine.js';
import { FileStore } from '../../store/files/file-store.js';
import { SessionFiles } from '../../store/files/session-files.js';
import { isAgentVariable } from '../../surfaces/agent-env.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.join(HERE, '../../../..', 'bin', 'mneme.js');
const BINDING = { project: 'hostile-0000000a', identity: 'hostile' };
const HUMAN: Actor = { kind: 'human', surface: 'reliability' };

export interface HostileReport {
  categories: Record<string, { tried: number; refused: number; storedSafely: number }>;
  tried: number;
  problems: string[];
}

type Expect = 'error' | 'accept';

export async function runHostile(workDir: string): Promise<HostileReport> {
  const sandbox = path.join(workDir, 'sandbox');
  const home = path.join(sandbox, 'store');
  fs.mkdirSync(home, { recursive: true });
  const report: HostileReport = { categories: {}, tried: 0, problems: [] };
  let store = await FileStore.open(home, { durable: false, lockTimeoutMs: 5_000 });
  let engine = new Engine({
    store,
    clock: () => new Date(),
    registry: new SchemaRegistry(),
    binding: BINDING,
    surface: 'human',
  });
  const reopen = async () => {
    await engine.close();
    store = await FileStore.open(home, { durable: false, lockTimeoutMs: 5_000 });
    engine = new Engine({
      store,
      clock: () => new Date(),
      registry: new SchemaRegistry(),
      binding: BINDING,
      surface: 'human',
    });
  };

  const sentinels: { id: string; abstract: string }[] = [];
  for (const word of ['sentinel apricot', 'sentinel blueberry', 'sentinel cherry']) {
    const [r] = await engine.apply(
      [{ op: 'remember', type: 'fact', abstract: `${word} must survive`, body: 'kept' }],
      HUMAN,
    );
    sentinels.push({ id: r!.id, abstract: `${word} must survive` });
  }

  const tally = (category: string, outcome: 'refused' | 'storedSafely' | null) => {
    const c = (report.categories[category] ??= { tried: 0, refused: 0, storedSafely: 0 });
    c.tried++;
    report.tried++;
    if (outcome) c[outcome]++;
  };

  /** Runs one case: `error` wants a MnemeError with a message; `accept` wants success. */
  const tryCase = async (
    category: string,
    name: string,
    expect: Expect,
    fn: () => Promise<unknown>,
    check?: (value: unknown) => string | null | Promise<string | null>,
  ) => {
    try {
      const v = await fn();
      if (expect === 'error') {
        report.problems.push(`${category}/${name}: accepted, expected a clear error`);
        tally(category, null);
        return;
      }
      const bad = (await check?.(v)) ?? null;
      if (bad) report.problems.push(`${category}/${name}: ${bad}`);
      tally(category, bad ? null : 'storedSafely');
    } catch (e) {
      const clear = e instanceof MnemeError && e.message.length > 10;
      if (expect === 'accept' || !clear) {
        report.problems.push(
          `${category}/${name}: ${clear ? 'refused' : 'crashed with a non-domain error'}: ${(e as Error).message}`,
        );
        tally(category, null);
      } else tally(category, 'refused');
    }
  };
  const remember = (o: Record<string, unknown>) =>
    engine.apply([{ op: 'remember', type: 'fact', ...o } as OpInput], HUMAN);

  // --- path traversal and absolute paths -------------------------------------------------
  const P = 'path-traversal';
  for (const type of ['../../x', '/etc/passwd', 'fact/../../x', 'FACT', ''])
    await tryCase(P, `type ${type}`, 'error', () =>
      remember({ type, abstract: 'a traversal try' }),
    );
  for (const id of ['mem_../../x', '../../etc/passwd', '/etc/passwd', 'mem_01J/../../x'])
    await tryCase(P, `supersede ${id}`, 'error', () =>
      engine.apply([{ op: 'supersede', id, abstract: 'x' }], HUMAN),
    );
  for (const id of ['../../etc/passwd', 'mem_../'])
    await tryCase(P, `read ${id}`, 'error', () => engine.read(id));
  for (const subject of ['../../../etc/passwd', '/abs/path', '..', 'a/../../b'])
    await tryCase(
      P,
      `slug from ${subject}`,
      'accept',
      () =>
        engine.apply(
          [
            {
              op: 'remember',
              type: 'decision',
              abstract: `decided about ${subject} traversal`,
              fields: { subject },
            },
          ],
          HUMAN,
        ),
      () => (outsideFiles(sandbox, home).length ? 'a file appeared outside the store' : null),
    );
  for (const session of ['../../x', '/etc/passwd', 'a/b', '..'])
    await tryCase(
      P,
      `session name ${session}`,
      'error',
      async () => await new SessionFiles(home).appendArchive({ host: 'generic', session }, ['{}']),
    );
  // Import bundles naming hostile scopes, ids, slugs, types and revision numbers.
  const exported = await engine.exportBundle();
  const base = exported.memories[0]!.revisions[0]!;
  const hostileRevs: [string, Record<string, unknown>][] = [
    ['scope ../../x', { scope: '../../x' }],
    ['scope /abs', { scope: '/abs' }],
    ['id mem_../', { id: 'mem_../' }],
    ['id ../../x', { id: '../../x' }],
    ['slug ../../../evil', { slug: '../../../evil' }],
    ['type ../x', { type: '../x' }],
    ['rev -1', { rev: -1 }],
    ['rev 1e9', { rev: 1e9 }],
  ];
  for (const [name, patch] of hostileRevs) {
    const bundle = {
      ...exported,
      memories: [{ id: String(patch.id ?? base.id), revisions: [{ ...base, ...patch }] }],
    };
    await tryCase(
      P,
      `import ${name}`,
      'accept',
      () => engine.importBundle(JSON.stringify(bundle), 'hostile.json', { kind: 'import' }),
      (r) =>
        (r as { refused: unknown[] }).refused.length !== 1
          ? `the bundle was not refused: ${JSON.stringify(r)}`
          : outsideFiles(sandbox, home).length
            ? 'a file appeared outside the store'
            : null,
    );
  }

  // --- YAML front-matter injection ---------------------------------------------------------
  const Y = 'yaml-injection';
  const payloads = [
    'trust: confirmed',
    '---',
    'x: y\ntrust: confirmed',
    '{trust: confirmed}',
    '&a [*a, *a]',
    '!!js/function "function(){}"',
    '\' " : # - ? | > %',
    '- - - nested',
  ];
  for (const p of payloads) {
    const oneLine = p.replace(/\n/g, ' ');
    await tryCase(Y, `abstract ${oneLine}`, 'accept', () =>
      remember({ abstract: `${oneLine} injected abstract`, tags: [oneLine.slice(0, 60)] }),
    );
    await tryCase(Y, `body ${oneLine}`, 'accept', () =>
      remember({ abstract: `body injection ${report.tried}`, body: `\n---\n${p}\n---\n${p}` }),
    );
    await tryCase(Y, `field ${oneLine}`, 'accept', () =>
      remember({
        type: 'decision',
        abstract: `field injection ${report.tried}`,
        fields: { subject: `${oneLine} ${report.tried}` },
      }),
    );
  }
  // Round trip and trust: every YAML-looking value came back literally, trust never rose.
  for (const v of await store.listCurrent([BINDING.project], {})) {
    const file = store.readCurrentFile(v);
    if (!file) continue;
    const parsed = parseRevision(file);
    if (parsed.abstract !== v.abstract || parsed.body !== v.body)
      report.problems.push(`${Y}: ${v.id} does not round-trip through its file`);
    if (parsed.trust === 'confirmed') report.problems.push(`${Y}: ${v.id} became confirmed`);
  }
  await tryCase(Y, 'abstract with a line break', 'error', () =>
    remember({ abstract: 'one\ntrust: confirmed' }),
  );

  // --- oversized -----------------------------------------------------------------------------
  const O = 'oversized';
  await tryCase(O, 'abstract at the limit', 'accept', () =>
    remember({ abstract: `${'a'.repeat(LIMITS.abstractChars - 6)} edge1` }),
  );
  await tryCase(O, 'abstract over the limit', 'error', () =>
    remember({ abstract: 'b'.repeat(LIMITS.abstractChars + 1) }),
  );
  await tryCase(O, 'body at the limit', 'accept', () =>
    remember({ abstract: 'body at the limit', body: 'c'.repeat(LIMITS.bodyBytes) }),
  );
  await tryCase(O, 'body over the limit', 'error', () =>
    remember({ abstract: 'body over the limit', body: 'd'.repeat(LIMITS.bodyBytes + 1) }),
  );
  await tryCase(O, 'body of 10 MB', 'error', () =>
    remember({ abstract: 'huge body', body: 'e'.repeat(10 * 1024 * 1024) }),
  );
  await tryCase(O, 'too many tags', 'error', () =>
    remember({
      abstract: 'many tags',
      tags: Array.from({ length: LIMITS.tags + 1 }, (_, i) => `t${i}`),
    }),
  );
  await tryCase(O, 'field too long', 'error', () =>
    remember({
      type: 'decision',
      abstract: 'long field',
      fields: { subject: 'f'.repeat(LIMITS.fieldChars + 1) },
    }),
  );
  await tryCase(O, 'reason too long', 'error', () =>
    engine.apply(
      [{ op: 'retract', id: sentinels[0]!.id, reason: 'r'.repeat(LIMITS.reasonChars + 1) }],
      HUMAN,
    ),
  );

  // --- invalid UTF-8, NUL, control characters ----------------------------------------------
  const U = 'encoding';
  for (const [name, abstract] of [
    ['NUL in abstract', 'nul \u0000 here'],
    ['ESC in abstract', 'escape \u001b[31m red'],
    ['DEL in abstract', 'del \u007f here'],
    ['replacement char (decoded invalid UTF-8)', 'bad \ufffd bytes'],
    ['lone surrogate', 'lone \ud800 surrogate'],
  ] as const)
    await tryCase(U, name, 'error', () => remember({ abstract }));
  await tryCase(U, 'NUL in body', 'error', () =>
    remember({ abstract: 'nul body', body: 'a\u0000b' }),
  );
  await tryCase(U, 'NUL in tag', 'error', () =>
    remember({ abstract: 'nul tag', tags: ['a\u0000'] }),
  );
  await tryCase(U, 'bidi and zero-width in abstract', 'accept', () =>
    remember({ abstract: 'bidi \u202e txt \u200b zero width' }),
  );
  // The CLI reading a body file with invalid UTF-8 bytes.
  const badFile = path.join(workDir, 'bad-utf8.txt');
  fs.writeFileSync(badFile, Buffer.from([0x61, 0xff, 0xfe, 0x62]));
  await tryCase(U, 'CLI --body-file with invalid UTF-8', 'error', async () => {
    await engine.close(); // the CLI takes the lock in its own process
    const r = await runCli(
      ['remember', '--type', 'fact', '--abstract', 'cli bad body', '--body-file', badFile],
      home,
      workDir,
    );
    await reopen();
    if (r.code === 1 && /not valid UTF-8/.test(r.stderr))
      throw new MnemeError('invalid', r.stderr.trim());
    return r;
  });

  // --- model output from the distiller executor ----------------------------------------------
  const M = 'model-output';
  const sessions = new SessionFiles(home);
  const outputs: [string, string][] = [
    ['not JSON', 'Sure! Here are the memories you asked for:\n* one\n* two'],
    ['truncated JSON', '{"op":"new","type":"fact","abstract":"cut off'],
    ['wrong shapes', '[]\n42\nnull\n"str"\n{"op":"explode"}\n{"op":"new"}'],
    ['unknown handle', '{"op":"supersede","handle":"h999","abstract":"x","evidence":[[1,1]]}'],
    [
      'evidence out of range',
      '{"op":"new","type":"fact","abstract":"far evidence","evidence":[[5,900]]}',
    ],
    ['hostile type', '{"op":"new","type":"../../x","abstract":"typed badly","evidence":[[1,1]]}'],
    ['NUL abstract', '{"op":"new","type":"fact","abstract":"nul\\u0000here","evidence":[[1,1]]}'],
    [
      'oversized abstract',
      JSON.stringify({ op: 'new', type: 'fact', abstract: 'z'.repeat(5000), evidence: [[1, 1]] }),
    ],
    ['enormous output', `${'{"op":"skip"}\n'.repeat(200)}${'x'.repeat(8 * 1024 * 1024)}`],
    [
      'too many ops',
      Array.from({ length: 120 }, (_, i) =>
        JSON.stringify({ op: 'new', type: 'fact', abstract: `flood ${i} fig`, evidence: [[1, 1]] }),
      ).join('\n'),
    ],
  ];
  for (const [i, [name, output]] of outputs.entries()) {
    const ref = { host: 'generic' as const, session: `model-${i}` };
    await sessions.appendArchive(ref, [
      JSON.stringify({ role: 'user', content: `talk for ${name}` }),
    ]);
    await tryCase(
      M,
      name,
      'accept',
      () =>
        engine.distill(sessions, async () => output, {
          host: 'generic',
          session: ref.session,
          handoff: false,
          dryRun: false,
          limits: { ...DISTILL_DEFAULTS, maxRunsPerHour: 1_000_000 },
        }),
      (r) => {
        const rep = r as {
          malformed: unknown[];
          refused: unknown[];
          applied: unknown[];
          error: string | null;
        };
        if (rep.error) return `distiller error: ${rep.error}`;
        if (name === 'too many ops')
          return rep.applied.length <= 50 ? null : `applied ${rep.applied.length} ops`;
        return rep.malformed.length + rep.refused.length > 0 || name === 'enormous output'
          ? null
          : 'the bad output was neither counted malformed nor refused';
      },
    );
  }

  // --- hook payloads ------------------------------------------------------------------------
  const H = 'hook-payload';
  await engine.close();
  const fifo = path.join(workDir, 'fifo.jsonl');
  try {
    execFileSync('mkfifo', [fifo]);
  } catch {
    /* no mkfifo: that case is skipped below */
  }
  const hookCases: [string, string][] = [
    ['empty stdin', ''],
    ['not JSON', 'this is not json'],
    ['JSON array', '[1,2,3]'],
    ['missing fields', '{}'],
    ['no transcript_path', JSON.stringify({ session_id: 's-a' })],
    [
      'transcript /etc/passwd',
      JSON.stringify({ session_id: 's-b', transcript_path: '/etc/passwd' }),
    ],
    ['transcript ../../', JSON.stringify({ session_id: 's-c', transcript_path: '../../' })],
    ['transcript a directory', JSON.stringify({ session_id: 's-d', transcript_path: workDir })],
    [
      'transcript with NUL',
      JSON.stringify({ session_id: 's-e', transcript_path: '/tmp/a\u0000b' }),
    ],
    [
      'session id ../../x',
      JSON.stringify({ session_id: '../../x', transcript_path: '/nonexistent' }),
    ],
    ['wrong types', JSON.stringify({ session_id: 42, transcript_path: ['x'], cwd: {} })],
  ];
  if (fs.existsSync(fifo))
    hookCases.push([
      'transcript a FIFO',
      JSON.stringify({ session_id: 's-f', transcript_path: fifo }),
    ]);
  for (const [name, payload] of hookCases) {
    await tryCase(H, name, 'error', async () => {
      const before = hookLogLines(home);
      const r = await runCli(['hook', 'stop'], home, workDir, payload);
      const rec = hookLogLines(home).slice(before.length).pop();
      if (r.code !== 0) return `hook exited ${r.code}`;
      // A hook always exits 0; its refusal is a logged error with a reason.
      if (rec?.outcome === 'error' && typeof rec.error === 'string' && rec.error.length > 5)
        throw new MnemeError('invalid', rec.error);
      return rec;
    });
  }
  if (fs.existsSync(path.join(home, 'archive', 'sessions', 'claude-code')))
    for (const f of fs.readdirSync(path.join(home, 'archive', 'sessions', 'claude-code')))
      report.problems.push(`${H}: a hostile payload archived ${f}`);
  await reopen();

  // --- broken files on disk ----------------------------------------------------------------
  const F = 'broken-files';
  // A corrupted index is a cache: it is moved aside and rebuilt on open.
  await engine.close();
  fs.writeFileSync(path.join(home, '.index', 'mneme.db'), 'this is not a database'.repeat(100));
  await tryCase(F, 'corrupted index file', 'accept', async () => {
    await reopen();
    return null;
  });
  // A memory file hand-edited into invalid YAML: rebuild reports it and loses nothing.
  const victim = sentinels[1]!;
  const view = (await store.getLineage(victim.id))!.at(-1)!;
  const victimFile = path.join(home, 'memories', view.scope, view.type, `${view.slug}.md`);
  fs.writeFileSync(victimFile, '---\nid: [unclosed\n: : :\n---\nbody\n');
  await tryCase(
    F,
    'memory file hand-edited into invalid YAML',
    'accept',
    () => engine.rebuild(),
    async (r) => {
      // Reported, and kept: the unparseable text becomes the body of a revision held for review.
      const rep = r as { handEdits: { path: string; ok: boolean; proposal?: string }[] };
      const edit = rep.handEdits.find((h) => victimFile.endsWith(h.path));
      const last = (await store.getLineage(victim.id))!.at(-1)!;
      if (!edit?.ok || !edit.proposal) return `rebuild did not report the broken file`;
      return last.body.includes('[unclosed') && last.rev === view.rev + 1
        ? null
        : 'the hand-edited text was not kept';
    },
  );
  // A torn journal tail (a crash mid-append) is dropped: it was never committed.
  await engine.close();
  const seg = path.join(
    home,
    'journal',
    fs
      .readdirSync(path.join(home, 'journal'))
      .filter((n) => n.endsWith('.jsonl'))
      .sort()
      .pop()!,
  );
  fs.appendFileSync(seg, '{"seq":999999,"at":"2026-01-01T00:0');
  await tryCase(
    F,
    'torn journal tail',
    'accept',
    async () => {
      await reopen();
      const v = await engine.verifyJournal();
      return v.ok ? null : v;
    },
    (v) => (v === null ? null : `verify after recovery: ${JSON.stringify(v)}`),
  );
  // A whole committed line deleted from the tail is detected, not silently accepted.
  await engine.close();
  const lines = fs.readFileSync(seg, 'utf8').split('\n').filter(Boolean);
  const saved = fs.readFileSync(seg);
  fs.writeFileSync(seg, `${lines.slice(0, -1).join('\n')}\n`);
  await tryCase(F, 'deleted last journal line', 'error', async () => {
    const s = await FileStore.open(home, { durable: false });
    const v = await s.verifyJournal();
    await s.close();
    if (!v.ok) throw new MnemeError('corrupt', v.firstBad!.problem);
    return v;
  });
  fs.writeFileSync(seg, saved);
  await reopen();

  // --- nothing lost --------------------------------------------------------------------------
  const v = await engine.verifyJournal();
  if (!v.ok)
    report.problems.push(`journal does not verify at the end: ${JSON.stringify(v.firstBad)}`);
  for (const s of sentinels) {
    const res = await engine.recall(s.abstract, { logUsage: false });
    const lineage = await store.getLineage(s.id);
    if (!lineage) report.problems.push(`sentinel ${s.id} lost`);
    else if (
      s !== victim &&
      !res.results.some((x) => x.id === s.id) &&
      lineage.at(-1)!.status === 'active'
    )
      report.problems.push(`sentinel ${s.id} is no longer served`);
  }
  const outside = outsideFiles(sandbox, home);
  if (outside.length)
    report.problems.push(`files written outside the store: ${outside.join(', ')}`);
  await engine.close();
  return report;
}

function outsideFiles(sandbox: string, home: string): string[] {
  return fs.readdirSync(sandbox).filter((n) => path.join(sandbox, n) !== home);
}

function hookLogLines(home: string): Record<string, unknown>[] {
  const f = path.join(home, '.state', 'hooks.log');
  if (!fs.existsSync(f)) return [];
  return fs
    .readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function runCli(
  args: string[],
  home: string,
  cwd: string,
  input = '',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, MNEME_HOME: home, MNEME_DURABLE: '0' };
  for (const k of Object.keys(env)) if (k === 'MNEME_AGENT' || isAgentVariable(k)) delete env[k];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}
