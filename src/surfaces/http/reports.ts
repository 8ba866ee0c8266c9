// Sleep and fsck reports: readable files under `<store>/reports/`, listed newest first and opened
// by their relative name. Names are checked against a strict pattern and resolved inside the
// directory, so a request can never read outside it. What a caller is listed and served is the
// engine's outbound filter's decision (engine/outbound.ts): the scopes a report covers against
// what the caller may read, and each line held against tombstones and purge keys when served.
import fs from 'node:fs';
import path from 'node:path';
import { MnemeError } from '../../core/errors.js';
import type { Engine } from '../../engine/engine.js';

export interface ReportEntry {
  name: string;
  kind: string;
  size: number;
  modified: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,120}(\/[A-Za-z0-9][A-Za-z0-9._-]{0,120})?$/;

export function listReports(dir: string | null): ReportEntry[] {
  if (!dir || !fs.existsSync(dir)) return [];
  const out: ReportEntry[] = [];
  const walk = (sub: string, depth: number) => {
    for (const e of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${e.name}` : e.name;
      if (e.isDirectory() && depth === 0) walk(rel, 1);
      else if (e.isFile() && NAME.test(rel)) {
        const st = fs.statSync(path.join(dir, rel));
        const kind = /fsck/i.test(rel) ? 'fsck' : /sleep|dream/i.test(rel) ? 'sleep' : 'report';
        out.push({ name: rel, kind, size: st.size, modified: st.mtime.toISOString() });
      }
    }
  };
  walk('', 0);
  return out.sort((a, b) => (a.modified < b.modified ? 1 : a.modified > b.modified ? -1 : 0));
}

/** The first line of a report (where its scopes stand), or '' when it cannot be read. */
function headOf(file: string): string {
  let fd: number | null = null;
  try {
    fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(2048);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}

/** The reports the engine's reader may see, newest first. */
export function servedReports(engine: Engine, dir: string | null): ReportEntry[] {
  if (!dir) return [];
  return listReports(dir).filter((r) => engine.mayReadReport(headOf(path.join(dir, r.name))));
}

/** One report as the engine's reader is served it (not found when it may not read it). */
export async function servedReport(
  engine: Engine,
  dir: string | null,
  name: string,
): Promise<string> {
  return engine.serveReport(name, readReport(dir, name));
}

export function readReport(dir: string | null, name: string): string {
  const missing = new MnemeError('not_found', `no report named ${name.slice(0, 120)}`, {
    hint: 'list them with GET /api/reports',
  });
  if (!dir || !NAME.test(name) || name.split('/').some((s) => s === '..' || s === '.'))
    throw missing;
  const abs = path.resolve(dir, name);
  if (path.relative(dir, abs).startsWith('..')) throw missing;
  try {
    const st = fs.statSync(abs);
    if (!st.isFile()) throw missing;
    if (st.size > 4 * 1024 * 1024)
      throw new MnemeError('invalid', `report ${name} is larger than 4 MiB; open it on disk`);
    return fs.readFileSync(abs, 'utf8');
  } catch (e) {
    if (e instanceof MnemeError) throw e;
    throw missing;
  }
}
