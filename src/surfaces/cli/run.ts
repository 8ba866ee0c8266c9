// The mneme CLI: a thin commander layer over the engine. Each command parses flags, calls the
// engine once, and prints human text or --json. Exit codes: 0 ok, 1 user error, 2 conflict or
// refused, 3 internal. (`hook` and plain `recall` usually arrive through fast.ts, which shares
// their meaning with this file through shared.ts.)
import fs from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { MnemeError } from '../../core/errors.js';
import { LIMITS } from '../../core/limits.js';
import { toIso } from '../../core/time.js';
import type { Actor } from '../../core/types.js';
import type { Engine, OpInput, ReadLevel } from '../../engine/engine.js';
import {
  RecallInput,
  WRITES,
  parsePayload,
  recallOptions,
  writeOp,
  type WriteVerb,
} from '../../engine/payloads.js';
import { readInputFile } from '../input-file.js';
import { openEngine, withGovernance } from '../compose.js';
import { loadSettings, type LoadedSettings } from '../config/settings.js';
import { registerConfig } from './config.js';
import { registerAgentCommands } from './agent-commands.js';
import { registerBench } from './bench.js';
import { registerHostCommands } from './host-commands.js';
import { registerMaintenance } from './maintenance.js';
import { registerServe } from '../http/cli.js';
import { day, table } from './format.js';
import { registerPurge } from './purge.js';
import { artifactPayload, readArtifact, registerArtifact } from './artifact.js';
import { registerReview } from './review.js';
import { schemaOptions } from './schema-options.js';
import {
  cliActor,
  cliSurface,
  parseIntOpt,
  printResult,
  recallAndPrint,
  reportError,
  type Io,
  type RecallFlags,
} from './shared.js';
import { progressBar } from './progress.js';
import { databaseUrl, registerTeam } from './team.js';
import { registerVectors, vectorLine } from './vectors.js';
import { registerKnowledge } from './knowledge.js';

export { EXIT, type Io } from './shared.js';

export interface Globals {
  json?: boolean;
  config?: string;
  store?: string;
  db?: string;
  tenant?: string;
  embedder?: string;
}

export interface CliContext {
  io: Io;
  program: Command;
  globals: () => Globals;
  engine: () => Promise<Engine>;
  /** The command's settings (config file, environment, global flags), loaded once. */
  settings: () => LoadedSettings;
  actor: () => Actor;
  out: (json: unknown, human: () => string) => void;
}

/** A date flag, checked as it is parsed so the refusal names the flag (the engine checks too). */
const dateFlag = (flag: string) => (v: string) => (toIso(v, flag), v);
const dates = {
  valid_from: dateFlag('--valid-from'),
  valid_to: dateFlag('--valid-to'),
  as_of: dateFlag('--as-of'),
  known_at: dateFlag('--known-at'),
};

/** A write's options, from the engine's schema for it, plus --body-file (read into `body`). */
function writeOptions<V extends WriteVerb>(cmd: Command, verb: V, skip: string[] = []) {
  const fields = schemaOptions(cmd, WRITES[verb], { skip: ['id', ...skip], parse: dates });
  if ('body' in WRITES[verb].shape)
    cmd.option('--body-file <file>', 'read the body from a file ("-" for stdin; at most 64 KiB)');
  /** The parsed options (and the id argument) as the op, parsed with the engine's schema. */
  return (o: Record<string, unknown>, extra: Record<string, unknown> = {}): OpInput => {
    const payload = { ...fields(o), ...extra };
    if (o.bodyFile !== undefined)
      payload.body = readBody(o as { body?: string; bodyFile?: string });
    return writeOp(verb, parsePayload(WRITES[verb], payload, verb));
  };
}

function readBody(o: { body?: string; bodyFile?: string }): string | undefined {
  if (o.body !== undefined && o.bodyFile !== undefined)
    throw new MnemeError('invalid', 'pass --body or --body-file, not both');
  if (o.bodyFile === undefined) return o.body;
  // Read no more than the body limit: past it the write would be refused anyway.
  const buf = readInputFile(o.bodyFile, { cap: LIMITS.bodyBytes, what: '--body-file' });
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    throw new MnemeError('invalid', `${o.bodyFile} is not valid UTF-8 text`);
  }
}

