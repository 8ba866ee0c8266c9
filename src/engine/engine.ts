// The engine's public face, and the only engine module a surface imports: one object per bound
// scope and surface, built by the composition root (surfaces/compose.ts) with createEngine.
// Everything a surface needs is a named operation here; a surface never reaches the store or the
// context (`#ctx` is private to this class: what needs it is an operation here).
// Each path is loaded on first use, so a process that only recalls or injects (a hook, `mneme
// recall`) never loads the write path's validation, gates and screening.
import { ARTIFACT_DEFAULT_MAX_BYTES } from '../core/artifact.js';
import { MnemeError } from '../core/errors.js';
import type { Actor, RevisionView } from '../core/types.js';
import type { JournalQuery } from '../store/port.js';
import type { SessionStore } from '../store/sessions.js';
import { readableScopes, type Binding, type EngineContext } from './context.js';
import type { Executor, DistillOptions } from './distill.js';
import type { FsckOptions } from './fsck.js';
import type { InjectOptions } from './inject.js';
import type { OpInput } from './ops.js';
import type { ReadLevel } from './read.js';
import type { RecallOptions } from './recall.js';
import type { SleepOptions } from './sleep.js';
import {
  EVERY_PROJECT,
  mayReadReport,
  serveReport,
  writeResultFor,
  type Reader,
} from './outbound.js';
import { indexVectors, vectorStatus, type FillReport } from './vector.js';

// What a surface may name from the engine: types of its operations' inputs and outputs.
export type { Binding, EngineContext, SourceFiles } from './context.js';
export type { DistillLimits, DistillOptions, DistillReport, Executor } from './distill.js';
export type { FsckChecked, FsckIssue, FsckOptions, FsckReport, FixOutcome, Phase } from './fsck.js';
export type { InjectOptions, InjectResult, PromptInjectOptions } from './inject.js';
export type { BrowseFilters, MemoryRow } from './browse-filters.js';
export { FRESHNESS_FILTERS, STATUS_FILTERS } from './browse-filters.js';
export type { ApplyResult, OpInput } from './ops.js';
export type { ReadLevel } from './read.js';
export {
  EVERY_PROJECT,
  readsStoreWide,
  reportHead,
  writeResultFor,
  type Reader,
} from './outbound.js';
export type { ArtifactPage, ArtifactPurgeResult } from './artifacts.js';
export type { ProjectEntry } from './project-names.js';
export type { RecallOptions, RecallResponse, RecallResult } from './recall.js';
export type {
  KnowledgeOptions,
  KnowledgeResult,
  KnowledgeStatus,
  RefreshReport,
} from './knowledge.js';
export type { SleepOptions, SleepResult } from './sleep.js';
export type { SourceCheck } from './drift.js';
export type { FindResult, PurgeInput, PurgeResult, VerifyResult } from './purge.js';
/** What `trace` returns: each revision with its provenance, and the journal entries. */
export type TraceReport = Awaited<ReturnType<typeof import('./trace.js').trace>>;
export { DISTILL_DEFAULTS } from './distill-limits.js';
export type { DistillSpend, SpendTally } from './distill-limits.js';
export { INJECT_BUDGETS, PROMPT_RECALL, WEIGHT_FLOOR } from './inject.js';
export { PHASES } from './fsck-phases.js';
export { KNOWLEDGE_INCLUDE, KNOWLEDGE_MAX_FILE_BYTES } from '../core/knowledge.js';

/** A usage event as a surface reports it: the engine stamps the bound scope (and the time). */
export interface UsageReport {
  at?: string;
  kind: 'inject' | 'cite' | 'ignored';
  ids: string[];
  actor: string;
  query?: string;
}

/** The engine over the abilities the composition root gives it. */
export function createEngine(deps: EngineContext): Engine {
  return new Engine(deps);
}

export class Engine {
  /** What the engine was given; private to it (a surface, test or benchmark never reaches it). */
  readonly #ctx: EngineContext;

  constructor(ctx: EngineContext) {
    this.#ctx = ctx;
  }

