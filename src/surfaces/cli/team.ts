// Team commands for a shared Postgres store: the global --db/--tenant options (which the normal
// commands honour too, via openEngine), `tenant create|list|disable|enable` and
// `token create|list|revoke`. A token is printed once and stored only hashed; it maps to a tenant
// and optionally a project allow-list, and may expire. Every change is in the operator journal.
import { MnemeError } from '../../core/errors.js';
import type { CliContext } from './run.js';
import { namedProjectScope } from '../../core/scope.js';
import { withGovernance, type Governance } from '../compose.js';
import { day, table } from './format.js';

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

/** `--expires`: an ISO time, or a duration from now (`90d`, `12h`, `30m`, `2w`, `45s`). */
export function parseExpiry(value: string, now: Date = new Date()): Date {
  const v = value.trim();
  const d = /^(\d{1,9})([smhdw])$/.exec(v);
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
  const at = d
    ? new Date(now.getTime() + Number(d[1]) * unit[d[2] as keyof typeof unit])
    : /^\d{4}-\d{2}-\d{2}/.test(v)
      ? new Date(v)
      : new Date(NaN);
  if (Number.isNaN(at.getTime()))
    throw new MnemeError(
      'invalid',
      `--expires "${v.slice(0, 40)}" is neither a time nor a duration`,
      {
        hint: 'pass an ISO time (2027-01-31 or 2027-01-31T12:00:00Z) or a duration: 30m, 12h, 90d, 2w',
      },
    );
  if (at.getTime() <= now.getTime())
    throw new MnemeError(
      'invalid',
      `--expires ${v.slice(0, 40)} is in the past (${at.toISOString()})`,
      {
        hint: 'give a later time, or a duration from now such as 90d',
      },
    );
  return at;
}

const list = (p: string[] | null) => (p ? p.join(',') : '(all projects)');

export function registerTeam(c: CliContext): void {
  const program = c.program;
  program
    .option('--db <url>', 'a shared Postgres store (default: $MNEME_DATABASE_URL)')
    .option('--tenant <name>', 'the tenant of the --db store (default: $MNEME_TENANT)');
  const govern = <T>(fn: (g: Governance) => Promise<T>) => withGovernance(databaseUrl(c), fn);

  const tenant = program
    .command('tenant')
    .description('tenants of a shared Postgres store (each change is in the operator journal)');
  tenant
    .command('create')
    .description('create a tenant (its projects come into being with their first write)')
    .argument('<name>', 'lower-case letters, digits, - and _')
    .action(async (name: string) => {
      const created = await govern((g) => g.createTenant(name));
      c.out({ tenant: name, created }, () =>
        created ? `created tenant ${name}` : `tenant ${name} already exists`,
      );
    });
  tenant
    .command('list')
    .description('every tenant: created, disabled, live tokens')
    .action(async () => {
      const tenants = await govern((g) => g.listTenants());
      c.out({ tenants }, () =>
        tenants.length === 0
          ? 'no tenants: create one with `mneme tenant create NAME --db URL`'
          : table([
              ['TENANT', 'CREATED', 'DISABLED', 'LIVE TOKENS'],
              ...tenants.map((t) => [
                t.tenant,
                day(t.created),
                t.disabled ? day(t.disabled) : '',
                String(t.liveTokens),
              ]),
            ]),
      );
    });
  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const)
    tenant
      .command(verb)
      .description(
        disabled
          ? 'refuse every token of a tenant, on every instance, from its next request (data stays)'
          : 'accept the tokens of a disabled tenant again',
      )
      .argument('<name>', 'the tenant')
      .action(async (name: string) => {
        const changed = await govern((g) => g.setTenantDisabled(name, disabled));
        c.out({ tenant: name, disabled, changed }, () =>
          changed ? `tenant ${name} ${verb}d` : `tenant ${name} was already ${verb}d`,
        );
      });

  const token = program
    .command('token')
    .description('API tokens of a shared Postgres store (each change is in the operator journal)');
  token
    .command('create')
    .description('create an API token for --tenant; it is printed once and stored hashed')
    .option(
      '--project <scope>',
      'allow only this project: a name (api) or a scope as `mneme status` shows it (repeatable)',
      collect,
    )
    .option('--label <text>', 'a note to recognise the token by')
    .option('--expires <when>', 'refuse it after this ISO time or duration (90d, 12h, 2w)')
    .action(async (o: { project?: string[]; label?: string; expires?: string }) => {
      const name = c.settings().settings.store.tenant;
      if (!name) {
        throw new MnemeError('invalid', 'which tenant is the token for?', {
          hint: 'pass --tenant NAME',
        });
      }
      const expires = o.expires === undefined ? null : parseExpiry(o.expires);
      const projects = o.project ? o.project.map(namedProjectScope) : null;
      const issued = await govern((g) =>
        g.issueToken({ tenant: name, projects, label: o.label, expires }),
      );
      c.out(issued, () => issued.token);
      if (!c.globals().json)
        c.io.stderr(
          `token ${issued.id} for tenant ${name}${projects ? ` (projects: ${projects.join(', ')})` : ''}${issued.expires ? `, expires ${issued.expires}` : ''}; it is shown only this once\n`,
        );
    });
  token
    .command('list')
    .description('every token (of --tenant): id, projects, created, last used — never the secret')
    .action(async () => {
      const tokens = await govern((g) =>
        g.listTokens(c.settings().settings.store.tenant ?? undefined),
      );
      c.out({ tokens }, () =>
        tokens.length === 0
          ? 'no tokens: create one with `mneme token create --tenant NAME --db URL`'
          : table([
              ['ID', 'TENANT', 'PROJECTS', 'CREATED', 'LAST USED', 'EXPIRES', 'REVOKED', 'LABEL'],
              ...tokens.map((t) => [
                t.id,
                t.tenant,
                list(t.projects),
                day(t.created),
                t.lastUsed ? day(t.lastUsed) : 'never',
                t.expires ? day(t.expires) : '',
                t.revoked ? day(t.revoked) : '',
                t.label ?? '',
              ]),
            ]),
      );
    });
  token
    .command('revoke')
    .description('refuse a token on every instance from its next request')
    .argument('<id>', 'the token id, as `mneme token list` shows it (tok_…)')
    .action(async (id: string) => {
      const revoked = await govern((g) => g.revokeToken(id));
      c.out({ id, revoked }, () =>
        revoked ? `revoked token ${id}` : `token ${id} was already revoked`,
      );
    });
}
