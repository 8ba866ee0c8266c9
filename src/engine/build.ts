// Building candidate revisions for each op: validation of text and fields, slug derivation,
// the optimistic revision check, and the lineage rules (a retracted memory cannot be revised,
// an import must extend its lineage exactly). Nothing here writes; apply.ts commits.
import { MnemeError, invalid } from '../core/errors.js';
import { canonicalJson, sha256 } from '../core/hash.js';
import { isMemoryId, newMemoryId } from '../core/ids.js';
import { LIMITS, checkBody, checkLine } from '../core/limits.js';
import { parseRevision, serializeRevision } from '../core/markdown.js';
import { toRevision, valueText } from '../core/revision.js';
import { GLOBAL_SCOPE } from '../core/scope.js';
import { deriveSlug } from '../core/slug.js';
import { toIso } from '../core/time.js';
import { assignTrust } from '../core/trust.js';
import type { Actor, Revision, RevisionView, SourceBinding } from '../core/types.js';
import { readableScopes, type EngineContext } from './context.js';
import { bindSource } from './source-binding.js';
import { prepareArtifact, type PreparedArtifact } from './artifacts.js';
import { checkTombstones } from './gates.js';
import type {
  ApplyResult,
  ExternalEditOp,
  ImportOp,
  LinkOp,
  RememberOp,
  RetractOp,
  ReviseOp,
} from './ops.js';

export type Built =
  | {
      candidate: Revision;
      before: RevisionView | null;
      conflictWith?: RevisionView;
      skipScreen?: boolean;
      /** The engine hashed the candidate's source just now (journaled; resets freshness). */
      freshSource?: boolean;
      /** An artifact the candidate references, checked and screened, to store before the commit. */
      artifact?: PreparedArtifact;
    }
  | ApplyResult;

export const revisionHash = (r: Revision) => sha256(serializeRevision(toRevision(r)));
const ctxHash = revisionHash;

function cleanTags(tags: string[] | undefined): string[] {
  const out = (tags ?? []).map((t) => checkLine(t, 'tag', LIMITS.tagChars)).filter((t) => t !== '');
  if (out.length > LIMITS.tags) throw invalid(`${out.length} tags; the limit is ${LIMITS.tags}`);
  return [...new Set(out)];
}

function cleanFields(fields: Record<string, string> | undefined): Record<string, string> {
  const entries = Object.entries(fields ?? {});
  if (entries.length > LIMITS.fields)
    throw invalid(`${entries.length} fields; the limit is ${LIMITS.fields}`);
  const out: Record<string, string> = {};
  for (const [k, v] of entries) {
    if (!/^[a-z][a-z0-9_]{0,39}$/.test(k))
      throw invalid(
        `field name "${k.slice(0, 60)}" is not allowed`,
        'field names are lower-case letters, digits and _',
      );
    out[k] = checkLine(v, `field ${k}`, LIMITS.fieldChars);
  }
  return out;
}

function cleanGlobs(globs: string[] | undefined): string[] {
  const out = (globs ?? []).map((g) => checkLine(g, 'applies-to glob', 200));
  if (out.length > LIMITS.appliesTo)
    throw invalid(`${out.length} applies-to globs; the limit is ${LIMITS.appliesTo}`);
  for (const g of out)
    if (g.startsWith('/') || g.split('/').includes('..'))
      throw invalid(`applies-to glob "${g}" must be relative to the project root`);
  return out;
}

const withSourceProvenance = (p: string[], s: SourceBinding | null) =>
  s ? [...p.filter((x) => !x.startsWith('file:')), `file:${s.path}@${s.sha256.slice(0, 12)}`] : p;

/**
 * A value a person confirmed is changed by a person only (invariants 7 and 9): any other actor
 * (agent, hook, distiller, import, sleep, fsck, …) may propose a change to it, never apply one.
 */
const confirmedByPerson = (cur: RevisionView, actor: Actor) =>
  cur.trust === 'confirmed' && actor.kind !== 'human';

