// CLI commands that connect mneme to agent hosts: `mcp` (the stdio MCP server), `setup` (wire a
// host's settings) and `doctor` (check the wiring end to end). The MCP SDK is loaded only by the
// commands that use it, so every other command (hooks above all) starts without paying for it.
import os from 'node:os';
import path from 'node:path';
import { Option } from 'commander';
import { MnemeError } from '../../core/errors.js';
import { urlHasSecret } from '../../core/redact.js';
import { mnemeBin } from '../install-root.js';
import { openEngine } from '../compose.js';
import { localRoot, storeLocation } from '../open.js';
import { findRepoRoot } from '../project.js';
import type { Check } from '../setup/doctor.js';
import { HOSTS, resolveInvocation, type Host } from '../setup/hosts.js';
import { ExitCode, type CliContext } from './run.js';

const homeOf = (env: NodeJS.ProcessEnv) => env.HOME || os.homedir();
const projectOf = (cwd: string) => findRepoRoot(cwd)?.root ?? path.resolve(cwd);

export function registerHostCommands(c: CliContext): void {
  const { program, io } = c;

  program
    .command('mcp')
    .description('run the MCP server over stdio, bound to the project of this directory')
    .action(async () => {
      const { serveStdio } = await import('../mcp/stdio.js');
      const { store, db, tenant, embedder, config } = c.globals();
      await serveStdio({
        store,
        db,
        tenant,
        config,
        embedder,
        cwd: io.cwd,
        env: io.env,
        stderr: io.stderr,
      });
    });

  program
    .command('setup')
    .description('wire mneme (MCP server and hooks) into an agent host’s settings')
    .addOption(new Option('--project', 'this repository’s settings').conflicts('user'))
    .option('--user', 'your user settings (default)')
    .option('--uninstall', 'remove exactly what setup added')
    .option('--dry-run', 'show what would change, write nothing')
    .option('--prompt-hook', 'also install the UserPromptSubmit hook (off by default)')
    .argument('<host>', HOSTS.join(' | '))
    .action(
      async (
        host: string,
        o: { project?: boolean; uninstall?: boolean; dryRun?: boolean; promptHook?: boolean },
      ) => {
        if (!(HOSTS as readonly string[]).includes(host)) {
          io.stderr(`mneme: unknown host "${host}"; choose one of ${HOSTS.join(', ')}\n`);
          throw new ExitCode(1);
        }
        const settings = c.settings();
        const target = settings.target();
        // The MCP server (its environment) and the hooks (flags on their command lines) are
        // pointed at the same store; the host files hold no password.
        const serverEnv: Record<string, string> = {};
        const hookStoreArgs: string[] = [];
        const named = settings.file && settings.file.source.kind !== 'file';
        if (named) {
          // A config file named by --config or $MNEME_CONFIG goes along (the store's own is found).
          serverEnv.MNEME_CONFIG = settings.file!.path;
          hookStoreArgs.push('--config', settings.file!.path);
        }
        const fromNamed = (key: string) => named && settings.sources[key]!.kind === 'file';
        if (target.kind === 'postgres') {
          if (!fromNamed('store.database_url')) {
            if (urlHasSecret(target.url) && o.uninstall !== true)
              throw new MnemeError(
                'refused',
                'setup would write the database password into the host’s config files',
                {
                  hint: 'put store.database_url in a config file and run `mneme --config FILE setup …`, or give the password through PGPASSWORD or ~/.pgpass and pass a URL without it',
                },
              );
            serverEnv.MNEME_DATABASE_URL = target.url;
            hookStoreArgs.push('--db', target.url);
          }
          if (!fromNamed('store.tenant')) {
            serverEnv.MNEME_TENANT = target.tenant;
            hookStoreArgs.push('--tenant', target.tenant);
          }
        } else if (settings.sources['store.home']!.kind !== 'default' && !fromNamed('store.home')) {
          serverEnv.MNEME_HOME = target.root;
          hookStoreArgs.push('--store', target.root);
        }
        const { runSetup } = await import('../setup/setup.js');
        const r = runSetup({
          host: host as Host,
          scope: o.project ? 'project' : 'user',
          uninstall: o.uninstall === true,
          dryRun: o.dryRun === true,
          promptHook: o.promptHook === true,
          home: homeOf(io.env),
          project: projectOf(io.cwd),
          invocation: resolveInvocation(io.env, mnemeBin()),
          serverEnv,
          hookStoreArgs,
          now: new Date(),
        });
        c.out(r, () =>
          [
            `${r.dryRun ? '[dry run] ' : ''}${r.uninstall ? 'uninstall' : 'setup'} ${r.host} (${r.scope})`,
            ...r.files.map(
              (f) =>
                `  ${f.action.padEnd(9)} ${f.file}${f.changes.length ? ` — ${f.changes.join('; ')}` : ''}${f.backup ? `\n            backup: ${f.backup}` : ''}`,
            ),
            ...r.notes.map((n) => `  note: ${n}`),
          ].join('\n'),
        );
      },
    );

  program
    .command('doctor')
    .description(
      "check the store, each host's configured MCP entry and hooks (run as the host runs them), the distiller and hook runs",
    )
    .option(
      '--fix',
      "also refresh what doctor can bring up to date itself: the project's knowledge index",
    )
    .action(async (o: { fix?: boolean }) => {
      const { runDoctor } = await import('../setup/doctor.js');
      const checks = await runDoctor({
        // The hosts' environment is this one: doctor runs their commands in it as they would.
        env: io.env,
        cwd: io.cwd,
        home: homeOf(io.env),
        project: projectOf(io.cwd),
        storeDir: localRoot(c.globals(), io.env),
        settings: c.settings(),
        store: storeLocation(c.settings().target()),
        openEngine: () =>
          openEngine({ settings: c.settings(), cwd: io.cwd, env: io.env, surface: 'human' }),
        hasHookCommand: program.commands.some((cmd) => cmd.name() === 'hook'),
      });
      if (o.fix) checks.push(await refreshKnowledgeCheck(c, io.cwd, io.env));
      const failed = checks.some((k) => k.status === 'fail');
      c.out({ ok: !failed, checks }, () => formatChecks(checks));
      if (failed) throw new ExitCode(1);
    });
}

/** `doctor --fix`: the knowledge index refreshed (a cache: a failure is a warning, not a fault). */
async function refreshKnowledgeCheck(
  c: CliContext,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<Check> {
  const { knowledgeOptions } = await import('./knowledge.js');
  try {
    const engine = await openEngine({ settings: c.settings(), cwd, env, surface: 'human' });
    try {
      const r = await engine.refreshKnowledge(knowledgeOptions(c.settings().settings));
      return {
        check: 'knowledge',
        status: 'ok',
        detail: `refreshed: ${r.files} files, ${r.chunks} chunks (${r.changed} changed, ${r.removed} removed, ${r.skipped.length} skipped)`,
      };
    } finally {
      await engine.close();
    }
  } catch (e) {
    return {
      check: 'knowledge',
      status: 'warn',
      detail: `not refreshed: ${(e as Error).message}`,
      fix: 'run `mneme knowledge refresh` inside the repository',
    };
  }
}

function formatChecks(checks: Check[]): string {
  const width = Math.max(...checks.map((k) => k.check.length));
  return checks
    .map(
      (k) =>
        `${k.status.padEnd(4)}  ${k.check.padEnd(width)}  ${k.detail}${k.fix && k.status !== 'ok' ? `\n${' '.repeat(width + 8)}→ ${k.fix}` : ''}`,
    )
    .join('\n');
}