type ReadOptions = { level: ReadLevel; artifact?: boolean; range?: string; out?: string };

export function buildProgram(c: CliContext): Command {
  const program = c.program;
  program
    .name('mneme')
    .description(
      'Memory for coding agents that stays correct: corrected values stay corrected, forgotten ones stay gone.',
    )
    .option('--json', 'print machine-readable JSON')
    .option(
      '--config <file>',
      "a config file instead of the store's config.toml (default: $MNEME_CONFIG)",
    )
    .option('--store <dir>', 'the store directory (default: $MNEME_HOME or ~/.mneme)')
    .option(
      '--embedder <kind>',
      'vector arm: off, hash, openai, ollama, transformers (default: $MNEME_EMBEDDER or off)',
    )
    .showHelpAfterError('(run `mneme --help` for usage)');

  const remember = program.command('remember').description('store a new memory');
  const rememberOp = writeOptions(remember, 'remember', ['artifact']);
  remember
    .option(
      '--artifact <file>',
      'keep this file beside the memory by reference (up to the cap, default 64 MiB)',
    )
    .option('--artifact-type <type>', "the artifact's media type (default: guessed)");
  remember.action(async (o: Record<string, unknown>) => {
    const engine = await c.engine();
    const extra =
      typeof o.artifact === 'string'
        ? { artifact: artifactPayload(engine, o.artifact, o.artifactType as string | undefined) }
        : {};
    const [r] = await engine.apply([rememberOp(o, extra)], c.actor());
    c.out(r, () =>
      r!.unchanged
        ? `unchanged: ${r!.id} rev ${r!.rev} already says this`
        : `remembered ${r!.id} rev ${r!.rev} (trust ${r!.trust})${r!.quarantined ? ' — QUARANTINED for review' : ''}${r!.redacted ? ` — redacted: ${r!.redacted.join(', ')}` : ''}`,
    );
  });

  const recall = program
    .command('recall')
    .description('search memories of this project and the global scope')
    .argument('<query...>', 'what to look for');
  const recallFields = schemaOptions(recall, RecallInput, { skip: ['query'], parse: dates });
  recall.action(async (words: string[], o: Record<string, unknown>) => {
    const r = parsePayload(RecallInput, { query: words.join(' '), ...recallFields(o) }, 'recall');
    const { limit, asOf, knownAt, explain, minTrust, knowledge } = recallOptions(r, c.actor());
    const flags: RecallFlags = { limit: limit!, asOf, knownAt, explain, minTrust, knowledge };
    await recallAndPrint(await c.engine(), words, flags, c.io, c.globals().json);
  });

  program
    .command('read')
    .description('open one memory')
    .argument('<id>')
    .addOption(
      new Option('--level <level>', 'how deep')
        .choices(['abstract', 'outline', 'full'])
        .default('full'),
    )
    .option('--artifact', "the memory's artifact instead: its bytes (all, or --range)")
    .option('--range <A-B>', 'with --artifact: bytes A to B, both included (A-: from A)')
    .option('--out <file>', 'with --artifact: write the bytes to this file')
    .action(async (id: string, o: ReadOptions) => {
      const engine = await c.engine();
      if (o.artifact) return readArtifact(c, engine, id, o);
      if (o.range !== undefined || o.out !== undefined)
        throw new MnemeError('invalid', '--range and --out go with --artifact');
      const r = await engine.read(id, o.level);
      c.out(r, () =>
        [
          `${r.handle} ${r.type} rev ${r.rev} · ${r.status} · trust ${r.trust}${r.quarantine ? ` · QUARANTINED (${r.quarantine})` : ''}`,
          `scope ${r.scope} · valid ${day(r.valid_from)} → ${day(r.valid_to)} · recorded ${day(r.recorded_at)}`,
          Object.keys(r.fields).length
            ? `fields: ${Object.entries(r.fields)
                .map(([k, v]) => `${k}=${v}`)
                .join(', ')}`
            : '',
          r.tags.length ? `tags: ${r.tags.join(', ')}` : '',
          '',
          r.abstract,
          r.body ? `\n${r.body}` : '',
        ]
          .filter((l, i) => l !== '' || i === 4)
          .join('\n'),
      );
    });

  for (const verb of ['supersede', 'correct'] as const) {
    const cmd = program
      .command(verb)
      .description(
        verb === 'supersede'
          ? 'record that the fact changed: a new revision replaces the old from --valid-from (default now)'
          : 'fix a wrong value: a new revision replaces it, the old one is rejected',
      )
      .argument('<id>');
    const op = writeOptions(cmd, verb, ['artifact']);
    cmd
      .option('--artifact <file>', 'replace the artifact with this file (default: keep it)')
      .option('--artifact-type <type>', "the artifact's media type (default: guessed)");
    cmd.action(async (id: string, o: Record<string, unknown>) => {
      const engine = await c.engine();
      const extra =
        typeof o.artifact === 'string'
          ? { artifact: artifactPayload(engine, o.artifact, o.artifactType as string | undefined) }
          : {};
      const [r] = await engine.apply([op(o, { id, ...extra })], c.actor());
      c.out(
        r,
        () => `${verb === 'supersede' ? 'superseded' : 'corrected'} ${r!.id}: now rev ${r!.rev}`,
      );
    });
  }

  const retract = async (op: OpInput, reject: boolean) => {
    const engine = await c.engine();
    const [r] = await engine.apply([op], c.actor());
    c.out(
      r,
      () =>
        `${reject ? 'forgot' : 'retracted'} ${r!.id} (rev ${r!.rev}); it stays readable in \`mneme history ${r!.id}\``,
    );
  };
  const retractCmd = program
    .command('retract')
    .description('withdraw a memory; with --reject the value was wrong and is not allowed back')
    .argument('<id>');
  const retractOp = writeOptions(retractCmd, 'retract');
  retractCmd.action((id: string, o: Record<string, unknown>) =>
    retract(retractOp(o, { id }), o.reject === true),
  );
  const forget = program
    .command('forget')
    .description('retract --reject: withdraw a wrong value and keep it from coming back')
    .argument('<id>');
  const forgetOp = writeOptions(forget, 'retract', ['reject', 'expected_rev']);
  forget.action((id: string, o: Record<string, unknown>) =>
    retract(forgetOp(o, { id, reject: true }), true),
  );

  const link = program
    .command('link')
    .description('relate a memory to another: derived_from, contradicts or relates_to')
    .argument('<id>');
  const linkOp = writeOptions(link, 'link');
  link.action(async (id: string, o: Record<string, unknown>) => {
    const engine = await c.engine();
    const [r] = await engine.apply([linkOp(o, { id })], c.actor());
    c.out(r, () => `linked ${r!.id}: now rev ${r!.rev}`);
  });

  program
    .command('history')
    .description('every revision of a memory, oldest first')
    .argument('<id>')
    .action(async (id: string) => {
      const engine = await c.engine();
      const h = await engine.history(id);
      c.out(h, () =>
        table([
          ['rev', 'status', 'trust', 'valid', 'recorded', 'retired', 'by', 'abstract'],
          ...h.revisions.map((r) => [
            String(r.rev),
            r.status,
            r.trust,
            `${day(r.valid_from)} → ${day(r.valid_to)}`,
            day(r.recorded_at),
            day(r.retired_at),
            r.actor.kind,
            r.abstract,
          ]),
        ]),
      );
    });

  program
    .command('log')
    .description('the mutation journal, newest first')
    .option('--limit <n>', 'how many entries', parseIntOpt('--limit'), 20)
    .option('--id <id>', 'only entries about this memory')
    .option('--actor <kind>', 'only entries by this kind of actor')
    .option('--op <op>', 'only this operation')
    .action(async (o: { limit: number; id?: string; actor?: string; op?: string }) => {
      const engine = await c.engine();
      const entries = await engine.log({
        limit: o.limit,
        id: o.id,
        actorKind: o.actor,
        op: o.op,
        reverse: true,
      });
      c.out({ entries }, () =>
        entries.length === 0
          ? 'the journal is empty'
          : table(
              entries.map((e) => [
                `#${e.seq}`,
                day(e.at),
                e.actor.kind,
                e.op,
                e.target ? `${e.target.id}${e.after ? ` rev ${e.after.rev}` : ''}` : '',
                e.reason ?? '',
              ]),
            ),
      );
    });

  const journal = program.command('journal').description('the hash-chained journal');
  journal
    .command('verify')
    .description('check the chain: any edit, deletion or reordering is found')
    .option(
      '--operator',
      'with --db: the operator journal (tenant and token changes) instead of a tenant’s',
    )
    .action(async (o: { operator?: boolean }) => {
      if (o.operator) {
        const r = await withGovernance(databaseUrl(c), (g) => g.verifyOperatorJournal());
        c.out(r, () =>
          r.ok
            ? `operator journal ok: ${r.entries} entries, head #${r.head.seq} ${r.head.hash.slice(0, 12)}`
            : `operator journal BROKEN at entry ${r.firstBad!.seq ?? `line ${r.firstBad!.position}`}: ${r.firstBad!.problem}\nno tenant or token change is made until it verifies; restore the database from a backup`,
        );
        if (!r.ok) throw new ExitCode(2);
        return;
      }
      const engine = await c.engine();
      const r = await engine.verifyJournal();
      c.out(r, () =>
        r.ok
          ? `journal ok: ${r.entries} entries, head #${r.head.seq} ${r.head.hash.slice(0, 12)}${r.repaired?.length ? ` (${r.repaired.length} break(s) acknowledged by a journal repair)` : ''}`
          : `journal BROKEN at entry ${r.firstBad!.seq ?? `line ${r.firstBad!.position}`}: ${r.firstBad!.problem}\nevery write is refused until a person runs \`mneme journal repair\` (reads keep working)`,
      );
      if (!r.ok) throw new ExitCode(2);
    });

  program
    .command('rebuild')
    .description('drop the index and rebuild it from the files (loses nothing)')
    .action(async () => {
      const engine = await c.engine();
      const r = await engine.rebuild();
      c.out(
        r,
        () =>
          `rebuilt the index: ${r.memories} memories, ${r.revisions} revisions, ${r.journalEntries} journal entries${r.problems.length ? `\nproblems:\n  ${r.problems.join('\n  ')}` : ''}${r.handEdits.length ? `\nhand-edited files: ${r.handEdits.map((h) => h.path).join(', ')}` : ''}${r.vectors ? `\nvectors: ${r.vectors.withVector} of ${r.vectors.revisions} revisions (${r.vectors.embedded} embedded, ${r.vectors.pruned} stale dropped)${r.vectors.error ? ` — ${r.vectors.error}` : ''}` : ''}`,
      );
    });

  program
    .command('export')
    .description('write every memory of this project and global, with all revisions, as a bundle')
    .option('--out <file>', 'write here instead of stdout')
    .action(async (o: { out?: string }) => {
      const engine = await c.engine();
      const bundle = await engine.exportBundle();
      const text = `${JSON.stringify(bundle, null, 2)}\n`;
      if (o.out) {
        fs.writeFileSync(o.out, text);
        c.out(
          { out: o.out, memories: bundle.memories.length },
          () => `exported ${bundle.memories.length} memories to ${o.out}`,
        );
      } else {
        c.io.stdout(text);
      }
    });

  program
    .command('import')
    .description(
      'apply a bundle through the write path into this project (imported memories arrive untrusted)',
    )
    .argument(
      '<file>',
      `the bundle file ("-" for stdin; at most ${LIMITS.bundleBytes / 1024 / 1024} MiB)`,
    )
    .option('--global', "also write the bundle's global entries into the global scope")
    .option(
      '--into <scope>',
      "re-scope other projects' entries into this scope (this project, or global with --global)",
    )
    .action(async (file: string, o: { global?: boolean; into?: string }) => {
      const engine = await c.engine();
      const text = readInputFile(file, { cap: LIMITS.bundleBytes, what: 'the bundle' }).toString(
        'utf8',
      );
      const bar = progressBar(c.io, 'importing', c.globals().json);
      const r = await engine
        .importBundle(
          text,
          file,
          { ...c.actor(), kind: 'import' },
          { global: o.global, into: o.into, onProgress: (d, t) => bar.update(d, t) },
        )
        .finally(() => bar.end());
      const dropped = Object.entries(r.proposals_dropped);
      c.out(r, () =>
        [
          `imported ${r.imported} revisions (${r.unchanged} already present) from ${r.memories} memories`,
          `scopes: ${r.scopes.project} into this project, ${r.scopes.global} global, ${r.scopes.rescoped} re-scoped, ${r.scopes.refused_global} global refused (no --global), ${r.scopes.refused_other_scope} of other projects refused`,
          `tombstones armed: ${r.tombstones}; proposals re-opened: ${r.proposals}`,
          ...(dropped.length
            ? [`proposals not carried over:`, ...dropped.map(([why, n]) => `  ${n} × ${why}`)]
            : []),
          ...(r.refused.length
            ? [
                'refused:',
                ...r.refused.map(
                  (x) => `  ${x.id}${x.rev === null ? '' : ` rev ${x.rev}`}: ${x.message}`,
                ),
              ]
            : []),
        ].join('\n'),
      );
      if (r.refused.length > 0) throw new ExitCode(2);
    });

  program
    .command('status')
    .description('what this store holds and which project this directory is')
    .action(async () => {
      const engine = await c.engine();
      const s = await engine.status();
      c.out(s, () =>
        [
          `store    ${s.location} (${s.backend})`,
          `project  ${s.project ?? '—'}  ${s.identity ?? ''}`,
          `memories ${s.activeMemories} active of ${s.memories}, ${s.revisions} revisions`,
          ...(s.journalHead
            ? [`journal  #${s.journalHead.seq} ${s.journalHead.hash.slice(0, 12)}`]
            : []),
          `vectors  ${vectorLine(s.vector)}`,
          ...Object.entries(s.byType).map(([k, v]) => `  ${k}: ${v}`),
        ].join('\n'),
      );
    });

  registerAgentCommands(c);
  registerBench(c);
  return program;
}

