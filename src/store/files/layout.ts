// Where each kind of truth lives in an embedded store (DESIGN §3), and the guard that keeps
// every computed path inside the store root whatever names reach it.
import path from 'node:path';
import { MnemeError } from '../../core/errors.js';
import { ID_PATTERN } from '../../core/ids.js';
import { SCOPE_PATTERN } from '../../core/scope.js';
import { SAFE_NAME } from '../../core/slug.js';

export class Layout {
  constructor(readonly root: string) {}

  private inside(...parts: string[]): string {
    const p = path.resolve(this.root, ...parts);
    const rel = path.relative(this.root, p);
    if (rel.startsWith('..') || path.isAbsolute(rel)) {
      throw new MnemeError('invalid', `refused a path outside the store: ${parts.join('/')}`);
    }
    return p;
  }

  get memoriesDir() {
    return this.inside('memories');
  }
  get historyDir() {
    return this.inside('history');
  }
  get journalDir() {
    return this.inside('journal');
  }
  get journalHeadFile() {
    return this.inside('journal', 'HEAD');
  }
  /** A chain break found by a check or a verify: every write refuses while it stands. */
  get journalBrokenFile() {
    return this.inside('.state', 'journal-broken.json');
  }
  get usageDir() {
    return this.inside('usage');
  }
  get stateDir() {
    return this.inside('.state');
  }
  get indexDir() {
    return this.inside('.index');
  }
  get indexFile() {
    return this.inside('.index', 'mneme.db');
  }
  /** The knowledge index (repository documents), a cache apart from the memory index. */
  get knowledgeFile() {
    return this.inside('.index', 'knowledge.db');
  }
  get lockFile() {
    return this.inside('.state', 'lock');
  }
  get intentFile() {
    return this.inside('.state', 'intent.json');
  }
  get tombstonesFile() {
    return this.inside('tombstones.jsonl');
  }
  get proposalsDir() {
    return this.inside('proposals');
  }
  proposalFile(id: string): string {
    checkName(id, /^prop_[0-9A-Z]{26}$/, 'proposal id');
    return this.inside('proposals', `${id}.json`);
  }
  get configFile() {
    return this.inside('config.toml');
  }

  currentFile(scope: string, type: string, slug: string): string {
    checkName(scope, SCOPE_PATTERN, 'scope');
    checkName(type, /^[a-z][a-z0-9_-]{0,39}$/, 'type');
    checkName(slug, SAFE_NAME, 'slug');
    return this.inside('memories', scope, type, `${slug}.md`);
  }

  historyFile(id: string, rev: number): string {
    checkName(id, ID_PATTERN, 'memory id');
    if (!Number.isInteger(rev) || rev < 1) throw new MnemeError('invalid', `bad revision ${rev}`);
    return this.inside('history', id, `${String(rev).padStart(6, '0')}.md`);
  }

  lineageDir(id: string): string {
    checkName(id, ID_PATTERN, 'memory id');
    return this.inside('history', id);
  }
}

function checkName(value: string, pattern: RegExp, what: string): void {
  if (!pattern.test(value)) {
    throw new MnemeError('invalid', `refused ${what} "${value.slice(0, 80)}": not a safe name`, {
      hint: `a ${what} may hold only lower-case letters, digits, ".", "_" and "-"`,
    });
  }
}