const onlyAPersonRetracts = (cur: RevisionView) =>
  new MnemeError(
    'refused',
    `${cur.id} was confirmed by a person; only a person can retract or forget it, on a human surface`,
    {
      hint: 'to propose another value, correct it: a person then decides in review',
      details: { trust: 'confirmed' },
    },
  );

const reasonOf = (r: string | undefined) =>
  r === undefined ? null : checkLine(r, 'reason', LIMITS.reasonChars);

export async function buildRemember(
  ctx: EngineContext,
  op: RememberOp,
  actor: Actor,
  now: string,
): Promise<Built> {
  const schema = ctx.registry.get(op.type);
  const fields = cleanFields(op.fields);
  ctx.registry.checkFields(schema, fields);
  const abstract = checkLine(op.abstract, 'abstract', LIMITS.abstractChars);
  if (abstract === '')
    throw invalid('the abstract is empty', 'give the memory a one-line abstract');
  const body = checkBody(op.body ?? '');
  const scope = op.global ? GLOBAL_SCOPE : (ctx.binding.project ?? GLOBAL_SCOPE);
  const validFrom = op.valid_from ? toIso(op.valid_from, 'valid_from') : now;
  const validTo = op.valid_to ? toIso(op.valid_to, 'valid_to') : null;
  if (validTo !== null && validTo <= validFrom) throw invalid('valid_to must be after valid_from');
  const slug = deriveSlug(schema, fields, abstract, `${validFrom}\u0000${abstract}\u0000${body}`);
  const tags = cleanTags(op.tags);
  const source = op.source !== undefined ? bindSource(ctx, op.source) : null;
  const artifact = op.artifact ? await prepareArtifact(ctx, op.artifact) : undefined;
  const candidate = () =>
    withRef(
      newRevision(
        ctx,
        op,
        actor,
        now,
        schema.name,
        scope,
        slug,
        abstract,
        body,
        tags,
        fields,
        validFrom,
        validTo,
        source,
      ),
      artifact,
    );
  const existing = await ctx.store.findLiveBySlug(scope, schema.name, slug);
  if (existing) {
    if (
      valueText(existing) === valueText({ abstract, body }) &&
      canonicalJson(existing.fields) === canonicalJson(fields) &&
      existing.artifact?.sha256 === artifact?.ref.sha256
    ) {
      return {
        op: op.op,
        id: existing.id,
        rev: existing.rev,
        seq: null,
        unchanged: true,
      } satisfies ApplyResult;
    }
    if (actor.kind !== 'human') {
      // An agent restating a subject with another value does not overwrite it: the candidate
      // waits for a person as a conflict proposal; the existing memory stays served.
      return { candidate: candidate(), before: null, conflictWith: existing };
    }
    throw new MnemeError(
      'conflict',
      `a ${schema.name} about "${fields.subject ?? abstract}" already exists in this scope (${existing.id} rev ${existing.rev}) with a different value`,
      {
        hint: `to record a change use \`mneme supersede ${existing.id}\`; to fix a wrong value use \`mneme correct ${existing.id}\``,
        details: { existing: existing.id },
      },
    );
  }
  return {
    candidate: candidate(),
    before: null,
    freshSource: source !== null,
    ...(artifact ? { artifact } : {}),
  };
}

const withRef = (r: Revision, a: PreparedArtifact | undefined): Revision =>
  a ? { ...r, artifact: a.ref } : r;

function newRevision(
  ctx: EngineContext,
  op: RememberOp,
  actor: Actor,
  now: string,
  type: string,
  scope: string,
  slug: string,
  abstract: string,
  body: string,
  tags: string[],
  fields: Record<string, string>,
  validFrom: string,
  validTo: string | null,
  source: SourceBinding | null = null,
): Revision {
  return {
    id: newMemoryId(ctx.clock()),
    rev: 1,
    op: 'remember',
    type,
    scope,
    slug,
    abstract,
    body,
    tags,
    fields,
    links: op.links ?? [],
    status: 'active',
    rejected: false,
    trust: assignTrust(actor, { freshSource: source !== null }),
    review: 'none',
    quarantine: null,
    valid_from: validFrom,
    valid_to: validTo,
    recorded_at: now,
    actor,
    provenance: withSourceProvenance(op.provenance ?? [], source),
    source,
    applies_to: cleanGlobs(op.applies_to),
    reason: reasonOf(op.reason),
  };
}

