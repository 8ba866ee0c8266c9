// Sleep and fsck reports: readable files under `<store>/reports/`, listed newest first and opened
// by their relative name. Names are checked against a strict pattern and resolved inside the
// directory, so a request can never read outside it.
import fs from 'node:fs';
import path from 'node:path';
import { MnemeError } from '../../core/errors.js';

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
