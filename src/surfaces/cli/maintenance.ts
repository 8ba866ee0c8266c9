// Maintenance commands: `sleep`, `fsck`, `check-sources`, `revalidate`. The engine does the
// work through the one write path (actors `sleep` and `fsck`); this layer schedules, prints and
// writes the readable reports under <store>/reports/.
import { MnemeError } from '../../core/errors.js';
import { PHASES, type FsckChecked, type FsckIssue } from '../../engine/engine.js';
import { tryAcquire, release } from '../hooks/single-flight.js';
import { localRoot } from '../open.js';
import { writeReport } from '../reports.js';
import { isDue, readSleepState, sleepLockFiles, writeSleepState } from '../sleep-schedule.js';
import { table } from './format.js';
import { ExitCode, type CliContext } from './run.js';

const parseCap = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0)
    throw new MnemeError('invalid', `--cap must be ≥ 0, not "${v}"`);
  return n;
};

/** The line that says how much of the store the integrity phase read. */
export function checkedText(c: FsckChecked): string {
  return c.full
    ? `integrity: ${c.lineages_checked} memories checked (--full)`
    : `integrity: ${c.lineages_checked} memories checked, ${c.lineages_skipped} unchanged since the last clean run (--full checks all)`;
}

export function fsckText(issues: FsckIssue[]): string {
  if (issues.length === 0) return 'fsck: no issues';
  const lines: string[] = [];
  for (const phase of PHASES) {
    const xs = issues.filter((i) => i.phase === phase);
    if (xs.length === 0) continue;
    lines.push(`${phase} (${xs.length})`);
    for (const i of xs)
      lines.push(
        `  ${i.id} ${i.severity.padEnd(7)} ${i.message}${i.fix ? `\n      fix: ${i.fix}` : ''}`,
      );
  }
  return lines.join('\n');
}

export function registerMaintenance(c: CliContext): void {
  const { program } = c;
  // Reports, the sleep schedule and its lock: beside the embedded store, or in the Postgres
  // store's local directory (never an embedded store's home the flags did not name).
  const root = () => localRoot(c.globals(), c.io.env);

  program
    .command('sleep')
    .description('maintenance pass: weights, co-recall links, duplicates; proposals for the rest')
    .option('--if-due', 'run only when the last pass is older than sleep.interval_hours (24)')
    .option('--dry-run', 'show what would change, write nothing')
    .option('--cap <n>', 'proposals per kind per pass (default 5)', parseCap)
    .action(async (o: { ifDue?: boolean; dryRun?: boolean; cap?: number }) => {
      const dir = root();
      const now = new Date();
      if (o.ifDue && !isDue(dir, now, c.settings().settings.sleep.interval_hours)) {
        c.out({ ran: false, reason: 'not due' }, () => 'sleep: not due');
        return;
      }
      const lock = sleepLockFiles(dir);
      if (!o.dryRun && !tryAcquire(lock)) {
        c.out(
          { ran: false, reason: 'another pass is running' },
          () => 'sleep: another pass is running',
        );
        return;
      }
      try {
        const engine = await c.engine();
        const cap = o.cap;
        const r = await engine.sleep({
          dryRun: o.dryRun,
          ...(cap !== undefined
            ? { config: { caps: { merge: cap, conflict: cap, split: cap, retract: cap } } }
            : {}),
        });
        const text = await engine.describeSleep(r);
        let report: string | null = null;
        if (!o.dryRun) {
          report = writeReport(dir, 'sleep', r.at, text, engine.scopes);
          const prior = readSleepState(dir);
          writeSleepState(dir, { since: prior?.since ?? r.at, last: r.at, report });
        }
        c.out({ ...r, ran: true, report }, () => (o.dryRun ? text : `${text}\nreport: ${report}`));
      } finally {
        if (!o.dryRun) release(lock);
      }
    });

  program
    .command('fsck')
    .description('check the store: integrity, security, duplicates, quality, tombstones, sources')
    .option('--fix <ids...>', 'apply the fixes of these issues (through the write path)')
    .option('--full', 'check every revision, not only what changed since the last clean run')
    .action(async (o: { fix?: string[]; full?: boolean }) => {
      const engine = await c.engine();
      if (o.fix) {
        const fixes = await engine.fsckFix(o.fix);
        c.out({ fixes }, () => table(fixes.map((f) => [f.id, f.status, f.message ?? ''])));
        if (fixes.some((f) => f.status === 'failed' || f.status === 'not_found'))
          throw new ExitCode(2);
        return;
      }
      const { issues, checked } = await engine.fsck({ full: o.full === true });
      const at = engine.now();
      try {
        writeReport(
          root(),
          'fsck',
          at,
          `# fsck ${at}\n\n\`\`\`\n${fsckText(issues)}\n\`\`\`\n`,
          engine.scopes,
        );
      } catch {
        /* the report is a convenience; the issues are printed */
      }
      c.out({ issues, checked }, () => `${fsckText(issues)}\n${checkedText(checked)}`);
      if (issues.some((i) => i.severity === 'error')) throw new ExitCode(2);
    });

  program
    .command('check-sources')
    .description('re-read every source-bound memory; drifted and missing ones are withheld')
    .action(async () => {
      const engine = await c.engine();
      const checks = await engine.checkSources({ kind: 'system', surface: 'check-sources' });
      c.out({ checks }, () =>
        checks.length === 0
          ? 'no memories are bound to a source'
          : table(
              checks.map((x) => [
                x.id,
                x.freshness + (x.changed ? ' (changed)' : ''),
                x.path,
                x.error ?? '',
              ]),
            ),
      );
    });

  program
    .command('revalidate')
    .description('bind a drifted or missing memory to its source as it is now (a new revision)')
    .argument('<id>')
    .option('--source <path>', 'bind to another file instead (path[#symbol])')
    .option('--reason <text>', 'why it still holds')
    .action(async (id: string, o: { source?: string; reason?: string }) => {
      const engine = await c.engine();
      const [r] = await engine.apply(
        [{ op: 'revalidate', id, source: o.source, reason: o.reason }],
        c.actor(),
      );
      c.out(r, () => `revalidated ${r!.id}: now rev ${r!.rev} (trust ${r!.trust})`);
    });
}