export async function loadCurrent(
  ctx: EngineContext,
  id: string,
  expectedRev: number | undefined,
): Promise<RevisionView> {
  if (!isMemoryId(id))
    throw invalid(
      `"${id.slice(0, 80)}" is not a memory id`,
      'memory ids look like mem_01J…; find them with `mneme recall`',
    );
  const lineage = await ctx.store.getLineage(id);
  const cur = lineage?.[lineage.length - 1];
  if (!cur || !readableScopes(ctx.binding).includes(cur.scope)) {
    throw new MnemeError('not_found', `no memory ${id} in this project or the global scope`, {
      hint: 'check the id with `mneme recall` or run from the project the memory belongs to',
    });
  }
  if (cur.status !== 'active') {
    throw new MnemeError('refused', `${id} is ${cur.state}; it can no longer be changed`, {
      hint: 'remember a new memory instead; its history stays readable with `mneme history`',
    });
  }
  if (expectedRev !== undefined && expectedRev !== cur.rev) {
    throw new MnemeError(
      'conflict',
      `stale revision: you expected ${id} at rev ${expectedRev} but it is at rev ${cur.rev}`,
      {
        hint: `read it again (\`mneme read ${id}\`) and retry with --expected-rev ${cur.rev}`,
        details: { current_rev: cur.rev },
      },
    );
  }
  return cur;
}

export async function buildRevise(
  ctx: EngineContext,
  op: ReviseOp,
  actor: Actor,
  now: string,
): Promise<Built> {
  const cur = await loadCurrent(ctx, op.id, op.expected_rev);
  const schema = ctx.registry.get(cur.type);
  const fields = { ...cur.fields, ...cleanFields(op.fields) };
  ctx.registry.checkFields(schema, fields);
  const abstract =
    op.abstract !== undefined
      ? checkLine(op.abstract, 'abstract', LIMITS.abstractChars)
      : cur.abstract;
  if (abstract === '') throw invalid('the abstract is empty');
  const body = op.body !== undefined ? checkBody(op.body) : cur.body;
  let validFrom: string;
  if (op.op === 'supersede') {
    validFrom = op.valid_from ? toIso(op.valid_from, 'valid_from') : now;
    if (validFrom <= cur.valid_from) {
      throw invalid(
        `a successor must start after its predecessor (${cur.valid_from})`,
        'if the old value was simply wrong, use `mneme correct` instead',
      );
    }
  } else {
    validFrom = op.valid_from ? toIso(op.valid_from, 'valid_from') : cur.valid_from;
  }
  const validTo =
    op.valid_to !== undefined
      ? op.valid_to === null
        ? null
        : toIso(op.valid_to, 'valid_to')
      : op.op === 'supersede'
        ? null
        : cur.valid_to;
  if (validTo !== null && validTo <= validFrom) throw invalid('valid_to must be after valid_from');
  const tags = op.tags !== undefined ? cleanTags(op.tags) : cur.tags;
  const artifact = op.artifact ? await prepareArtifact(ctx, op.artifact) : undefined;
  if (
    (artifact === undefined || artifact.ref.sha256 === cur.artifact?.sha256) &&
    valueText({ abstract, body }) === valueText(cur) &&
    canonicalJson(fields) === canonicalJson(cur.fields) &&
    op.valid_from === undefined &&
    op.valid_to === undefined &&
    op.tags === undefined
  ) {
    throw invalid(
      `nothing to ${op.op}: the new value is identical to rev ${cur.rev}`,
      'pass --abstract, --body or --field with the new value',
    );
  }
  const slug = schema.keyFields.some((k) => fields[k] !== cur.fields[k])
    ? deriveSlug(schema, fields, abstract, `${validFrom}\u0000${abstract}`)
    : cur.slug;
  if (slug !== cur.slug) {
    const other = await ctx.store.findLiveBySlug(cur.scope, cur.type, slug);
    if (other && other.id !== cur.id) {
      throw new MnemeError('conflict', `another memory (${other.id}) already holds that subject`, {
        hint: `supersede ${other.id} instead`,
      });
    }
  }
  const source = op.source !== undefined ? bindSource(ctx, op.source) : cur.source;
  const candidate: Revision = {
    ...toRevision(cur),
    rev: cur.rev + 1,
    op: op.op,
    source,
    slug,
    abstract,
    body,
    fields,
    tags,
    links: op.links ?? cur.links,
    valid_from: validFrom,
    valid_to: validTo,
    recorded_at: now,
    actor,
    trust: assignTrust(actor, { freshSource: op.source !== undefined }),
    review: 'none',
    quarantine: null,
    provenance: withSourceProvenance(op.provenance ?? [], op.source !== undefined ? source : null),
    applies_to: op.applies_to !== undefined ? cleanGlobs(op.applies_to) : cur.applies_to,
    reason: reasonOf(op.reason),
    ...(artifact ? { artifact: artifact.ref } : {}),
  };
  // Held for a person as a conflict proposal (apply.ts): nothing is written, no tombstone armed.
  if (confirmedByPerson(cur, actor)) return { candidate, before: cur, conflictWith: cur };
  return {
    candidate,
    before: cur,
    freshSource: op.source !== undefined,
    ...(artifact ? { artifact } : {}),
  };
}