  get scopes(): string[] {
    return readableScopes(this.#ctx.binding);
  }
  /** The project this engine is bound to (a copy: a caller cannot widen it). */
  get binding(): Binding {
    return { ...this.#ctx.binding };
  }
  get surface(): 'human' | 'agent' {
    return this.#ctx.surface;
  }
  /** The engine's clock, as an ISO instant. */
  now(): string {
    return this.#ctx.clock().toISOString();
  }
  /** The memory types the registry knows. */
  typeNames(): string[] {
    return this.#ctx.registry.names();
  }
  /** Every revision of a memory this binding may read (not_found otherwise). */
  async lineage(id: string): Promise<RevisionView[]> {
    const { loadLineage } = await import('./read.js');
    return loadLineage(this.#ctx, id);
  }
  /** The current revision of a memory in a scope this binding reads, or null. */
  async current(id: string): Promise<RevisionView | null> {
    const lineage = await this.#ctx.store.getLineage(id);
    if (!lineage || lineage.length === 0 || !this.scopes.includes(lineage[0]!.scope)) return null;
    return lineage[lineage.length - 1]!;
  }
  /** Current memories of this binding's scopes (ended ones too); quarantined hidden from agents. */
  async memories(opts: { includeEnded?: boolean } = {}): Promise<RevisionView[]> {
    const all = await this.#ctx.store.listCurrent(this.scopes, {
      includeEnded: opts.includeEnded ?? false,
    });
    // A value rejected in another scope this reader reads (or acts for) is not listed either.
    const rejected = await this.rejectedHere();
    return all.filter(
      (v) =>
        !(this.#ctx.surface === 'agent' && v.quarantine !== null) &&
        !(v.status === 'active' && rejected(v)),
    );
  }
  /**
   * Browsing without a query: this binding's memories (ended ones too) filtered by type, trust,
   * status and source freshness (re-read through the project's files, as recall does), newest
   * first. Refuses an unknown filter value.
   */
  async browse(filters: import('./browse-filters.js').BrowseFilters = {}) {
    const { browseRows } = await import('./browse.js');
    return browseRows(this.#ctx, await this.memories({ includeEnded: true }), filters);
  }
  /** Memories per project scope in the whole store (callers filter by what they may read). */
  async projectCounts(): Promise<Record<string, number>> {
    const { byScope } = await this.#ctx.store.status();
    return Object.fromEntries(Object.entries(byScope).filter(([s]) => s !== 'global'));
  }
  /**
   * A person's view across every project in this store (the local dashboard: whoever runs it
   * may open every project on this machine). Refused on an agent surface; nothing here writes.
   */
  everyProject() {
    if (this.#ctx.surface !== 'human')
      throw new MnemeError('refused', 'the view across projects is for a person');
    const store = this.#ctx.store;
    return {
      /** Where a memory lives: its scope, or null when there is no such memory. */
      locate: async (id: string): Promise<string | null> => {
        const lineage = await store.getLineage(id);
        return lineage && lineage.length > 0 ? lineage[0]!.scope : null;
      },
      /** Active memories per scope, global included. */
      counts: async () => (await store.status()).byScope,
      /**
       * Every project with memories, by its readable name (remote or path) with its count; this
       * binding's project name is recorded first (project-names.ts).
       */
      projects: async () => {
        const { listProjects, noteProjectName } = await import('./project-names.js');
        await noteProjectName(this.#ctx);
        return listProjects(this.#ctx);
      },
      proposals: (q: { state?: 'pending' | 'accepted' | 'rejected'; id?: string } = {}) =>
        store.proposals(q),
      journal: (q: JournalQuery = {}) => store.journal(q),
      tombstones: (scopes: string[]) => store.tombstones(scopes),
    };
  }
  /** Records what a surface showed or saw cited, under this binding's scope. */
  async recordUsage(events: UsageReport[]): Promise<void> {
    if (events.length === 0) return;
    const scope = this.#ctx.binding.project ?? 'global';
    const at = this.now();
    await this.#ctx.store.appendUsage(events.map((e) => ({ at, ...e, scope })));
  }
  /** Whether a memory helped: a usage event that feeds its ranking weight at the next sleep. */
  async feedback(id: string, useful: boolean, actor: Actor): Promise<{ at: string }> {
    const lineage = await this.lineage(id);
    const at = this.now();
    await this.#ctx.store.appendUsage([
      {
        at,
        kind: 'feedback',
        ids: [id],
        actor: actor.kind,
        value: useful ? 1 : -1,
        scope: lineage[0]!.scope,
      },
    ]);
    return { at };
  }
  /**
   * Where a memory came from: its provenance in the session archive (this store's own unless
   * another is given), and its journal.
   */
  async trace(id: string, sessions?: SessionStore | null) {
    const { trace } = await import('./trace.js');
    return trace(this.#ctx, id, sessions ?? this.#ctx.store.sessions);
  }
  /** Who reads through this engine (its binding's reader; absent: every project). */
  get #reader(): Reader {
    return this.#ctx.binding.reader ?? EVERY_PROJECT;
  }
  /** Whether this engine's reader may see a maintenance report that opens with `head`. */
  mayReadReport(head: string): boolean {
    return mayReadReport(this.#reader, head);
  }
  /** A maintenance report as this engine's reader is served it: scopes checked, withheld lines cut. */
  async serveReport(name: string, text: string): Promise<string> {
    return serveReport(this.#ctx, this.#reader, name, text);
  }
  /**
   * The session archive of this engine's store (files, or the tenant's rows): the hooks archive
   * transcript increments and keep their session state in it, the distiller reads it.
   */
  archive(): SessionStore {
    return this.#ctx.store.sessions;
  }
  /** The SessionStart block (latest handoff first, then the rest by weight). */
  async injectSessionStart(opts: InjectOptions) {
    const { sessionStartBlock } = await import('./inject.js');
    return sessionStartBlock(this.#ctx, opts);
  }
  /** The block for one file an agent is about to touch. */
  async injectFile(filePath: string, opts: InjectOptions) {
    const { fileBlock } = await import('./inject.js');
    return fileBlock(this.#ctx, filePath, opts);
  }
  /** The block recalled for one prompt (the best few recall results that may be injected). */
  async injectPrompt(prompt: string, opts: import('./inject.js').PromptInjectOptions) {
    const { promptBlock } = await import('./inject.js');
    return promptBlock(this.#ctx, prompt, opts);
  }
  /** Whether decisions ask for the review passphrase. */
  async passphraseRequired(): Promise<boolean> {
    const { passphraseRequired } = await import('./passphrase.js');
    return passphraseRequired(this.#ctx.store);
  }
  /** Whether a review passphrase is set (refuses when the record is inconsistent). */
  async hasPassphrase(): Promise<boolean> {
    const { currentPassphrase } = await import('./passphrase.js');
    return (await currentPassphrase(this.#ctx.store)) !== null;
  }
  /** Refuses unless `given` is the review passphrase (passes when none is set). */
  async checkPassphrase(given: string | undefined): Promise<void> {
    const { checkPassphrase } = await import('./passphrase.js');
    return checkPassphrase(this.#ctx.store, given);
  }
  /** Whether `given` is the passphrase a journal repair needs (true when none is recorded). */
  async repairPassphraseMatches(ask: () => Promise<string>): Promise<boolean> {
    const { repairPassphrase, passphraseMatches } = await import('./passphrase.js');
    const pp = await repairPassphrase(this.#ctx.store);
    return !pp || passphraseMatches(await ask(), pp);
  }
  /** Sets the review passphrase (stored as a salted scrypt hash, through the write path). */
  async setPassphrase(passphrase: string, actor: Actor) {
    const { hashPassphrase } = await import('./passphrase.js');
    return this.apply([{ op: 'set_passphrase', ...hashPassphrase(passphrase) }], actor);
  }
  /** A sleep result in plain words. */
  async describeSleep(r: import('./sleep.js').SleepResult): Promise<string> {
    const { sleepReport } = await import('./sleep.js');
    return sleepReport(r);
  }
  /** Sleep: consolidation, decay, weights from usage, review of what is due. */
  async sleep(opts: SleepOptions = {}) {
    const { sleep } = await import('./sleep.js');
    return sleep(this.#ctx, opts);
  }
  /** The consistency check of this store; read-only. */
  async fsck(opts: FsckOptions = {}) {
    const { fsck } = await import('./fsck.js');
    return fsck(this.#ctx, opts);
  }
  /** Applies the fixes of the chosen fsck issues, each checkpointed in the journal. */
  async fsckFix(ids: string[], opts: FsckOptions & { afterFix?: (n: number) => void } = {}) {
    const { fsckFix } = await import('./fsck.js');
    return fsckFix(this.#ctx, ids, opts);
  }
  /** Re-reads every bound source of this binding and journals the verdicts that moved. */
  async checkSources(actor: Actor) {
    const { checkSources } = await import('./drift.js');
    return checkSources(this.#ctx, actor);
  }
  /** Distils one archived session into proposals and memories through the write path. */
  async distill(sessions: SessionStore | null, executor: Executor, opts: DistillOptions) {
    const { distillSession } = await import('./distill.js');
    return distillSession(this.#ctx, sessions ?? this.#ctx.store.sessions, executor, opts);
  }

  /**
   * A person erases the text of a memory's revisions (all, or `rev`) from every place the store
   * keeps it, keeping its skeleton and a journal that verifies; refused on an agent surface.
   */
  async purge(input: import('./purge.js').PurgeInput, actor: Actor) {
    const { purge } = await import('./purge.js');
    return purge(this.#ctx, input, actor);
  }
  /** What is left of a purged memory's text anywhere in the store (a person's check). */
  async verifyPurge(id: string) {
    const { verifyPurge } = await import('./purge.js');
    return verifyPurge(this.#ctx, id);
  }
  /** Every place the store keeps a string (a person's search before a purge). */
  async findValue(text: string) {
    const { findValue } = await import('./purge.js');
    return findValue(this.#ctx, text);
  }
  /** The distiller's use of its caps: executor runs in the last hour and today's spend by host. */
  async distillUsage() {
    const { distillUsage } = await import('./distill.js');
    return distillUsage(this.#ctx, this.#ctx.store.sessions);
  }

  /** The write path: ops as ops.ts defines them (parsed again here, at the engine's boundary). */
  async apply(ops: OpInput[], actor: Actor) {
    const { apply } = await import('./apply.js');
    const out = await apply(this.#ctx, ops, actor);
    await this.#noteName();
    // The outbound filter: a reader bound to projects is not shown the store-wide sequence.
    return out.map((r) => writeResultFor(this.#reader, r));
  }
  async applyEach(ops: OpInput[], actor: Actor) {
    const { applyEach } = await import('./apply.js');
    const out = await applyEach(this.#ctx, ops, actor);
    if (out.some((s) => s.ok)) await this.#noteName();
    return out;
  }
  #named = false;
  /** After a write: the project's readable name is recorded once per engine (project-names.ts). */
  async #noteName(): Promise<void> {
    if (this.#named || !this.#ctx.binding.project) return;
    this.#named = true;
    const { noteProjectName } = await import('./project-names.js');
    await noteProjectName(this.#ctx);
  }
  async recall(query: string, opts: RecallOptions = {}) {
    const { recall } = await import('./recall.js');
    return recall(this.#ctx, query, opts);
  }
  /**
   * Indexes the bound project's tracked documents into the knowledge index (a cache: only files
   * whose hash moved are re-chunked; engine/knowledge.ts).
   */
  async refreshKnowledge(opts: import('./knowledge.js').KnowledgeOptions = {}) {
    const { refreshKnowledge } = await import('./knowledge.js');
    return refreshKnowledge(this.#ctx, opts);
  }
  /** What the bound project's knowledge index holds. */
  async knowledgeStatus() {
    const { knowledgeStatus } = await import('./knowledge.js');
    return knowledgeStatus(this.#ctx);
  }
  /** Whether the bound project has a knowledge index (someone refreshed it once). */
  async knowledgeIndexed(): Promise<boolean> {
    const scope = this.#ctx.binding.project;
    if (!scope) return false;
    return (await (await this.#ctx.store.knowledge()).files(scope)).length > 0;
  }
  /** Drops the bound project's knowledge index (the repository stays the truth). */
  async clearKnowledge() {
    const { clearKnowledge } = await import('./knowledge.js');
    return clearKnowledge(this.#ctx);
  }
  async read(id: string, level: ReadLevel = 'full') {
    const { read } = await import('./read.js');
    return read(this.#ctx, id, level);
  }
  /** One page of a memory's artifact (the first, or `range` A-B / A-), as JSON surfaces send it. */
  async readArtifact(id: string, range?: string) {
    const { readArtifactPage, pageJson } = await import('./artifacts.js');
    return pageJson(await readArtifactPage(this.#ctx, id, range));
  }
  /** The same page with its raw bytes (the CLI writes them out as they are). */
  async artifactPage(id: string, range?: string) {
    const { readArtifactPage } = await import('./artifacts.js');
    return readArtifactPage(this.#ctx, id, range);
  }
  /** The largest artifact a remember may carry here, in bytes. */
  get artifactCap(): number {
    return this.#ctx.artifactMaxBytes ?? ARTIFACT_DEFAULT_MAX_BYTES;
  }
  /** A person removes an artifact's bytes (journaled first); refused on an agent surface. */
  async purgeArtifact(hash: string, reason: string, actor: Actor) {
    const { purgeArtifact } = await import('./artifacts.js');
    return purgeArtifact(this.#ctx, hash, reason, actor);
  }
  async history(id: string) {
    const { history } = await import('./read.js');
    return history(this.#ctx, id);
  }
  /** Journal entries for this scope (and global); refusals without a target included. */
  async log(q: JournalQuery = {}) {
    const scopes = new Set(this.scopes);
    const entries = await this.#ctx.store.journal({ ...q, limit: undefined });
    // An entry without a target shows only where its scope can be read; only the store's own
    // records (the passphrase, a journal repair) belong to every reader.
    const visible = entries.filter((e) => {
      if (e.target) return scopes.has(e.target.scope);
      const d = (e.data ?? {}) as { scope?: unknown; scopes?: unknown };
      if (typeof d.scope === 'string') return scopes.has(d.scope);
      if (Array.isArray(d.scopes)) return d.scopes.every((s) => scopes.has(String(s)));
      return e.op === 'set_passphrase' || e.op === 'journal_repair';
    });
    return q.limit !== undefined ? visible.slice(0, q.limit) : visible;
  }
  verifyJournal() {
    return this.#ctx.store.verifyJournal();
  }
  /** What `mneme journal repair` would acknowledge and re-anchor (read-only). */
  journalDamage() {
    return this.#ctx.store.diagnoseJournal();
  }
  /**
   * A person re-anchors a journal whose chain does not verify: the store appends a
   * `journal_repair` entry (the reason, each acknowledged break, what was lost) and re-records an
   * anchored passphrase the journal lost. Only a person on a human surface may.
   */
  async repairJournal(reason: string, actor: Actor) {
    if (actor.kind !== 'human' || this.#ctx.surface !== 'human')
      throw new MnemeError(
        'refused',
        'repairing the journal is a decision only a person can make, on a human surface',
      );
    if (reason.trim() === '')
      throw new MnemeError('invalid', 'a repair needs a reason (it is recorded in the journal)');
    return this.#ctx.store.repairJournal({
      at: this.#ctx.clock().toISOString(),
      actor,
      reason: reason.trim().slice(0, 2000),
    });
  }
  /**
   * Rebuilds the index from the files, then records each hand-edited memory file as a new
   * revision (actor external, trust untrusted, review pending) through the write path — so a
   * hand edit is gated like any other write (a rejected value is refused) and nothing is lost.
   */
  async rebuild(onProgress?: (done: number, total: number) => void) {
    const report = await this.#ctx.store.rebuild(onProgress);
    // With the vector arm on, its cache is checked against the rebuilt rows and completed
    // (vectors of unchanged texts are reused; a failing model is reported, not fatal).
    const vectors = this.#ctx.embedder
      ? await indexVectors(this.#ctx, this.#ctx.embedder, { prune: true })
      : undefined;
    const edits = [];
    for (const h of report.handEdits) {
      if (!h.id) {
        edits.push({
          path: h.path,
          id: null,
          ok: false,
          message: 'no memory id in the file; left as is',
        });
        continue;
      }
      const [s] = await this.applyEach(
        [{ op: 'external_edit', id: h.id, text: h.text, path: h.path }],
        { kind: 'system', surface: 'rebuild' },
      );
      edits.push(
        s!.ok
          ? { path: h.path, id: h.id, ok: true, rev: s!.result.rev, proposal: s!.result.proposal }
          : { path: h.path, id: h.id, ok: false, message: s!.error.message },
      );
    }
    return { ...report, handEdits: edits, ...(vectors ? { vectors } : {}) };
  }
  /** Embeds every revision of this scope that lacks a vector (the vector arm must be on). */
  indexVectors(
    opts: { prune?: boolean; onProgress?: (done: number, total: number) => void } = {},
  ): Promise<FillReport> {
    if (!this.#ctx.embedder)
      throw new MnemeError('invalid', 'the vector arm is off', {
        hint: 'set MNEME_EMBEDDER=hash|openai|ollama|transformers (or pass --embedder KIND)',
      });
    return indexVectors(this.#ctx, this.#ctx.embedder, opts);
  }
  async exportBundle() {
    const { exportBundle } = await import('./bundle.js');
    return exportBundle(this.#ctx, {
      // A purge tombstone's hashes are keyed to this store's secret: no use elsewhere.
      tombstones: (await this.tombstones()).filter((t) => t.kind === 'value'),
      proposals: await this.proposals({ state: 'pending' }),
    });
  }
  async importBundle(
    text: string,
    name: string,
    actor: Actor,
    opts: import('./bundle.js').ImportOptions = {},
  ) {
    const { importBundle } = await import('./bundle.js');
    return importBundle(this.#ctx, text, name, actor, opts);
  }
  /** A check for values rejected in another scope this binding reads (withheld on every read). */
  async rejectedHere() {
    const { rejectedHere } = await import('./rejected-here.js');
    return rejectedHere(this.#ctx);
  }
  /** What accepting and rejecting a pending proposal would each do, in plain words, now. */
  async reviewPlan(id: string) {
    const [p] = await this.proposals({ id });
    if (!p)
      throw new MnemeError('not_found', `no proposal ${id} in this project or global`, {
        hint: 'list them with `mneme proposals`',
      });
    const { reviewPlan } = await import('./proposal-plan.js');
    return reviewPlan(this.#ctx, p);
  }
  proposals(q: { state?: 'pending' | 'accepted' | 'rejected'; id?: string } = {}) {
    return this.#ctx.store.proposals({ ...q, scopes: this.scopes });
  }
  tombstones() {
    return this.#ctx.store.tombstones(this.scopes);
  }
  /**
   * What this binding can know: counts over its own scopes only, never another project's (no
   * ids, no counts, no scope names). The journal head counts every project's mutations, so it
   * is shown on a human surface only.
   */
  async status() {
    const { journalHead, ...s } = await this.#ctx.store.status(this.scopes);
    return {
      ...s,
      ...(this.#ctx.surface === 'human' ? { journalHead } : {}),
      project: this.#ctx.binding.project,
      identity: this.#ctx.binding.identity,
      scopes: this.scopes,
      vector: await vectorStatus(this.#ctx, this.#ctx.embedder),
    };
  }
  close() {
    return this.#ctx.store.close();
  }
}
