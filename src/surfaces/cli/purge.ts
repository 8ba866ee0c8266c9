// `mneme purge`: a person erases a memory's text from every byte the store keeps (the engine's
// purge), checks what is left (`--verify`), or finds where a leaked string is kept (`--find`).
// The same gate as review: an interactive terminal, not an agent session, a typed confirmation,
// and the review passphrase when one is set.
import { MnemeError } from '../../core/errors.js';
import type { Actor } from '../../core/types.js';
import type { FindResult, VerifyResult } from '../../engine/engine.js';
import { askPassphrase, humanAsk } from './review.js';
import type { CliContext } from './run.js';

const HUMAN: Actor = { kind: 'human', surface: 'cli-purge' };

const placeText = (p: { where: string; id?: string; rev?: number; line?: number }) =>
  `${p.where}${p.line !== undefined ? `:${p.line}` : ''}${p.id ? ` (${p.id}${p.rev !== undefined ? ` rev ${p.rev}` : ''})` : ''}`;

const cannot = (list: string[]) =>
  ['A purge cannot reach copies outside the store:', ...list.map((l) => `  - ${l}`)].join('\n');

export function registerPurge(c: CliContext): void {
  c.program
    .command('purge')
    .description(
      "erase a memory's text from every byte the store keeps, keeping its skeleton and a verifiable journal (a person, in a terminal)",
    )
    .argument('[id]', 'the memory to purge (or to check, with --verify)')
    .option('--rev <n>', 'only this revision (default: every revision)', (v) => Number(v))
    .option('--reason <text>', 'why (kept in the journal; must not repeat the value)')
    .option(
      '--also <text>',
      'another string to erase with it, e.g. the leaked key itself (repeatable)',
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option('--verify', 'report every place in the store that still holds the purged text')
    .option('--find <text>', 'list every memory, revision, archive line and file holding a string')
    .action(
      async (
        id: string | undefined,
        o: { rev?: number; reason?: string; also?: string[]; verify?: boolean; find?: string },
      ) => {
        if (o.find !== undefined) {
          const ask = humanAsk(c, 'mneme purge --find');
          const engine = await c.engine();
          await askPassphrase(engine, ask);
          const r = await engine.findValue(o.find);
          c.out(r, () => findText(r));
          return;
        }
        if (!id)
          throw new MnemeError('invalid', 'name the memory to purge', {
            hint: 'mneme purge mem_… --reason TEXT; find it first with `mneme purge --find TEXT`',
          });
        if (o.verify) {
          const ask = humanAsk(c, 'mneme purge --verify');
          const engine = await c.engine();
          await askPassphrase(engine, ask);
          const r = await engine.verifyPurge(id);
          c.out(r, () => verifyText(r));
          return;
        }
        if (o.rev !== undefined && (!Number.isInteger(o.rev) || o.rev < 1))
          throw new MnemeError('invalid', '--rev must be a revision number (1, 2, …)');
        if (!o.reason?.trim())
          throw new MnemeError('invalid', 'a purge needs --reason TEXT (it is what stays)', {
            hint: 'say why without repeating the value, e.g. --reason "leaked credential"',
          });
        const ask = humanAsk(c, 'mneme purge');
        const engine = await c.engine();
        const lineage = await engine.history(id);
        const chosen = lineage.revisions.filter((r) => o.rev === undefined || r.rev === o.rev);
        c.io.stdout(
          `This erases the text of ${id} ${o.rev !== undefined ? `rev ${o.rev}` : `(all ${chosen.length} revisions)`} from every file and table of this store:\n${chosen
            .map((r) => `  rev ${r.rev} · ${r.status} · ${r.abstract}`)
            .join('\n')}\n` +
            'What stays: ids, revision numbers, times, actors, the status "purged" with your reason,\n' +
            'and the journal entries with their content hashes. It cannot be undone.\n',
        );
        if ((await ask('Type "purge" to erase it: ')).trim() !== 'purge')
          throw new MnemeError('refused', 'not confirmed; nothing changed');
        await askPassphrase(engine, ask);
        const r = await engine.purge(
          {
            id,
            reason: o.reason,
            ...(o.rev !== undefined ? { rev: o.rev } : {}),
            ...(o.also ? { also: o.also } : {}),
          },
          HUMAN,
        );
        c.out(r, () =>
          [
            r.finished
              ? `${r.id} was purged already (journal entry #${r.seq}): finished erasing what that purge left`
              : `purged ${r.id} rev ${r.revs.join(', ')} (journal entry #${r.seq}; ${r.redactedEntries} earlier entr${r.redactedEntries === 1 ? 'y' : 'ies'} rewritten and vouched for)`,
            `erased from: ${r.places.join(', ')}`,
            r.remaining.length === 0
              ? 'verify: no file or row of the store holds the purged text any more'
              : `verify: still found in:\n${r.remaining.map((p) => `  ${placeText(p)}`).join('\n')}\n(purge those memories too, or name the string with --also)`,
            cannot(r.cannotReach),
          ].join('\n'),
        );
      },
    );
}

function verifyText(r: VerifyResult): string {
  return [
    ...r.purges.map(
      (p) => `purged ${p.at.slice(0, 19)} by ${p.by} (entry #${p.seq}): ${p.reason ?? ''}`,
    ),
    r.remaining.length === 0
      ? `no file or row of the store holds the purged text of ${r.id}`
      : `the purged text of ${r.id} is still found in:\n${r.remaining
          .map((p) => `  ${placeText(p)} (${p.hits.map((h) => `${h.count} ${h.kind}`).join(', ')})`)
          .join('\n')}`,
    cannot(r.cannotReach),
  ].join('\n');
}

function findText(r: FindResult): string {
  return [
    r.places.length === 0
      ? `no file or row of the store holds "${r.text}"`
      : `"${r.text}" is held in:\n${r.places.map((p) => `  ${placeText(p)}`).join('\n')}`,
    cannot(r.cannotReach),
  ].join('\n');
}
