// Artifacts (issue 19 item 3): a remember may carry a large file kept by reference. The engine
// checks it against the cap, screens it like a body (a text artifact's secrets are redacted in
// the stored bytes, injection shapes quarantine the memory; binary bytes are stored as they
// are), hashes it, and keeps it in the store before the commit whose revision names it. Reads
// serve it in pages from the current revision of a live lineage only: a forgotten, retracted or
// merged memory's artifact, and bytes a person purged, are refused with the reason. Purging
// bytes is a person's command, journaled (`artifact_purge`) before the bytes are removed.
import { MnemeError, invalid } from '../core/errors.js';
import {
  ARTIFACT_DEFAULT_MAX_BYTES,
  ARTIFACT_PAGE_BYTES,
  artifactName,
  decodeText,
  isArtifactHash,
  mediaTypeOf,
  pageRange,
  type ArtifactRef,
} from '../core/artifact.js';
import { sha256 } from '../core/hash.js';
import type { JournalEntry } from '../core/journal.js';
import { screenText, type ScreenFinding } from '../core/screen.js';
import type { Actor, Revision } from '../core/types.js';
import { readableScopes, type EngineContext } from './context.js';
import { servedScopes, withheldIn } from './outbound.js';
import type { GateOutcome } from './gates.js';
import { loadLineage, refuseRejectedHere } from './read.js';

export const ARTIFACT_PURGE_OP = 'artifact_purge';
export const CAP_SETTING = 'artifacts.max_bytes (MNEME_ARTIFACT_MAX_BYTES)';

/** An artifact as a surface sends it (ops.ts ArtifactInput). */
export interface ArtifactInput {
  name: string;
  media_type?: string | undefined;
  content_base64: string;
}

/** What the write path keeps of an artifact once it passed its checks. */
export interface PreparedArtifact {
  ref: ArtifactRef;
  bytes: Uint8Array;
  findings: ScreenFinding[];
}

export const artifactCap = (ctx: EngineContext) =>
  ctx.artifactMaxBytes ?? ARTIFACT_DEFAULT_MAX_BYTES;