/** Thrown by a command that succeeded in printing but must exit non-zero. */
export class ExitCode extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

export async function run(
  argv: string[],
  io: Io,
  extend?: (c: CliContext) => void,
): Promise<number> {
  let engine: Engine | null = null;
  const program = new Command();
  program.exitOverride();
  program.configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) });
  const globals = () => program.opts<Globals>();
  let settings: LoadedSettings | null = null;
  const c: CliContext = {
    io,
    program,
    globals,
    engine: async () => {
      engine ??= await openEngine({
        settings: c.settings(),
        cwd: io.cwd,
        env: io.env,
        surface: cliSurface(io.env),
      });
      return engine;
    },
    settings: () => (settings ??= loadSettings(globals(), io.env)),
    actor: () => cliActor(io.env),
    out: (json, human) => printResult(io, globals().json, json, human),
  };
  buildProgram(c);
  registerReview(c);
  registerPurge(c);
  registerArtifact(c);
  registerHostCommands(c);
  registerTeam(c);
  registerMaintenance(c);
  registerServe(c);
  registerVectors(c);
  registerKnowledge(c);
  registerConfig(c);
  extend?.(c);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (e) {
    if (e instanceof ExitCode) return e.code;
    if (e instanceof CommanderError) {
      if (
        e.code === 'commander.helpDisplayed' ||
        e.code === 'commander.help' ||
        e.code === 'commander.version'
      )
        return 0;
      return 1;
    }
    return reportError(e, globals().json, io);
  } finally {
    if (engine) await (engine as Engine).close();
  }
}