export async function buildRetract(
  ctx: EngineContext,
  op: RetractOp,
  actor: Actor,
  now: string,
): Promise<Built> {
  const cur = await loadCurrent(ctx, op.id, op.expected_rev);
  if (confirmedByPerson(cur, actor)) throw onlyAPersonRetracts(cur);
  const candidate: Revision = {
    ...toRevision(cur),
    rev: cur.rev + 1,
    op: 'retract',
    status: 'retracted',
    rejected: op.reject === true,
    recorded_at: now,
    actor,
    provenance: op.provenance ?? [],
    reason: reasonOf(op.reason),
  };
  return { candidate, before: cur };
}

export async function buildLink(
  ctx: EngineContext,
  op: LinkOp,
  actor: Actor,
  now: string,
): Promise<Built> {
  const cur = await loadCurrent(ctx, op.id, op.expected_rev);
  await loadCurrent(ctx, op.target, undefined);
  if (cur.links.some((l) => l.rel === op.rel && l.target === op.target)) {
    return {
      op: op.op,
      id: cur.id,
      rev: cur.rev,
      seq: null,
      unchanged: true,
    } satisfies ApplyResult;
  }
  const candidate: Revision = {
    ...toRevision(cur),
    rev: cur.rev + 1,
    op: 'link',
    links: [...cur.links, { rel: op.rel, target: op.target }],
    recorded_at: now,
    actor,
    provenance: op.provenance ?? cur.provenance,
    reason: reasonOf(op.reason),
  };
  return { candidate, before: cur };
}

/**
 * An imported revision keeps its id, times and text, arrives `untrusted`, and must extend the
 * lineage exactly: a revision already present is a no-op, one that diverges is a conflict. A
 * lineage retracted here after the export stays retracted (the bundle is only a prefix of it).
 */