/** The refusal of a file over the cap: its size, the cap, and the setting that moves it. */
export function artifactTooLarge(size: number, cap: number): MnemeError {
  return invalid(
    `the artifact is ${size} bytes; the cap is ${cap} bytes`,
    `send a smaller file, or raise the cap with the setting ${CAP_SETTING}`,
  );
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Checks, screens and hashes an artifact (nothing is stored here). */
export async function prepareArtifact(
  ctx: EngineContext,
  input: ArtifactInput,
): Promise<PreparedArtifact> {
  const name = artifactName(input.name);
  const b64 = input.content_base64;
  const cap = artifactCap(ctx);
  // The decoded size, before decoding, so an oversized file costs no allocation.
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  const size = Math.floor((b64.length * 3) / 4) - pad;
  if (size > cap) throw artifactTooLarge(size, cap);
  if (b64.length % 4 !== 0 || !BASE64.test(b64))
    throw invalid(
      'artifact.content_base64 is not base64',
      'encode the file with standard base64 (A–Z, a–z, 0–9, +, /, = padding)',
    );
  let bytes: Uint8Array = Buffer.from(b64, 'base64');
  const text = decodeText(bytes);
  const findings: ScreenFinding[] = [];
  if (text !== null) {
    const r = screenText(text);
    findings.push(...r.findings);
    if (r.secrets.length > 0) bytes = Buffer.from(r.text, 'utf8');
  }
  const hash = sha256(bytes);
  const purged = await purgeEntry(ctx, hash);
  if (purged)
    throw new MnemeError(
      'refused',
      `these bytes were purged by a person on ${purged.at.slice(0, 10)} (journal entry #${purged.seq}${purged.reason ? `: ${purged.reason}` : ''}); they may not be stored again`,
      { hint: 'attach a different file', details: { artifact: hash, purged: true } },
    );
  return {
    ref: {
      sha256: hash,
      size: bytes.byteLength,
      name,
      media_type: mediaTypeOf(name, text !== null, input.media_type),
    },
    bytes,
    findings,
  };
}

/** The artifact's screen findings joined to the revision's: secrets redacted, injection quarantines. */
export function withArtifactFindings(gated: GateOutcome, a: PreparedArtifact): GateOutcome {
  if (a.findings.length === 0) return gated;
  const revision: Revision = { ...gated.revision };
  const injection = a.findings.filter((f) => f.kind === 'injection');
  if (injection.length > 0) {
    const rules = new Set([
      ...(revision.quarantine ? revision.quarantine.split(', ') : []),
      ...injection.map((f) => f.rule),
    ]);
    revision.quarantine = [...rules].join(', ');
    revision.review = 'pending';
  }
  const secrets = a.findings.filter((f) => f.kind === 'secret').map((f) => `artifact:${f.rule}`);
  return {
    revision,
    redacted: [...new Set([...gated.redacted, ...secrets])],
    quarantined: gated.quarantined || injection.length > 0,
    findings: [...gated.findings, ...a.findings],
  };
}

/** The journal entry that purged these bytes, if a person did. */
export async function purgeEntry(ctx: EngineContext, hash: string): Promise<JournalEntry | null> {
  return (await purgedArtifacts(ctx)).get(hash) ?? null;
}

/** Every purged artifact's hash with the entry that purged it: one journal read for a loop. */
export async function purgedArtifacts(ctx: EngineContext): Promise<Map<string, JournalEntry>> {
  const out = new Map<string, JournalEntry>();
  for (const e of await ctx.store.journal({ op: ARTIFACT_PURGE_OP })) {
    const h = (e.data as { sha256?: unknown } | undefined)?.sha256;
    if (typeof h === 'string' && !out.has(h)) out.set(h, e);
  }
  return out;
}

export interface ArtifactPage {
  id: string;
  rev: number;
  artifact: ArtifactRef;
  /** The bytes served, first and last included (as `--range` takes them); null when empty. */
  range: { start: number; end: number } | null;
  /** The range of the next page (`A-`), or null at the end. */
  next: string | null;
  bytes: Uint8Array;
  /** Whether the page decodes as UTF-8 text. */
  text: boolean;
}

/** One page of a memory's artifact (the first, or the range `A-B`), with every read check. */
export async function readArtifactPage(
  ctx: EngineContext,
  id: string,
  range?: string,
): Promise<ArtifactPage> {
  const lineage = await loadLineage(ctx, id);
  await refuseRejectedHere(ctx, lineage);
  const v = lineage[lineage.length - 1]!;
  if (v.state !== 'active') {
    const why =
      v.state === 'rejected'
        ? 'was forgotten (its value was rejected)'
        : v.state === 'retracted'
          ? 'was retracted'
          : `is ${v.state}`;
    throw new MnemeError(
      'refused',
      `${id} ${why}; its artifact is no longer served on any surface`,
      {
        hint: 'a person can still see its history (`mneme history`); remember a new memory to attach the file again',
        details: { state: v.state },
      },
    );
  }
  const ref = v.artifact;
  if (!ref)
    throw new MnemeError('not_found', `${id} has no artifact`, {
      hint: 'read the memory itself with `mneme read ID`',
    });
  const purged = await purgeEntry(ctx, ref.sha256);
  if (purged) throw purgedRefusal(id, purged);
  const { start, end } = pageRange(range, ref.size, ARTIFACT_PAGE_BYTES);
  // Three bytes more, so a text page can end on a whole character.
  const got = await ctx.store.artifacts.read(ref.sha256, start, Math.min(end + 3, ref.size));
  if (got === null) throw missingBytes(id, ref.sha256);
  // What is served hashes to the name the revision recorded: bytes edited in the store (a hand
  // edit, another process) are refused, not served. A read of the whole artifact hashes what it
  // read; a page of a larger one has the store re-hash all of it after reading.
  const whole = start === 0 && got.byteLength >= ref.size;
  const verdict = whole
    ? got.byteLength === ref.size && sha256(got) === ref.sha256
      ? 'ok'
      : 'mismatch'
    : await ctx.store.artifacts.check(ref.sha256);
  if (verdict === 'missing') throw missingBytes(id, ref.sha256);
  if (verdict === 'mismatch')
    throw new MnemeError(
      'corrupt',
      `the bytes of ${id}'s artifact (${ref.sha256.slice(0, 12)}…) were altered in the store since they were kept: they no longer hash to their name, so they are not served`,
      {
        hint: 'run `mneme fsck` to list every altered artifact; restore the store from a backup or re-import an export that carries the bytes',
      },
    );
  let stop = end - start;
  let bytes = got.subarray(0, stop);
  let text = decodeText(bytes) !== null;
  if (!text && range === undefined) {
    // A default page that split a UTF-8 character ends before it.
    for (let back = 1; back <= 3 && stop - back > 0; back++) {
      if (decodeText(got.subarray(0, stop - back)) !== null) {
        stop -= back;
        bytes = got.subarray(0, stop);
        text = true;
        break;
      }
    }
  }
  // The outbound filter: bytes kept before a value was forgotten or purged are not served after.
  const withheld = (await withheldIn(ctx, [v.scope, ...servedScopes(ctx)]))(
    new TextDecoder('utf-8').decode(bytes),
  );
  if (withheld)
    throw new MnemeError(
      'refused',
      `${id}'s artifact holds a value that was forgotten or purged after it was kept; it is not served`,
      {
        hint: 'a person can remove it with `mneme artifact purge HASH --reason TEXT`; remember the memory again with a file that leaves the value out',
        details: {
          tombstone: withheld.key,
          ...(withheld.kind === 'purged' ? { purged: true } : {}),
        },
      },
    );
  const last = start + bytes.byteLength;
  await ctx.store.appendUsage([
    { at: ctx.clock().toISOString(), kind: 'read', ids: [v.id], actor: ctx.surface },
  ]);
  return {
    id: v.id,
    rev: v.rev,
    artifact: ref,
    range: bytes.byteLength > 0 ? { start, end: last - 1 } : null,
    next: last < ref.size ? `${last}-` : null,
    bytes,
    text,
  };
}

const missingBytes = (id: string, hash: string) =>
  new MnemeError(
    'corrupt',
    `the bytes of ${id}'s artifact (${hash.slice(0, 12)}…) are missing from the store`,
    { hint: 'run `mneme fsck`; restore the store from a backup or re-import its export' },
  );

/** A page as JSON surfaces send it: text decoded, other bytes base64. */
export function pageJson(p: ArtifactPage) {
  const { bytes, text, ...rest } = p;
  return {
    ...rest,
    encoding: text ? ('utf8' as const) : ('base64' as const),
    content: text ? Buffer.from(bytes).toString('utf8') : Buffer.from(bytes).toString('base64'),
  };
}

function purgedRefusal(id: string, e: JournalEntry): MnemeError {
  return new MnemeError(
    'refused',
    `the bytes of ${id}'s artifact were purged by a person on ${e.at.slice(0, 10)} (journal entry #${e.seq}${e.reason ? `: ${e.reason}` : ''})`,
    { hint: 'the memory itself is still readable with `mneme read ID`', details: { purged: true } },
  );
}

export interface ArtifactPurgeResult {
  sha256: string;
  seq: number;
  /** The memories (in scopes this binding reads) that referenced the bytes. */
  memories: string[];
  removed: boolean;
  /** A re-run: the purge was journaled already; this run only removed what it left. */
  finished?: boolean;
}

/**
 * A person removes an artifact's bytes (a leaked secret): journaled first (the commit point),
 * then removed; a re-run finishes a removal a crash cut off. Refused on an agent surface.
 */
export async function purgeArtifact(
  ctx: EngineContext,
  hash: string,
  reason: string,
  actor: Actor,
): Promise<ArtifactPurgeResult> {
  if (ctx.surface !== 'human' || actor.kind !== 'human')
    throw new MnemeError('refused', 'purging an artifact is a decision only a person can make', {
      hint: 'run `mneme artifact purge HASH --reason TEXT` yourself in a terminal outside the agent session',
    });
  if (!isArtifactHash(hash))
    throw invalid(
      `"${hash.slice(0, 80)}" is not an artifact hash`,
      'an artifact hash is 64 hexadecimal digits (sha256), as `mneme read ID --json` shows it',
    );
  const why = reason.trim();
  if (why === '') throw invalid('an artifact purge needs --reason TEXT (it is what stays)');
  return ctx.store.withWriteLock(async () => {
    const scopes = readableScopes(ctx.binding);
    const holders = (await ctx.store.listCurrent(scopes, { includeEnded: true })).filter(
      (m) => m.artifact?.sha256 === hash,
    );
    const prior = await purgeEntry(ctx, hash);
    if (prior) {
      const removed = await ctx.store.artifacts.remove(hash);
      return {
        sha256: hash,
        seq: prior.seq,
        memories: holders.map((m) => m.id),
        removed,
        finished: true,
      };
    }
    if (holders.length === 0)
      throw new MnemeError(
        'not_found',
        `no memory in this project or the global scope references artifact ${hash.slice(0, 12)}…`,
        {
          hint: 'run it from the project whose memory holds the file; `mneme read ID --json` shows the hash',
        },
      );
    const size = (await ctx.store.artifacts.size(hash)) ?? holders[0]!.artifact!.size;
    const memScopes = [...new Set(holders.map((m) => m.scope))];
    const entry = await ctx.store.commit({
      body: {
        at: ctx.clock().toISOString(),
        actor,
        op: ARTIFACT_PURGE_OP,
        target: null,
        before: null,
        after: null,
        reason: why.slice(0, 1000),
        idem: null,
        req: null,
        data: {
          sha256: hash,
          size,
          memories: holders.map((m) => m.id),
          ...(memScopes.length === 1 ? { scope: memScopes[0] } : { scopes: memScopes }),
        },
      },
      revision: null,
    });
    const removed = await ctx.store.artifacts.remove(hash);
    return { sha256: hash, seq: entry.seq, memories: holders.map((m) => m.id), removed };
  });
}
