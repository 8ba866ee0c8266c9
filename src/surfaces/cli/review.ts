// Human surfaces of the CLI: `proposals` (read-only, anywhere), and `review`, `confirm`,
// `tombstone lift`, which refuse inside an agent session or without a terminal, ask for a typed
// confirmation, and need the review passphrase when one is set.
import { MnemeError } from '../../core/errors.js';
import type { Proposal } from '../../core/proposal.js';
import type { Actor } from '../../core/types.js';
import type { Engine } from '../../engine/engine.js';
import { checkPassphrase, currentPassphrase, hashPassphrase } from '../../engine/passphrase.js';
import { requireHumanSurface } from '../human-gate.js';
import { day, table } from './format.js';
import type { CliContext } from './run.js';

const HUMAN: Actor = { kind: 'human', surface: 'cli-review' };

export const proposalSummary = (p: Proposal) => ({
  id: p.id,
  kind: p.kind,
  targets: p.targets,
  summary: p.summary,
  state: p.state,
  created_by: p.created_by,
  created_at: p.created_at,
});

export function registerReview(c: CliContext): void {
  const { program } = c;
  const human = (what: string) => {
    requireHumanSurface(what, c.io.env, c.io.tty ?? { stdin: false, stdout: false });
    if (!c.io.ask) throw new MnemeError('refused', `${what} needs an interactive terminal`);
    return c.io.ask;
  };
  const passphrase = async (engine: Engine, ask: NonNullable<CliContext['io']['ask']>) => {
    if (!(await currentPassphrase(engine.ctx.store))) return;
    await checkPassphrase(engine.ctx.store, await ask('Review passphrase: ', { secret: true }));
  };

  program
    .command('proposals')
    .description('list proposals waiting for a person (read-only)')
    .option('--all', 'include decided proposals')
    .action(async (o: { all?: boolean }) => {
      const engine = await c.engine();
      const list = await engine.proposals(o.all ? {} : { state: 'pending' });
      c.out({ proposals: list.map(proposalSummary) }, () =>
        list.length === 0
          ? 'no proposals are waiting'
          : table([
              ['id', 'kind', 'state', 'by', 'summary'],
              ...list.map((p) => [p.id, p.kind, p.state, p.created_by.kind, p.summary]),
            ]),
      );
    });

  program
    .command('review')
    .description('decide pending proposals, one at a time (a person, in a terminal)')
    .option('--set-passphrase', 'set or change the passphrase every decision will need')
    .action(async (o: { setPassphrase?: boolean }) => {
      const ask = human('mneme review');
      const engine = await c.engine();
      if (o.setPassphrase) {
        await passphrase(engine, ask);
        const a = await ask('New review passphrase: ', { secret: true });
        const b = await ask('Repeat it: ', { secret: true });
        if (a.length < 8)
          throw new MnemeError('invalid', 'the passphrase must have at least 8 characters');
        if (a !== b) throw new MnemeError('invalid', 'the two entries differ; nothing was changed');
        await engine.apply([{ op: 'set_passphrase', ...hashPassphrase(a) }], HUMAN);
        c.io.stdout('review passphrase set; every decision now needs it\n');
        return;
      }
      const pending = await engine.proposals({ state: 'pending' });
      if (pending.length === 0) {
        c.io.stdout('no proposals are waiting\n');
        return;
      }
      c.io.stdout(`${pending.length} proposal(s) waiting\n`);
      for (const [i, p] of pending.entries()) {
        c.io.stdout(
          `\n[${i + 1}/${pending.length}] ${p.id} · ${p.kind} · by ${p.created_by.kind} · ${day(p.created_at)}\n${p.summary}\n`,
        );
        if (p.evidence.length) c.io.stdout(`evidence:\n  ${p.evidence.join('\n  ')}\n`);
        if (p.diff)
          c.io.stdout(
            `diff:\n${p.diff
              .split('\n')
              .map((l) => `  ${l}`)
              .join('\n')}\n`,
          );
        // What each decision does, derived now from the same plan the decision applies.
        const plan = await engine.reviewPlan(p.id);
        for (const side of [plan.accept, plan.reject]) {
          c.io.stdout(
            side.blocked
              ? `${side.decision}ing is not possible: ${side.blocked}\n`
              : `${side.decision}ing will:\n${side.effects.map((e) => `  - ${e}`).join('\n')}\n`,
          );
        }
        const choice = (await ask('(a)ccept, (r)eject, (s)kip, (q)uit? ')).trim().toLowerCase();
        if (choice === 'q' || choice === 'quit') break;
        if (choice !== 'a' && choice !== 'r' && choice !== 'accept' && choice !== 'reject') {
          c.io.stdout('skipped\n');
          continue;
        }
        const decision = choice.startsWith('a') ? 'accept' : 'reject';
        const typed = (await ask(`Type "${decision}" to confirm: `)).trim();
        if (typed !== decision) {
          c.io.stdout('not confirmed; skipped\n');
          continue;
        }
        const reason = (await ask('Reason (optional): ')).trim();
        await passphrase(engine, ask);
        await engine.apply(
          [
            {
              op: 'decide',
              proposal: p.id,
              decision,
              effects: plan[decision].hash,
              ...(reason ? { reason } : {}),
            },
          ],
          HUMAN,
        );
        c.io.stdout(`${decision === 'accept' ? 'accepted' : 'rejected'} ${p.id}\n`);
      }
    });

  program
    .command('confirm')
    .description('confirm a memory as true (a person, in a terminal): trust becomes confirmed')
    .argument('<id>')
    .action(async (id: string) => {
      const ask = human('mneme confirm');
      const engine = await c.engine();
      const m = await engine.read(id, 'abstract');
      c.io.stdout(`${m.handle} ${m.type} · ${m.abstract}\n(trust ${m.trust})\n`);
      if ((await ask('Type "confirm" to confirm it: ')).trim() !== 'confirm')
        throw new MnemeError('refused', 'not confirmed; nothing changed');
      await passphrase(engine, ask);
      const [r] = await engine.apply([{ op: 'confirm', id, expected_rev: m.rev }], HUMAN);
      c.io.stdout(`confirmed ${id} (rev ${r!.rev})\n`);
    });

  const tomb = program.command('tombstone').description('rejected values that may not come back');
  tomb
    .command('list')
    .description('armed tombstones of this project and global')
    .action(async () => {
      const engine = await c.engine();
      const list = await engine.tombstones();
      c.out({ tombstones: list }, () =>
        list.length === 0
          ? 'no tombstones'
          : table([
              ['key', 'scope', 'at', 'by', 'from', 'value'],
              ...list.map((t) => [
                t.key.slice(0, 12),
                t.scope,
                day(t.at),
                t.actor.kind,
                t.from_op,
                t.value_norm,
              ]),
            ]),
      );
    });
  tomb
    .command('lift')
    .description('lift a tombstone so the value may be written again (a person, in a terminal)')
    .argument('<key>', 'the key, or a unique prefix of it (see `mneme tombstone list`)')
    .action(async (prefix: string) => {
      const ask = human('mneme tombstone lift');
      const engine = await c.engine();
      const matches = (await engine.tombstones()).filter((t) => t.key.startsWith(prefix));
      if (matches.length !== 1)
        throw new MnemeError(
          matches.length ? 'invalid' : 'not_found',
          matches.length
            ? `"${prefix}" matches ${matches.length} tombstones`
            : `no tombstone starts with "${prefix}"`,
          { hint: 'use more of the key from `mneme tombstone list`' },
        );
      const t = matches[0]!;
      c.io.stdout(
        `tombstone on "${t.value_norm}" (${t.scope}, ${day(t.at)}, by ${t.actor.kind})\n`,
      );
      if ((await ask('Type "lift" to let this value be written again: ')).trim() !== 'lift')
        throw new MnemeError('refused', 'not confirmed; nothing changed');
      await passphrase(engine, ask);
      await engine.apply([{ op: 'lift', key: t.key, scope: t.scope }], HUMAN);
      c.io.stdout('lifted\n');
    });
}