export async function buildImport(ctx: EngineContext, op: ImportOp): Promise<Built> {
  const r = op.revision as Revision;
  // An import writes only into this binding's project, and into global only when the person
  // importing said so; bundle.ts maps (or refuses) every entry before it gets here.
  if (r.scope !== ctx.binding.project && !(r.scope === GLOBAL_SCOPE && op.global === true)) {
    throw new MnemeError(
      'refused',
      `${r.id} is for scope ${r.scope}; an import writes only into this project${r.scope === GLOBAL_SCOPE ? ' (global needs --global)' : ''}`,
      { hint: 'run the import in the project it belongs to, or pass --into to re-scope it' },
    );
  }
  const lineage = await ctx.store.getLineage(r.id);
  if (lineage && lineage[0]!.scope !== r.scope) {
    throw new MnemeError('refused', `${r.id} cannot be imported here: its id is already taken`, {
      hint: 'a lineage keeps its scope; import it in the project it belongs to',
    });
  }
  const same = lineage?.find((v) => v.rev === r.rev);
  if (same) {
    const mine = serializeRevision({ ...toRevision(same), trust: 'untrusted', provenance: [] });
    const theirs = serializeRevision({ ...r, trust: 'untrusted', provenance: [] });
    if (mine === theirs || ctxHash(toRevision(same)) === ctxHash(r)) {
      return { op: op.op, id: r.id, rev: r.rev, seq: null, unchanged: true } satisfies ApplyResult;
    }
    // Provenance and trust differ between stores; compare the stated value and lifecycle.
    if (
      valueText(same) === valueText(r) &&
      same.status === r.status &&
      same.valid_from === r.valid_from
    ) {
      return { op: op.op, id: r.id, rev: r.rev, seq: null, unchanged: true } satisfies ApplyResult;
    }
    throw new MnemeError(
      'conflict',
      `${r.id} rev ${r.rev} in the bundle differs from the one in this store`,
      {
        hint: 'the two stores diverged; import into an empty store or resolve by hand',
      },
    );
  }
  const cur = lineage?.[lineage.length - 1] ?? null;
  const expected = cur ? cur.rev + 1 : 1;
  if (r.rev > expected) {
    throw new MnemeError(
      'conflict',
      `${r.id} rev ${r.rev} cannot be imported before rev ${expected}`,
      { hint: 'import the whole bundle in order' },
    );
  }
  if (!cur && op.final_active && op.final_abstract !== undefined) {
    // A lineage whose value was rejected here must not come back through an old bundle.
    await checkTombstones(ctx, r.scope, [op.final_abstract]);
  }
  if (!cur) {
    const holder = await ctx.store.findLiveBySlug(r.scope, r.type, r.slug);
    if (holder && r.status === 'active') {
      throw new MnemeError(
        'conflict',
        `${r.id} would take the place of ${holder.id}, which holds the same subject here`,
        {
          hint: `supersede ${holder.id} by hand if the imported value is right`,
        },
      );
    }
  } else if (cur.status !== 'active') {
    return { op: op.op, id: r.id, rev: cur.rev, seq: null, unchanged: true } satisfies ApplyResult;
  }
  ctx.registry.get(r.type);
  const candidate: Revision = {
    ...r,
    trust: 'untrusted',
    provenance: [...r.provenance.filter((p) => !p.startsWith('import:')), `import:${op.bundle}`],
  };
  // A bundle is data, never a person: over a confirmed value it can only propose.
  if (cur && cur.trust === 'confirmed') {
    if (candidate.status !== 'active') throw onlyAPersonRetracts(cur);
    return { candidate, before: cur, conflictWith: cur };
  }
  return { candidate, before: cur };
}

/**
 * A hand edit of a memory file becomes a revision by actor `external` at trust `untrusted`, with
 * review pending: it is kept (nothing is lost) but not injected until a person confirms it.
 */
export async function buildExternalEdit(
  ctx: EngineContext,
  op: ExternalEditOp,
  now: string,
): Promise<Built> {
  const cur = await loadCurrent(ctx, op.id, undefined);
  let edited: Revision;
  try {
    edited = parseRevision(op.text, op.path);
  } catch {
    // Unparseable front matter: keep the text as the body so nothing is lost.
    edited = { ...toRevision(cur), body: op.text };
  }
  const candidate: Revision = {
    ...toRevision(cur),
    rev: cur.rev + 1,
    op: 'external_edit',
    abstract: checkLine(edited.abstract, 'abstract', LIMITS.abstractChars) || cur.abstract,
    body: checkBody(edited.body),
    fields: edited.fields,
    tags: edited.tags,
    valid_from: cur.valid_from,
    valid_to: edited.valid_to,
    recorded_at: now,
    actor: { kind: 'external', surface: 'file' },
    trust: 'untrusted',
    review: 'pending',
    quarantine: null,
    provenance: [`file:${op.path}@${sha256(op.text).slice(0, 12)}`],
    reason: 'edited outside mneme',
  };
  return { candidate, before: cur };
}
