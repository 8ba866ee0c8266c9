// Team commands for a shared Postgres store: the global --db/--tenant options (which the normal
// commands honour too, via openEngine) and `tenant create`, `token create`. A token is printed
// once and stored only hashed; it maps to a tenant and optionally a project allow-list.
import { MnemeError } from '../../core/errors.js';
import type { CliContext } from './run.js';
import { createTenant, createToken } from '../compose.js';

// pg is loaded only when a team command runs.

const collect = (v: string, prev: string[] = []) => [...prev, v];

export function databaseUrl(c: CliContext): string {
  const url = c.settings().settings.store.database_url;
  if (!url) {
    throw new MnemeError('invalid', 'no database given', {
      hint: 'pass --db postgres://user@host/db, set MNEME_DATABASE_URL, or store.database_url in a --config file',
    });
  }
  return url;
}

export function registerTeam(c: CliContext): void {
  const program = c.program;
  program
    .option('--db <url>', 'a shared Postgres store (default: $MNEME_DATABASE_URL)')
    .option('--tenant <name>', 'the tenant of the --db store (default: $MNEME_TENANT)');

  program
    .command('tenant')
    .description('tenants of a shared Postgres store')
    .command('create')
    .description('create a tenant (its projects come into being with their first write)')
    .argument('<name>', 'lower-case letters, digits, - and _')
    .action(async (name: string) => {
      const created = await createTenant(databaseUrl(c), name);
      c.out({ tenant: name, created }, () =>
        created ? `created tenant ${name}` : `tenant ${name} already exists`,
      );
    });

  program
    .command('token')
    .description('API tokens of a shared Postgres store')
    .command('create')
    .description('create an API token for --tenant; it is printed once and stored hashed')
    .option(
      '--project <scope>',
      'allow only this project scope, as `mneme status` shows it (repeatable)',
      collect,
    )
    .option('--label <text>', 'a note to recognise the token by')
    .action(async (o: { project?: string[]; label?: string }) => {
      const tenant = c.settings().settings.store.tenant;
      if (!tenant) {
        throw new MnemeError('invalid', 'which tenant is the token for?', {
          hint: 'pass --tenant NAME',
        });
      }
      const token = await createToken(databaseUrl(c), {
        tenant,
        projects: o.project ?? null,
        label: o.label,
      });
      c.out({ token }, () => token);
      if (!c.globals().json)
        c.io.stderr(
          `token for tenant ${tenant}${o.project ? ` (projects: ${o.project.join(', ')})` : ''}; it is shown only this once\n`,
        );
    });
}
