// `mneme setup <host>`: merge mneme's MCP server and hook commands into a host's settings files.
// Idempotent (a second run writes nothing), never touches other entries, keeps a timestamped
// backup of every file before changing it, and --uninstall removes exactly what it added.
import fs from 'node:fs';
import path from 'node:path';
import { MnemeError } from '../../core/errors.js';
import { removeCodexMcpEntry, setCodexMcpEntry, type CodexMcpEntry } from './codex-toml.js';
import { removeHooks, removeMcpServer, setHooks, setMcpServer, type JsonObject } from './edits.js';
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

/** How files meant to be committed (project scope) start mneme: the command on each PATH. */
const PORTABLE: Invocation = { command: 'mneme', args: [] };

export function runSetup(request: SetupRequest): SetupReport {
  // Project files are committed and shared: they name no path of this machine (no node, no
  // checkout, no store). Each person's hooks and MCP server then use the same store, the one
  // their own MNEME_HOME or config chooses, because both are given none.
  const portable = request.scope === 'project';
  const req: SetupRequest = portable
    ? { ...request, invocation: PORTABLE, serverEnv: {}, hookStoreArgs: [] }
    : request;
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
  if (portable && !req.uninstall) {
    if (Object.keys(request.serverEnv).length > 0)
      report.notes.push(
        'project files name no store: hooks and the MCP server use the store of each person’s MNEME_HOME, MNEME_CONFIG or ~/.mneme; for this store on this machine run `mneme setup ' +
          req.host +
          ' --user` with it',
      );
    if (request.invocation.command !== PORTABLE.command)
      report.notes.push(
        'the host runs `mneme` from PATH, and it is not on yours: `npm install -g mneme` (or add it to the project’s devDependencies and put node_modules/.bin on PATH)',
      );
  } else if (!req.uninstall && request.invocation.args.some((a) => NPX_CACHE.test(a)))
    report.notes.push(
      `you ran setup through npx, so the host runs mneme from npx’s cache (${request.invocation.args[0]}), which npm may clear: \`npm install -g mneme\`, then run setup again`,
    );
  if (req.host === 'codex' && !req.uninstall)
    report.notes.push(
      'Codex runs new or changed hooks only once you trust them: start `codex` in a terminal and choose “Trust all and continue” (or review them in /hooks); docs/setup.md has the details.',
    );
  if (req.host === 'codex' && req.scope === 'project')
    report.notes.push('Codex reads a project .codex/ folder only when the project is trusted.');
  return report;
}

/** A package that `npx` fetched lives in npm's cache, under an `_npx` folder. */
export const NPX_CACHE = /[\\/]_npx[\\/]/;

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
      after = removeCodexMcpEntry(t.file, text);
      if (after !== text) changes.push('removed [mcp_servers.mneme]');
    } else {
      const entry = mcpEntry(req.host, req.invocation, req.serverEnv) as unknown as CodexMcpEntry;
      after = setCodexMcpEntry(t.file, text, entry);
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
