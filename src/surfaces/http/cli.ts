// `mneme serve` (API, MCP over HTTP, dashboard) and `mneme ui` (the same server on loopback plus
// a one-time login URL for the person at the terminal). `ui` refuses inside an agent session:
// printing a login URL to an agent would hand it the human surface.

import { MnemeError } from '../../core/errors.js';
import { agentSessionMarker } from '../agent-env.js';
import type { CliContext } from '../cli/run.js';
import type { DbServeOptions, RunningServer, ServeOptions } from './server.js';

const DEFAULT_PORT = 7411;
/** Loaded on use, so other commands (hooks above all) do not pay for hono and the MCP SDK. */
const startServer = async (o: ServeOptions) => (await import('./server.js')).startServer(o);
const startDbServer = async (o: DbServeOptions) => (await import('./server.js')).startDbServer(o);

const parsePort = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new MnemeError('invalid', `--port must be 0 to 65535, not "${v}"`);
  return n;
};

/** Resolves when the process is asked to stop (Ctrl-C, SIGTERM). */
const untilStopped = (server: Pick<RunningServer, 'close'>) =>
  new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void server.close().then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });

export function registerServe(c: CliContext): void {
  const { program, io } = c;
  program
    .command('serve')
    .description('serve the HTTP API (/api), MCP over HTTP (/mcp) and the dashboard (/)')
    .option('--port <n>', 'port to listen on (0 picks a free one)', parsePort, DEFAULT_PORT)
    .option(
      '--host <addr>',
      'address to bind; anything but loopback needs --token-file',
      '127.0.0.1',
    )
    .option(
      '--token-file <file>',
      'bearer tokens, one per line (optionally followed by project ids)',
    )
    .addHelpText(
      'after',
      '\nWith --db postgres://… (or store.database_url, docs/configuration.md) the server is stateless: tokens come from\n' +
        'the database (`mneme token create`), every request needs one, and there is no dashboard.',
    )
    .action(async (o: { port: number; host: string; tokenFile?: string }) => {
      const settings = c.settings();
      const db =
        settings.storeKind === 'postgres' ? settings.settings.store.database_url : undefined;
      if (db) {
        if (o.tokenFile)
          throw new MnemeError('invalid', '--token-file does not apply with --db', {
            hint: 'tokens live in the database: `mneme token create --tenant NAME --db URL`',
          });
        const server = await startDbServer({
          db,
          settings,
          host: o.host,
          port: o.port,
          log: (l) => io.stderr(`${l}\n`),
        });
        io.stdout(
          `mneme serving ${server.url}  (API ${server.url}/api, MCP ${server.url}/mcp, metrics ${server.url}/metrics)\n`,
        );
        io.stdout('shared Postgres store: every request needs a bearer token; no dashboard\n');
        await untilStopped(server);
        return;
      }
      const server = await startServer({
        settings,
        cwd: io.cwd,
        env: io.env,
        host: o.host,
        port: o.port,
        tokenFile: o.tokenFile,
        log: (l) => io.stderr(`${l}\n`),
      });
      io.stdout(`mneme serving ${server.url}  (API ${server.url}/api, MCP ${server.url}/mcp)\n`);
      io.stdout('the dashboard needs a login: run `mneme ui` in your own terminal\n');
      await untilStopped(server);
    });

  program
    .command('ui')
    .description('open the dashboard: start the server on loopback and print a one-time login URL')
    .option('--port <n>', 'port to listen on (0 picks a free one)', parsePort, DEFAULT_PORT)
    .action(async (o: { port: number }) => {
      const marker = agentSessionMarker(io.env);
      if (marker)
        throw new MnemeError(
          'refused',
          `mneme ui refuses to run inside an agent session (${marker} is set)`,
          {
            hint: 'the dashboard is for a person: run `mneme ui` yourself in a terminal outside the agent',
          },
        );
      // The dashboard serves the embedded store: with --db it would show a store the flags did
      // not name, so it refuses (as `serve --db` has no dashboard).
      const settings = c.settings();
      if (settings.storeKind === 'postgres')
        throw new MnemeError('invalid', 'the dashboard runs on the embedded store, not with --db', {
          hint: 'run `mneme ui` without --db (or $MNEME_DATABASE_URL) for a local store',
        });
      const server = await startServer({
        settings,
        cwd: io.cwd,
        env: io.env,
        host: '127.0.0.1',
        port: o.port,
        log: (l) => io.stderr(`${l}\n`),
      });
      io.stdout(`mneme dashboard on ${server.url}\n`);
      io.stdout(
        `open this link to log in (works once, for 5 minutes):\n  ${server.url}/login?t=${server.sessions.issueTicket()}\n`,
      );
      await untilStopped(server);
    });
}
