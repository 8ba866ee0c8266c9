// `npm start`: a short guided tour against a throwaway store — remember, recall, supersede,
// history, the exclusion trace, and a forget that sticks. Runs the real CLI in-process.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { run } from './run.js';

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-demo-'));
const project = fs.mkdtempSync(path.join(os.tmpdir(), 'mneme-demo-repo-'));
fs.mkdirSync(path.join(project, '.git'));
fs.writeFileSync(
  path.join(project, '.git', 'config'),
  '[remote "origin"]\n\turl = git@github.com:example/shop.git\n',
);

const env = { ...process.env, MNEME_HOME: home };
let lastJson: unknown = null;

async function step(title: string, args: string[], opts: { quiet?: boolean } = {}) {
  process.stdout.write(
    `\n\x1b[1m# ${title}\x1b[0m\n$ mneme ${args.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}\n`,
  );
  let out = '';
  const code = await run(args, {
    stdout: (s) => (out += s),
    stderr: (s) => process.stderr.write(s),
    env,
    cwd: project,
  });
  if (args.includes('--json')) lastJson = JSON.parse(out);
  if (!opts.quiet) process.stdout.write(out);
  if (code !== 0) process.stdout.write(`(exit ${code})\n`);
  return code;
}

process.stdout.write(`mneme demo — a throwaway store in ${home}\n`);
await step('Remember a decision for this project', [
  'remember',
  '--type',
  'decision',
  '--abstract',
  'Orders are stored in Postgres 15',
  '--field',
  'subject=orders database',
  '--body',
  'Chosen for JSONB and row-level security.',
  '--json',
]);
const id = (lastJson as { id: string }).id;
await step('Remember a constraint that applies to billing code', [
  'remember',
  '--type',
  'constraint',
  '--abstract',
  'Billing code must never log card numbers',
  '--applies-to',
  'src/billing/**',
]);
await step('Recall finds it by meaning-bearing words', ['recall', 'orders', 'database']);
await step('The fact changed: supersede it (the old revision is kept)', [
  'supersede',
  id,
  '--abstract',
  'Orders are stored in Postgres 16',
  '--reason',
  'upgraded in the spring',
]);
await step('Recall serves only the current value; --explain says what was left out and why', [
  'recall',
  'orders',
  'postgres',
  '--explain',
]);
await step('History keeps every revision with both time axes', ['history', id]);
await step('An agent wrote something wrong…', [
  'remember',
  '--type',
  'fact',
  '--abstract',
  'The CI runners have 8 GB of RAM',
  '--field',
  'subject=ci runner memory',
  '--json',
]);
const wrong = (lastJson as { id: string }).id;
await step('…forget it: it leaves every read path and stays in history', [
  'forget',
  wrong,
  '--reason',
  'never true',
]);
await step('It is gone from recall', ['recall', 'CI', 'runners', 'RAM']);
await step('Every change is in the hash-chained journal', ['log']);
await step('…and the chain verifies', ['journal', 'verify']);
process.stdout.write(
  `\nDone. The store is plain files: ls ${home}/memories\nNext: \`npm test\`, or read README.md for Claude Code / Codex / MCP setup.\n`,
);
fs.rmSync(project, { recursive: true, force: true });
