// What every benchmark shares: reading data files (.json or .json.gz), a fresh store in a temp
// directory with an engine bound to a fixed project (binding never comes from the cwd here), built
// by the composition root like any surface's, the bench actor, run provenance (git commit, data
// sha256, machine) and a stderr progress line.
import { MONTH_NAMES } from '../../src/core/text.js';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { MnemeError } from '../../src/core/errors.js';
import { rankingModel, type RankingModel } from '../../src/core/ranking.js';
import { projectScope } from '../../src/core/scope.js';
import type { Clock } from '../../src/core/time.js';
import type { Actor } from '../../src/core/types.js';
import type { Engine } from '../../src/engine/engine.js';
import { createTenant, openEngine } from '../../src/surfaces/compose.js';
import pg from 'pg';

export const BENCH_ACTOR: Actor = { kind: 'human', surface: 'cli' };
export const BENCH_BINDING = { project: projectScope('bench:fixed', 'bench'), identity: 'bench' };

export interface DataFile {
  path: string;
  sha256: string;
  json: unknown;
}

export function readDataFile(file: string): DataFile {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch (e) {
    throw new MnemeError('invalid', `cannot read ${file}: ${(e as Error).message}`, {
      hint: 'pass --data with the path of a .json or .json.gz data file',
    });
  }
  const sha256 = crypto.createHash('sha256').update(buf).digest('hex');
  const gz = buf[0] === 0x1f && buf[1] === 0x8b;
  try {
    const text = (gz ? zlib.gunzipSync(buf) : buf).toString('utf8');
    return { path: path.resolve(file), sha256, json: JSON.parse(text) as unknown };
  } catch (e) {
    throw new MnemeError(
      'invalid',
      `${file} is not JSON${gz ? ' (gzip)' : ''}: ${(e as Error).message}`,
    );
  }
}

export interface BenchStore {
  dir: string;
  engine: Engine;
  dispose: () => Promise<void>;
}

/** With the vector arm on: embeds every revision now, so recall latency excludes it. */
export async function embedAll(engine: Engine): Promise<void> {
  const r = await engine.indexVectors();
  if (r.error) throw new MnemeError('internal', `the bench embedder failed: ${r.error}`);
}

/** A fresh store in a new temp directory; `dispose` closes it and deletes the directory. */
export async function freshStore(opts: {
  durable: boolean;
  clock?: Clock;
  dir?: string;
  /** Turns the vector arm on with this embedder (bench --vector; configured by MNEME_EMBED_*). */
  vector?: string;
  /** A variant of the ranking model (bench --ranker key=value, for ablations). */
  ranker?: Partial<RankingModel>;
  /** A Postgres database (bench --db URL): a fresh tenant in it instead of a files store. */
  db?: string;
}) {
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-bench-'));
  const pgTenant = opts.db ? await freshTenant(opts.db) : null;
  const engine = await openEngine({
    cwd: dir,
    ...(pgTenant ? { db: opts.db!, tenant: pgTenant } : { store: dir }),
    binding: BENCH_BINDING,
    surface: 'human',
    ...(opts.clock ? { clock: opts.clock } : {}),
    // The embedded store in the temp directory unless --db, whatever the caller's environment says.
    env: { ...process.env, MNEME_DATABASE_URL: '', MNEME_DURABLE: opts.durable ? '1' : '0' },
    embedder: opts.vector ?? 'off',
    ranking: rankingModel(opts.ranker),
  });
  let closed = false;
  const close = async () => {
    if (!closed) await engine.close();
    closed = true;
  };
  return {
    dir,
    engine,
    close,
    dispose: async () => {
      await close();
      fs.rmSync(dir, { recursive: true, force: true });
      if (pgTenant) await dropTenant(opts.db!, pgTenant);
    },
  };
}

/** A new tenant (`bench-<random>`) in a Postgres database, migrated first. */
async function freshTenant(url: string): Promise<string> {
  const name = `bench-${crypto.randomBytes(6).toString('hex')}`;
  await createTenant(url, name);
  return name;
}

