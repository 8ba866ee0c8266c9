// `mneme setup <host>`: merge mneme's MCP server and hook commands into a host's settings files.
// Idempotent (a second run writes nothing), never touches other entries, keeps a timestamped
// backup of every file before changing it, and --uninstall removes exactly what it added.
import fs from 'node:fs';
import path from 'node:path';
import { MnemeError } from '../../core/errors.js';
import {
  foreignMcpTable,
  removeHooks,
  removeMcpServer,
  removeTomlBlock,
  setHooks,
  setMcpServer,
  setTomlBlock,
  tomlMcpBlock,
  type JsonObject,
} from './edits.js';
import {
  hookSpecs,
  mcpEntry,
  targets,
  type Host,
  type Invocation,
  type SetupScope,
  type Target,
} from './hosts.js';

export interface SetupRequest {
  host: Host;
  scope: SetupScope;
  uninstall: boolean;
  dryRun: boolean;
  promptHook: boolean;
  home: string;
  project: string;
  invocation: Invocation;
  /** Environment the MCP server needs (MNEME_HOME when the store is not the default). */
  serverEnv: Record<string, string>;
  /** The same store for the hooks, as flags after `hook <event>` (none for the default store). */
  hookStoreArgs?: string[];
  now: Date;
}

export interface FileOutcome {
  file: string;
  action: 'created' | 'updated' | 'unchanged' | 'removed';
  changes: string[];
  backup: string | null;
}

export interface SetupReport {
  host: Host;
  scope: SetupScope;
  uninstall: boolean;
  dryRun: boolean;
  files: FileOutcome[];
  notes: string[];
}

export function runSetup(req: SetupRequest): SetupReport {
  const specs = hookSpecs(req.host, req.invocation, {
    promptHook: req.promptHook,
    storeArgs: req.hookStoreArgs,
  });
  const files = targets(req.host, req.scope, { home: req.home, project: req.project }, specs);
  const report: SetupReport = {
    host: req.host,
    scope: req.scope,
    uninstall: req.uninstall,
    dryRun: req.dryRun,
    files: [],
    notes: [],
  };
  // Plan every file first so a parse error in one leaves all of them untouched.
  const plans = files.map((t) => plan(t, req));
  for (const p of plans) {
    report.files.push(p.outcome);
    if (!req.dryRun && p.outcome.action !== 'unchanged') commit(p, req.now);
  }
  if (req.host === 'codex' && !req.uninstall)
    report.notes.push(
      'Codex asks you to review and trust new hooks before they run: open /hooks in Codex once.',
    );
  if (req.host === 'codex' && req.scope === 'project')
    report.notes.push('Codex reads a project .codex/ folder only when the project is trusted.');
  return report;
}

interface Plan {
  target: Target;
  before: string | null;
  after: string | null;
  outcome: FileOutcome;
}

function plan(t: Target, req: SetupRequest): Plan {
  const before = readText(t.file);
  const changes: string[] = [];
  let after: string | null;
  if (t.format === 'toml') {
    const text = before ?? '';
    if (req.uninstall) {
      after = removeTomlBlock(text);
      if (after !== text) changes.push('removed [mcp_servers.mneme]');
    } else {
      if (foreignMcpTable(text))
        throw new MnemeError(
          'conflict',
          `${t.file} already has an [mcp_servers.mneme] table that mneme did not write`,
          { hint: 'remove or rename that table, then run setup again' },
        );
      const entry = mcpEntry(req.host, req.invocation, req.serverEnv) as {
        command: string;
        args: string[];
        env?: Record<string, string>;
      };
      after = setTomlBlock(text, tomlMcpBlock(entry));
      if (after !== text) changes.push('set [mcp_servers.mneme]');
    }
    if (after.trim() === '' && before !== null && req.uninstall) after = null;
  } else {
    const doc = parseJson(t.file, before);
    const indent = detectIndent(before);
    if (t.mcpKey) {
      const changed = req.uninstall
        ? removeMcpServer(doc, t.mcpKey)
        : setMcpServer(doc, t.mcpKey, mcpEntry(req.host, req.invocation, req.serverEnv));
      if (changed) changes.push(`${req.uninstall ? 'removed' : 'set'} ${t.mcpKey}.mneme`);
    }
    if (t.hooks && t.hooks.length > 0) {
      const changed = req.uninstall ? removeHooks(doc) : setHooks(doc, t.hooks);
      if (changed)
        changes.push(
          req.uninstall
            ? 'removed mneme hook commands'
            : `hooks: ${t.hooks.map((h) => `${h.hostEvent}${h.matcher ? `(${h.matcher})` : ''}`).join(', ')}`,
        );
    }
    if (changes.length === 0) after = before;
    else if (req.uninstall && Object.keys(doc).length === 0) after = null;
    else after = `${JSON.stringify(doc, null, indent)}\n`;
  }
  const action: FileOutcome['action'] =
    changes.length === 0 || after === before
      ? 'unchanged'
      : after === null
        ? 'removed'
        : before === null
          ? 'created'
          : 'updated';
  return {
    target: t,
    before,
    after,
    outcome: { file: t.file, action, changes: action === 'unchanged' ? [] : changes, backup: null },
  };
}

function commit(p: Plan, now: Date): void {
  const file = p.target.file;
  if (p.before !== null) {
    const stamp = now.toISOString().replace(/[:.]/g, '-');
    let backup = `${file}.mneme-backup-${stamp}`;
    for (let i = 1; fs.existsSync(backup); i++) backup = `${file}.mneme-backup-${stamp}-${i}`;
    fs.copyFileSync(file, backup);
    p.outcome.backup = backup;
  }
  if (p.after === null) {
    fs.rmSync(file, { force: true });
    return;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.mneme-tmp-${process.pid}`;
  fs.writeFileSync(tmp, p.after, { mode: statMode(file) });
  fs.renameSync(tmp, file);
}

const statMode = (file: string) => {
  try {
    return fs.statSync(file).mode & 0o777;
  } catch {
    return 0o644;
  }
};

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new MnemeError('invalid', `cannot read ${file}: ${(e as Error).message}`);
  }
}

function parseJson(file: string, text: string | null): JsonObject {
  if (text === null || text.trim() === '') return {};
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new MnemeError('invalid', `${file} is not valid JSON (${(e as Error).message})`, {
      hint: 'fix the file by hand (nothing was changed), then run setup again',
    });
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new MnemeError('invalid', `${file} does not hold a JSON object; nothing was changed`);
  return doc as JsonObject;
}

/** Keep the file's own indentation (two spaces when new). */
function detectIndent(text: string | null): string | number {
  const m = text ? /^[{[]\s*\n([ \t]+)\S/.exec(text) : null;
  return m ? m[1]! : 2;
}
