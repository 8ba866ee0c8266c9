// Human surfaces of the CLI: `proposals` (read-only, anywhere), and `review`, `confirm`,
// `tombstone lift`, `journal repair`, which refuse inside an agent session or without a
// terminal, ask for a typed confirmation, and need the review passphrase when one is set.
import { MnemeError } from '../../core/errors.js';
import { shownValue } from '../../core/tombstone-label.js';
import type { Proposal } from '../../core/proposal.js';
import type { Actor } from '../../core/types.js';
import type { Engine } from '../../engine/engine.js';
import type { JournalDamage } from '../compose.js';
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

type Ask = NonNullable<CliContext['io']['ask']>;

/** The human gate of every decision here (and of `mneme purge`): a person, in a terminal. */
export function humanAsk(c: CliContext, what: string): Ask {
  requireHumanSurface(what, c.io.env, c.io.tty ?? { stdin: false, stdout: false });
  if (!c.io.ask) throw new MnemeError('refused', `${what} needs an interactive terminal`);
  return c.io.ask;
}

/** Asks for the review passphrase and refuses a wrong one (nothing is asked when none is set). */
export async function askPassphrase(engine: Engine, ask: Ask): Promise<void> {
  if (!(await engine.hasPassphrase())) return;
  await engine.checkPassphrase(await ask('Review passphrase: ', { secret: true }));
}

export function registerReview(c: CliContext): void {
  const { program } = c;
  const human = (what: string) => humanAsk(c, what);
  const passphrase = askPassphrase;

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
        await engine.setPassphrase(a, HUMAN);
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
                shownValue(t),
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
        `tombstone on "${shownValue(t)}" (${t.scope}, ${day(t.at)}, by ${t.actor.kind})\n`,
      );
      if ((await ask('Type "lift" to let this value be written again: ')).trim() !== 'lift')
        throw new MnemeError('refused', 'not confirmed; nothing changed');
      await passphrase(engine, ask);
      await engine.apply([{ op: 'lift', key: t.key, scope: t.scope }], HUMAN);
      c.io.stdout('lifted\n');
    });

  const journal = program.commands.find((x) => x.name() === 'journal');
  journal
    ?.command('repair')
    .description(
      'a person re-anchors a journal whose chain does not verify, recording the reason and what was lost',
    )
    .action(async () => {
      const ask = human('mneme journal repair');
      const engine = await c.engine();
      const damage = await engine.journalDamage();
      if (damage.ok) {
        c.io.stdout('journal ok: nothing to repair\n');
        return;
      }
      c.io.stdout(`${damageText(damage)}\n`);
      if ((await ask('Type "repair" to record this and accept writes again: ')).trim() !== 'repair')
        throw new MnemeError('refused', 'not confirmed; nothing changed');
      const reason = (await ask('Reason (recorded in the journal): ')).trim();
      if (reason === '')
        throw new MnemeError('invalid', 'a repair needs a reason; nothing changed');
      if (
        !(await engine.repairPassphraseMatches(() => ask('Review passphrase: ', { secret: true })))
      )
        throw new MnemeError('refused', 'the review passphrase is wrong; nothing changed');
      const r = await engine.repairJournal(reason, HUMAN);
      const [repair, ...more] = r.entries;
      c.io.stdout(
        repair
          ? `repaired: entry #${repair.seq} records the repair${more.length ? ` (entry #${more[0]!.seq} re-records the review passphrase)` : ''}; the journal verifies and writes are accepted again\n`
          : 'journal ok: nothing to repair\n',
      );
    });
}

/** What a repair will do, for the person about to confirm it. */
export function damageText(d: JournalDamage): string {
  const lines = ["The journal's hash chain does not verify."];
  if (d.firstBad)
    lines.push(
      `  first bad entry: ${d.firstBad.seq !== null ? `#${d.firstBad.seq}` : `line ${d.firstBad.position}`} — ${d.firstBad.problem}`,
    );
  lines.push('', 'The repair deletes and rewrites nothing. It will:');
  for (const b of d.breaks)
    lines.push(
      `  - acknowledge the break at line ${b.position}${b.seq !== null ? ` (entry #${b.seq})` : ''}: ${b.problem}`,
    );
  if (d.lostTail)
    lines.push(
      `  - record that entries #${d.lostTail.fromSeq}–#${d.lostTail.toSeq} were cut from the tail (the anchor named #${d.lostTail.toSeq}, hash ${d.lostTail.anchorHash.slice(0, 12)}); their content is lost`,
    );
  if (d.anchor === 'missing')
    lines.push(
      '  - record that the anchor (journal/HEAD) was missing: what the tail held before it is unknown, and so is any review passphrase set there',
    );
  if (d.anchor === 'replaced')
    lines.push('  - record that the entry the anchor named is no longer in the journal');
  if (d.restorePassphrase)
    lines.push(
      "  - re-record the review passphrase the anchor holds (the journal's entry setting it was lost)",
    );
  if (d.breaks.length === 0 && !d.lostTail && d.anchor === 'ok' && !d.restorePassphrase)
    lines.push('  - lift a recorded refusal the journal no longer shows a reason for');
  lines.push(
    `  - append a journal_repair entry with your reason and this list after entry #${d.tail.seq}, and anchor the journal to it`,
    '',
    'Writes are accepted again afterwards. A memory whose journal entry was lost stays withheld from',
    'every read; `mneme fsck` lists each one and how to resolve it.',
  );
  return lines.join('\n');
}