/** Deletes a bench tenant's rows from every table keyed by tenant (the tenant row last). */
async function dropTenant(url: string, tenant: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const { rows } = await pool.query<{ t: string }>(
      `SELECT table_name AS t FROM information_schema.columns
       WHERE column_name = 'tenant_id' AND table_schema = current_schema()`,
    );
    const last = ['revisions', 'memories', 'tenants'];
    const tables = [...rows.map((r) => r.t).filter((t) => !last.includes(t)), ...last];
    for (const t of tables) {
      const key = t === 'tenants' ? 'name' : 'tenant_id';
      await pool.query(`DELETE FROM ${t} WHERE ${key} = $1`, [tenant]);
    }
  } finally {
    await pool.end();
  }
}

export function gitCommit(cwd = process.cwd()): string | null {
  try {
    const sha = execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
    return dirty ? `${sha}-dirty` : sha;
  } catch {
    return null;
  }
}

export function machine() {
  return {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
}

/** A single self-overwriting progress line on stderr (plain lines when stderr is not a TTY). */
export function progress(label: string, total: number, stderr: (s: string) => void) {
  const tty = process.stderr.isTTY === true;
  const started = Date.now();
  let last = 0;
  return {
    tick(done: number, note = '') {
      const now = Date.now();
      if (done < total && now - last < (tty ? 200 : 5000)) return;
      last = now;
      const pct = total > 0 ? Math.floor((done / total) * 100) : 100;
      const width = 24;
      const bar = '#'.repeat(Math.round((pct / 100) * width)).padEnd(width, '.');
      const secs = ((now - started) / 1000).toFixed(0);
      const line = `${label} [${bar}] ${done}/${total} ${pct}% ${secs}s ${note}`;
      stderr(tty ? `\r${line.padEnd(100)}` : `${line}\n`);
      if (tty && done >= total) stderr('\n');
    },
  };
}

// ---- dates of the data sets ---------------------------------------------------------------------

/** LongMemEval: `2023/05/20 (Sat) 02:21` → ISO UTC. */
export function parseSlashDate(s: string): string | null {
  const m = /^(\d{4})\/(\d{2})\/(\d{2})(?:\s*\([A-Za-z]+\))?(?:\s+(\d{1,2}):(\d{2}))?/.exec(
    s.trim(),
  );
  if (!m) return null;
  const d = new Date(
    Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0)),
  );
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

const MONTHS = MONTH_NAMES;

/** LoCoMo: `1:56 pm on 8 May, 2023` → ISO UTC. */
export function parseLocomoDate(s: string): string | null {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(s);
  if (!m) return null;
  const month = MONTHS.findIndex((x) => x.startsWith(m[5]!.toLowerCase().slice(0, 3)));
  if (month < 0) return null;
  let h = Number(m[1]) % 12;
  if (m[3]!.toLowerCase() === 'pm') h += 12;
  const d = new Date(Date.UTC(Number(m[6]), month, Number(m[4]), h, Number(m[2])));
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

// ---- splitting long text into memories ------------------------------------------------------------

/** Cuts text into pieces of at most maxBytes UTF-8 bytes, at line breaks where possible. */
export function splitBytes(text: string, maxBytes: number): string[] {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return [text];
  const out: string[] = [];
  let cur = '';
  const flush = () => {
    if (cur !== '') out.push(cur);
    cur = '';
  };
  for (const line of text.split('\n')) {
    const piece = cur === '' ? line : `${cur}\n${line}`;
    if (Buffer.byteLength(piece, 'utf8') <= maxBytes) {
      cur = piece;
      continue;
    }
    flush();
    if (Buffer.byteLength(line, 'utf8') <= maxBytes) {
      cur = line;
      continue;
    }
    // One line longer than the limit: cut by characters.
    let chunk = '';
    for (const ch of line) {
      if (Buffer.byteLength(chunk + ch, 'utf8') > maxBytes) {
        out.push(chunk);
        chunk = '';
      }
      chunk += ch;
    }
    cur = chunk;
  }
  flush();
  return out;
}

/** A one-line abstract of at most max characters. */
export function oneLine(text: string, max = 240): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = [...flat];
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join('')}…`;
}
