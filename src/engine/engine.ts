// The engine's public face: one object per bound scope and surface, holding the context every
// read and write path takes. Surfaces construct it; nothing below it knows which surface called.
// Each path is loaded on first use, so a process that only recalls or injects (a hook, `mneme
// recall`) never loads the write path's validation, gates and screening.
import { MnemeError } from '../core/errors.js';
import type { Actor } from '../core/types.js';
import type { JournalQuery } from '../store/port.js';
import { readableScopes, type EngineContext } from './context.js';
import type { ReadLevel } from './read.js';
import type { RecallOptions } from './recall.js';
import { indexVectors, vectorStatus, type FillReport } from './vector.js';

export class Engine {
  constructor(readonly ctx: EngineContext) {}

  get scopes(): string[] {
    return readableScopes(this.ctx.binding);
  }

  async apply(ops: unknown[], actor: Actor) {
    const { apply } = await import('./apply.js');
    return apply(this.ctx, ops, actor);
  }
  async applyEach(ops: unknown[], actor: Actor) {
    const { applyEach } = await import('./apply.js');
    return applyEach(this.ctx, ops, actor);
  }
  async recall(query: string, opts: RecallOptions = {}) {
    const { recall } = await import('./recall.js');
    return recall(this.ctx, query, opts);
  }
  async read(id: string, level: ReadLevel = 'full') {
    const { read } = await import('./read.js');
    return read(this.ctx, id, level);
  }
  async history(id: string) {
    const { history } = await import('./read.js');
    return history(this.ctx, id);
  }
  /** Journal entries for this scope (and global); refusals without a target included. */
  async log(q: JournalQuery = {}) {
    const scopes = new Set(this.scopes);
    const entries = await this.ctx.store.journal({ ...q, limit: undefined });
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
    return this.ctx.store.verifyJournal();
  }
  /** What `mneme journal repair` would acknowledge and re-anchor (read-only). */
  journalDamage() {
    return this.ctx.store.diagnoseJournal();
  }
  /**
   * A person re-anchors a journal whose chain does not verify: the store appends a
   * `journal_repair` entry (the reason, each acknowledged break, what was lost) and re-records an
   * anchored passphrase the journal lost. Only a person on a human surface may.
   */
  async repairJournal(reason: string, actor: Actor) {
    if (actor.kind !== 'human' || this.ctx.surface !== 'human')
      throw new MnemeError(
        'refused',
        'repairing the journal is a decision only a person can make, on a human surface',
      );
    if (reason.trim() === '')
      throw new MnemeError('invalid', 'a repair needs a reason (it is recorded in the journal)');
    return this.ctx.store.repairJournal({
      at: this.ctx.clock().toISOString(),
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
    const report = await this.ctx.store.rebuild(onProgress);
    // With the vector arm on, its cache is checked against the rebuilt rows and completed
    // (vectors of unchanged texts are reused; a failing model is reported, not fatal).
    const vectors = this.ctx.embedder
      ? await indexVectors(this.ctx, this.ctx.embedder, { prune: true })
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
    if (!this.ctx.embedder)
      throw new MnemeError('invalid', 'the vector arm is off', {
        hint: 'set MNEME_EMBEDDER=hash|openai|ollama|transformers (or pass --embedder KIND)',
      });
    return indexVectors(this.ctx, this.ctx.embedder, opts);
  }
  async exportBundle() {
    const { exportBundle } = await import('./bundle.js');
    return exportBundle(this.ctx, {
      tombstones: await this.tombstones(),
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
    return importBundle(this.ctx, text, name, actor, opts);
  }
  /** A check for values rejected in another scope this binding reads (withheld on every read). */
  async rejectedHere() {
    const { rejectedHere } = await import('./rejected-here.js');
    return rejectedHere(this.ctx);
  }
  /** What accepting and rejecting a pending proposal would each do, in plain words, now. */
  async reviewPlan(id: string) {
    const [p] = await this.proposals({ id });
    if (!p)
      throw new MnemeError('not_found', `no proposal ${id} in this project or global`, {
        hint: 'list them with `mneme proposals`',
      });
    const { reviewPlan } = await import('./proposal-plan.js');
    return reviewPlan(this.ctx, p);
  }
  proposals(q: { state?: 'pending' | 'accepted' | 'rejected'; id?: string } = {}) {
    return this.ctx.store.proposals({ ...q, scopes: this.scopes });
  }
  tombstones() {
    return this.ctx.store.tombstones(this.scopes);
  }
  /**
   * What this binding can know: counts over its own scopes only, never another project's (no
   * ids, no counts, no scope names). The journal head counts every project's mutations, so it
   * is shown on a human surface only.
   */
  async status() {
    const { journalHead, ...s } = await this.ctx.store.status(this.scopes);
    return {
      ...s,
      ...(this.ctx.surface === 'human' ? { journalHead } : {}),
      project: this.ctx.binding.project,
      identity: this.ctx.binding.identity,
      scopes: this.scopes,
      vector: await vectorStatus(this.ctx, this.ctx.embedder),
    };
  }
  close() {
    return this.ctx.store.close();
  }
}
