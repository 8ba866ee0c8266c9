// Artifacts on the command line: `remember --artifact FILE` reads the file (up to the cap) into
// the remember payload, `read ID --artifact [--range A-B] [--out FILE]` writes its bytes (the whole
// artifact, or the range, page by page; --json prints one page as MCP and HTTP return it), and
// `mneme artifact purge HASH --reason TEXT` is a person's removal of the bytes, behind the same
// gate as `mneme purge`: an interactive terminal outside an agent session, a typed confirmation
// and the review passphrase when one is set.
import fs from 'node:fs';
import path from 'node:path';
import { MnemeError } from '../../core/errors.js';
import type { Actor } from '../../core/types.js';
import type { Engine } from '../../engine/engine.js';
import { readInputFile } from '../input-file.js';
import { askPassphrase, humanAsk } from './review.js';
import type { CliContext } from './run.js';

const HUMAN: Actor = { kind: 'human', surface: 'cli-artifact' };

/** The `artifact` payload of a remember, from `--artifact FILE` (and `--artifact-type`). */
export function artifactPayload(
  engine: Engine,
  file: string,
  mediaType: string | undefined,
): { name: string; media_type?: string; content_base64: string } {
  const cap = engine.artifactCap;
  let size: number | undefined;
  try {
    size = fs.statSync(file).size;
  } catch {
    // readInputFile says why the file cannot be read
  }
  if (size !== undefined && size > cap)
    throw new MnemeError(
      'invalid',
      `the artifact ${file} is ${size} bytes; the cap is ${cap} bytes`,
      {
        hint: 'pass a smaller file, or raise the cap with the setting artifacts.max_bytes (MNEME_ARTIFACT_MAX_BYTES)',
      },
    );
  const bytes = readInputFile(file, { cap, what: '--artifact' });
  return {
    name: path.basename(file),
    ...(mediaType !== undefined ? { media_type: mediaType } : {}),
    content_base64: bytes.toString('base64'),
  };
}

/** `read ID --artifact`: one page as JSON, or the bytes of the range (all pages) to FILE/stdout. */
export async function readArtifact(
  c: CliContext,
  engine: Engine,
  id: string,
  o: { range?: string; out?: string },
): Promise<void> {
  if (c.globals().json) {
    const page = await engine.readArtifact(id, o.range);
    c.out(page, () => '');
    return;
  }
  const fd = o.out !== undefined ? fs.openSync(o.out, 'w', 0o644) : null;
  try {
    const to = o.range?.split('-')[1];
    const end = to !== undefined && to !== '' ? Number(to) : Infinity;
    let range = o.range;
    for (;;) {
      const page = await engine.artifactPage(id, range);
      if (fd !== null) fs.writeSync(fd, page.bytes);
      else if (page.text) c.io.stdout(Buffer.from(page.bytes).toString('utf8'));
      else if (c.io.stdoutBytes) c.io.stdoutBytes(page.bytes);
      else
        throw new MnemeError('invalid', `${id}'s artifact is binary`, {
          hint: 'write it to a file with --out FILE, or read pages as base64 with --json',
        });
      const next = page.next === null ? null : Number(page.next.slice(0, -1));
      if (next === null || next > end) break;
      range = Number.isFinite(end) ? `${next}-${end}` : `${next}-`;
    }
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}

export function registerArtifact(c: CliContext): void {
  const artifact = c.program
    .command('artifact')
    .description('artifacts kept beside memories (remember --artifact, read --artifact)');
  artifact
    .command('purge')
    .description(
      "remove an artifact's bytes from the store (a leaked secret), journaled; a person, in a terminal",
    )
    .argument('<hash>', 'the artifact sha256 (as `mneme read ID --artifact --json` shows it)')
    .option('--reason <text>', 'why (kept in the journal)')
    .action(async (hash: string, o: { reason?: string }) => {
      if (!o.reason?.trim())
        throw new MnemeError(
          'invalid',
          'an artifact purge needs --reason TEXT (it is what stays)',
          {
            hint: 'say why, e.g. --reason "leaked credential in the log"',
          },
        );
      const ask = humanAsk(c, 'mneme artifact purge');
      const engine = await c.engine();
      c.io.stdout(
        `This removes the bytes of artifact ${hash} from this store. The memories that reference it\n` +
          'stay; reading the artifact then says it was purged. It cannot be undone.\n',
      );
      if ((await ask('Type "purge" to remove it: ')).trim() !== 'purge')
        throw new MnemeError('refused', 'not confirmed; nothing changed');
      await askPassphrase(engine, ask);
      const r = await engine.purgeArtifact(hash, o.reason, HUMAN);
      c.out(r, () =>
        r.finished
          ? `artifact ${hash.slice(0, 12)}… was purged already (journal entry #${r.seq}); ${r.removed ? 'removed the bytes that purge left' : 'no bytes were left'}`
          : `purged artifact ${hash.slice(0, 12)}… (journal entry #${r.seq}); referenced by ${r.memories.join(', ')}`,
      );
    });
}
