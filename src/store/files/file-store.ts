// The embedded store: Markdown revision files and JSONL logs are the truth, SQLite is a cache.
// A commit writes an intent, the revision files (temp + rename), then the journal line (the
// commit point), then the index rows. Opening the store finishes or rolls back whatever a crash
// left half done, and brings a lagging index up to the journal. A journal whose chain does not
// verify against its anchor (journal/HEAD) takes no write until a person repairs it; the index
// then follows the journal as it stands, and a lineage with a revision file the journal does not
// record is served nowhere (journal-files.ts says how the check stays cheap).
import fs from 'node:fs';
import path from 'node:path';
import { MnemeError } from '../../core/errors.js';
import { sha256 } from '../../core/hash.js';
import { samePassphrase, type JournalEntry } from '../../core/journal.js';
import type { Tombstone } from '../../core/normalize.js';
import type { Proposal } from '../../core/proposal.js';
import { deriveLineage } from '../../core/lineage.js';
import { computeWeights } from '../../core/weight.js';
import { toRevision } from '../../core/revision.js';
import { parseRevision, serializeRevision } from '../../core/markdown.js';
import type { QueryTerm } from '../../core/text.js';
import type { Revision, RevisionView } from '../../core/types.js';
import type {
  CommitRequest,
  FreshnessRecord,
  IntegrityFinding,
  JournalAnchor,
  JournalDamage,
  RepairReport,
  RepairRequest,
  InjectQuery,
  JournalQuery,
  ProposalQuery,
  RebuildReport,
  SearchHit,
  SearchRequest,
  Store,
  StoreStatus,
  UsageEvent,
  VectorStore,
  VerifyReport,
} from '../port.js';
import { appendDurable, readIfExists, writeFileAtomic } from './atomic.js';
import { IndexDb, isBusy } from './index-db.js';
import { JournalFiles } from './journal-files.js';
import { Layout } from './layout.js';
import { withFileLock } from './lock.js';
import { VectorDb } from './vector-db.js';
import { chainRefused, damageOf, repairBody, restoredPassphraseBody } from '../journal-guard.js';

export interface FileStoreOptions {
  /** fsync revision files and journal lines (default true). */
  durable?: boolean;
  lockTimeoutMs?: number;
  /** Test hook: called at named points inside a commit and per lineage in a rebuild (fault injection). */
  faultPoint?: (name: string) => void;
  /**
   * A short-lived agent process (a hook) must not hold the agent up rebuilding the whole index:
   * when open would need a full rebuild it refuses with `locked` (details.rebuild = 'needed').
   */
  deferFullRebuild?: boolean;
  /** Test hook: roll the journal over to a new segment past this many bytes (default 32 MiB). */
  segmentBytes?: number;
}

interface Intent {
  seq: number;
  /** The revision being written, if any. */
  id: string | null;
  rev: number | null;
  /** Current-file path before the write (null for a new lineage). */
  before: string | null;
  /** Effects applied after the journal line; redone on recovery if the line committed. */
  tombstone?: CommitRequest['tombstone'];
  proposal?: Proposal;
}

export class FileStore implements Store {
  readonly backend = 'files';
  readonly layout: Layout;
  private index: IndexDb;
  private readonly journalFiles: JournalFiles;
  private readonly durable: boolean;
  private readonly lockTimeoutMs: number;
  private readonly fault: (name: string) => void;
  private readonly deferFullRebuild: boolean;
  private locked = false;
  /**
   * A commit reached its journal line but could not update the index (or write its effects):
   * the write stands, and the index is caught up from the journal before the next read here.
   */
  private behind = false;

  private constructor(root: string, opts: FileStoreOptions) {
    this.layout = new Layout(path.resolve(root));
    this.durable = opts.durable ?? true;
    this.lockTimeoutMs = opts.lockTimeoutMs ?? 10_000;
    this.fault = opts.faultPoint ?? (() => {});
    this.deferFullRebuild = opts.deferFullRebuild ?? false;
    for (const d of [
      this.layout.memoriesDir,
      this.layout.historyDir,
      this.layout.journalDir,
      this.layout.usageDir,
      this.layout.stateDir,
    ]) {
      fs.mkdirSync(d, { recursive: true });
    }
    this.journalFiles = new JournalFiles(
      this.layout.journalDir,
      this.layout.journalHeadFile,
      this.layout.journalBrokenFile,
      this.durable,
      opts.segmentBytes,
    );
    this.index = this.openIndex();
  }

  static async open(root: string, opts: FileStoreOptions = {}): Promise<FileStore> {
    const store = new FileStore(root, opts);
    await store.recoverIfNeeded();
    return store;
  }

  private openIndex(): IndexDb {
    try {
      const db = new IndexDb(this.layout.indexFile, this.lockTimeoutMs);
      db.getMeta('schema');
      return db;
    } catch (e) {
      // A busy index is in use by another process, not damaged: moving it aside would pull it
      // out from under that process. The open fails (nothing was written) with `locked`.
      if (e instanceof MnemeError || isBusy(e))
        throw new MnemeError('locked', 'the index is busy: another process held it too long', {
          hint: 'retry shortly',
        });
      // A corrupt or foreign index file is only a cache: move it aside and start empty.
      const aside = `${this.layout.indexFile}.corrupt-${Date.now()}`;
      for (const suffix of ['', '-wal', '-shm']) {
        if (fs.existsSync(this.layout.indexFile + suffix))
          fs.renameSync(this.layout.indexFile + suffix, aside + suffix);
      }
      return new IndexDb(this.layout.indexFile, this.lockTimeoutMs);
    }
  }

  // ---- locking and recovery -------------------------------------------------------------

  async withWriteLock<T>(fn: () => Promise<T>): Promise<T> {
    if (this.locked) return fn();
    return withFileLock(this.layout.lockFile, this.lockTimeoutMs, async () => {
      this.locked = true;
      try {
        this.recoverLocked();
        return await fn();
      } finally {
        this.locked = false;
      }
    });
  }

  private needsRecovery(): boolean {
    if (fs.existsSync(this.layout.intentFile)) return true;
    if (!this.index.schemaOk) return true;
    // A torn last line must go before the next append, or that append would be glued to it.
    if (this.journalFiles.hasTornTail()) return true;
    // The journal changed since the last commit anchored it (a crash, a restore, tampering).
    if (this.journalFiles.fast() === null) return true;
    return this.index.journalSeq !== this.journalFiles.head().seq;
  }

  /** Whether the store holds anything a journal should account for (a missing one fails closed). */
  private readonly hasData = (): boolean =>
    this.index.journalSeq > 0 ||
    fs.existsSync(this.layout.tombstonesFile) ||
    dirHasEntry(this.layout.historyDir) ||
    dirHasEntry(this.layout.proposalsDir);

  private async recoverIfNeeded(): Promise<void> {
    if (!this.needsRecovery()) return;
    if (this.deferFullRebuild && this.needsFullRebuild()) {
      this.index.close();
      throw new MnemeError('locked', 'the index must be rebuilt from the files first', {
        hint: 'run `mneme rebuild` (a hook starts it in the background and injects again once it is done)',
        details: { rebuild: 'needed' },
      });
    }
    await this.withWriteLock(async () => {});
  }

  /** An index of an older schema, or one ahead of the journal, is rebuilt whole (when not empty). */
  private needsFullRebuild(): boolean {
    const head = this.journalFiles.head().seq;
    return head > 0 && (!this.index.schemaOk || this.index.journalSeq > head);
  }

  /** Runs under the lock before every write: finishes or undoes a crashed commit. */
  private recoverLocked(): void {
    if (!this.needsRecovery()) return;
    this.journalFiles.repairTornTail();
    const health = this.journalFiles.check(this.hasData);
    if (!health.ok) {
      // Nothing is healed or finished on a chain that does not verify (an intent is left for
      // after the repair), but the index follows the journal as it stands, so a revision whose
      // journal entry was cut is not served.
      if (
        health.detected ||
        !this.index.schemaOk ||
        this.index.journalSeq !== this.journalFiles.head().seq
      )
        this.rebuildIndex();
      return;
    }
    // A journal that verifies again (restored from a backup) is indexed again as it is.
    if (health.cleared) this.rebuildIndex();
    const head = this.journalFiles.head();
    const intentText = readIfExists(this.layout.intentFile);
    if (intentText !== null) {
      let intent: Intent | null = null;
      try {
        intent = JSON.parse(intentText) as Intent;
      } catch {
        intent = null;
      }
      if (intent) this.resolveIntent(intent, head.seq);
      fs.rmSync(this.layout.intentFile, { force: true });
    }
    if (!this.index.schemaOk) {
      this.rebuildIndex();
      return;
    }
    if (this.index.journalSeq < head.seq) {
      this.catchUpIndex(this.index.journalSeq);
    } else if (this.index.journalSeq > head.seq) {
      this.rebuildIndex();
    }
  }

  private resolveIntent(intent: Intent, headSeq: number): void {
    // A write killed inside writeFileAtomic leaves its temp file beside the target.
    if (intent.id !== null) removeStrayTemps(this.layout.lineageDir(intent.id));
    if (intent.before !== null) removeStrayTemps(path.dirname(intent.before));
    removeStrayTemps(this.layout.stateDir);
    let committed = false;
    if (headSeq >= intent.seq) {
      const e = this.journalFiles.all().find((x) => x.seq === intent.seq);
      committed =
        e !== undefined &&
        (intent.id === null || (e.target?.id === intent.id && e.after?.rev === intent.rev));
    }
    if (committed) {
      // Roll forward: the journal says it happened, so make the files agree.
      if (intent.id !== null) {
        const lineage = this.readLineageFiles(intent.id);
        if (lineage) this.writeCurrentFile(lineage[lineage.length - 1]!, intent.before);
      }
      this.applyAfterEffects(intent.tombstone, intent.proposal);
      return;
    }
    // Roll back: no journal entry, so the write never happened. Tombstone and proposal effects
    // are only written after the journal line, so there is nothing of theirs to undo.
    if (intent.id === null || intent.rev === null) return;
    fs.rmSync(this.layout.historyFile(intent.id, intent.rev), { force: true });
    const lineage = this.readLineageFiles(intent.id);
    const prev = lineage?.[lineage.length - 1];
    if (prev) {
      this.writeCurrentFile(prev, null);
    } else {
      // A brand-new lineage that never committed: remove its current file if it was written.
      for (const f of this.findCurrentFilesFor(intent.id)) fs.rmSync(f, { force: true });
      fs.rmSync(this.layout.lineageDir(intent.id), { recursive: true, force: true });
    }
  }

  private findCurrentFilesFor(id: string): string[] {
    const out: string[] = [];
    walk(this.layout.memoriesDir, (f) => {
      if (f.endsWith('.md') && (readIfExists(f) ?? '').includes(`\nid: ${id}\n`)) out.push(f);
    });
    return out;
  }

  private catchUpIndex(afterSeq: number): void {
    const all = this.journalFiles.all();
    const journaled = journaledRevisions(all);
    const entries = all.filter((e) => e.seq > afterSeq);
    const ids = new Set<string>();
    for (const e of entries) if (e.target && e.after) ids.add(e.target.id);
    this.index.transaction(() => {
      for (const id of ids) {
        const lineage = this.readLineageFiles(id);
        if (lineage && unjournaledRev(lineage, journaled) === null)
          this.index.replaceLineage(deriveLineage(lineage));
        else this.index.removeLineage(id);
      }
      for (const e of entries) this.index.applyEntry(e);
      this.applyWeightPasses(entries);
      this.index.setMeta('journal_seq', String(this.journalFiles.head().seq));
    });
  }

  /**
   * Weights are a cache of the usage log: for each scope, the last `sleep_pass` entry among
   * `entries` names the watermark its weights were computed at; recompute them the same way.
   */
  private applyWeightPasses(entries: readonly JournalEntry[]): void {
    const last = new Map<string, string>();
    for (const e of entries) {
      if (e.op !== 'sleep_pass') continue;
      const d = e.data as { weights_at?: string; scopes?: string[] } | undefined;
      if (!d?.weights_at || !Array.isArray(d.scopes)) continue;
      for (const sc of d.scopes) last.set(sc, d.weights_at);
    }
    if (last.size === 0) return;
    const usage = this.readUsageSync();
    for (const [scope, at] of last) {
      const subjects = this.index.current([scope], false);
      this.index.setWeights([scope], computeWeights(usage, subjects, at));
    }
  }

  private readUsageSync(): UsageEvent[] {
    const out: UsageEvent[] = [];
    for (const f of safeReaddir(this.layout.usageDir).filter((n) => n.endsWith('.jsonl'))) {
      for (const line of (readIfExists(path.join(this.layout.usageDir, f)) ?? '').split('\n')) {
        if (line.trim() === '') continue;
        try {
          out.push(JSON.parse(line) as UsageEvent);
        } catch {
          /* a torn line */
        }
      }
    }
    return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  }

  // ---- the write path's storage half ------------------------------------------------------

  async commit(req: CommitRequest): Promise<JournalEntry> {
    if (!this.locked) throw new MnemeError('internal', 'commit called without the store lock');
    // The tail against its anchor, before anything is written: a few stat calls and one read.
    const health = this.journalFiles.check(this.hasData);
    if (health.ok ? health.cleared : health.detected) this.rebuildIndex();
    if (!health.ok) throw chainRefused(health.firstBad);
    const head = this.journalFiles.head();
    const r = req.revision;
    const hasEffects = r !== null || req.tombstone !== undefined || req.proposal !== undefined;
    let views: RevisionView[] | null = null;
    let beforePath: string | null = null;
    let before: RevisionView[] | null = null;
    if (r) {
      before = this.index.lineage(r.id);
      const prevCurrent = before?.[before.length - 1];
      beforePath = prevCurrent
        ? this.layout.currentFile(prevCurrent.scope, prevCurrent.type, prevCurrent.slug)
        : null;
    }
    if (hasEffects) {
      const intent: Intent = {
        seq: head.seq + 1,
        id: r?.id ?? null,
        rev: r?.rev ?? null,
        before: beforePath,
        ...(req.tombstone ? { tombstone: req.tombstone } : {}),
        ...(req.proposal ? { proposal: req.proposal } : {}),
      };
      writeFileAtomic(this.layout.intentFile, JSON.stringify(intent), this.durable);
      this.fault('after-intent');
    }
    if (r) {
      writeFileAtomic(this.layout.historyFile(r.id, r.rev), serializeRevision(r), this.durable);
      this.fault('after-history');
      this.writeCurrentFile(r, beforePath);
      this.fault('after-current');
      views = deriveLineage([...(before ?? []), r]);
    }
    const body = {
      ...req.body,
      ...(req.tombstone || req.proposal
        ? {
            data: {
              ...(req.body.data ?? {}),
              ...(req.tombstone ? { tombstone: req.tombstone } : {}),
              ...(req.proposal ? { proposal: req.proposal } : {}),
            },
          }
        : {}),
    };
    const entry = this.journalFiles.append(body, health.anchor);
    this.fault('after-journal');
    // The journal line is the commit point (invariant 13): from here on the write is reported as
    // done whatever happens, and what is left undone is the store's to finish. Effects that fail
    // keep the intent file, so recovery redoes them; an index that fails stays behind the
    // journal (its journal_seq is not advanced), so recovery or the next read catches it up.
    let finished = true;
    try {
      this.applyAfterEffects(req.tombstone, req.proposal);
    } catch {
      finished = false;
    }
    try {
      this.index.transaction(() => {
        if (views) this.index.replaceLineage(views);
        this.index.applyEntry(entry);
        this.applyWeightPasses([entry]);
        this.index.setMeta('journal_seq', String(entry.seq));
      });
    } catch {
      this.behind = true;
    }
    this.fault('after-index');
    if (hasEffects && finished) fs.rmSync(this.layout.intentFile, { force: true });
    if (!finished) this.behind = true;
    return entry;
  }

  /**
   * Before a read: if a commit in this process left the index behind its journal, finish that
   * commit now (under the lock, as recovery does). If that cannot happen yet, the read is served
   * from the index as it stands and the next read tries again.
   */
  private async catchUp(): Promise<void> {
    if (!this.behind) return;
    try {
      if (this.locked) this.recoverLocked();
      else await this.withWriteLock(async () => {});
      this.behind = false;
    } catch {
      /* still behind: tried again on the next read or write */
    }
  }

  /** Tombstone and proposal files, written after the journal line (idempotent on redo). */
  private applyAfterEffects(
    tombstone: CommitRequest['tombstone'],
    proposal: Proposal | undefined,
  ): void {
    if (tombstone) {
      const line =
        'arm' in tombstone
          ? { event: 'arm', ...tombstone.arm }
          : { event: 'lift', ...tombstone.lift };
      const text = JSON.stringify(line);
      const existing = readIfExists(this.layout.tombstonesFile) ?? '';
      if (!existing.split('\n').includes(text))
        appendDurable(this.layout.tombstonesFile, `${text}\n`, this.durable);
      this.tombstoneCache = null;
    }
    if (proposal) {
      writeFileAtomic(
        this.layout.proposalFile(proposal.id),
        `${JSON.stringify(proposal, null, 2)}\n`,
        this.durable,
      );
    }
  }

  /** memories/ holds the current revision of every live memory, and nothing else. */
  private writeCurrentFile(r: Revision, previousPath: string | null): void {
    const target = this.layout.currentFile(r.scope, r.type, r.slug);
    if (previousPath && previousPath !== target) fs.rmSync(previousPath, { force: true });
    if (r.status === 'active') writeFileAtomic(target, serializeRevision(r), false);
    else fs.rmSync(target, { force: true });
  }

  private readLineageFiles(id: string): Revision[] | null {
    return this.readLineageTexts(id)?.revisions ?? null;
  }

  /** A lineage's revisions, and the exact text of its last revision file. */
  private readLineageTexts(id: string): { revisions: Revision[]; lastText: string } | null {
    const dir = this.layout.lineageDir(id);
    let names: string[];
    try {
      names = fs
        .readdirSync(dir)
        .filter((n) => /^\d{6}\.md$/.test(n))
        .sort();
    } catch {
      return null;
    }
    if (names.length === 0) return null;
    let lastText = '';
    const revisions = names.map((n) => {
      lastText = fs.readFileSync(path.join(dir, n), 'utf8');
      return parseRevision(lastText, `history/${id}/${n}`);
    });
    return { revisions, lastText };
  }

  // ---- reads ------------------------------------------------------------------------------

  async getLineage(id: string): Promise<RevisionView[] | null> {
    await this.catchUp();
    return this.index.lineage(id);
  }

  async findLiveBySlug(scope: string, type: string, slug: string): Promise<RevisionView | null> {
    await this.catchUp();
    return this.index.live(scope, type, slug);
  }

  async findIdempotent(key: string): Promise<JournalEntry | null> {
    await this.catchUp();
    return this.index.getIdempotent(key);
  }

  async search(req: SearchRequest): Promise<SearchHit[]> {
    await this.catchUp();
    return this.index.search(req.terms, req.eligibility, req.limit, req.want ?? req.limit);
  }

  async nearest(terms: QueryTerm[], scopes: string[], limit: number): Promise<SearchHit[]> {
    await this.catchUp();
    return this.index.nearest(terms, scopes, limit);
  }

  async listCurrent(
    scopes: string[],
    opts: { includeEnded?: boolean } = {},
  ): Promise<RevisionView[]> {
    await this.catchUp();
    return this.index.current(scopes, opts.includeEnded ?? false);
  }

  async journal(q: JournalQuery): Promise<JournalEntry[]> {
    let entries = this.journalFiles.all();
    if (q.afterSeq !== undefined) entries = entries.filter((e) => e.seq > q.afterSeq!);
    if (q.id) entries = entries.filter((e) => e.target?.id === q.id);
    if (q.actorKind) entries = entries.filter((e) => e.actor.kind === q.actorKind);
    if (q.op) entries = entries.filter((e) => e.op === q.op);
    if (q.reverse) entries.reverse();
    return q.limit !== undefined ? entries.slice(0, q.limit) : entries;
  }

  private tombstoneCache: { size: number; list: Tombstone[] } | null = null;

  async tombstones(scopes: string[]): Promise<Tombstone[]> {
    let size = 0;
    try {
      size = fs.statSync(this.layout.tombstonesFile).size;
    } catch {
      return [];
    }
    if (!this.tombstoneCache || this.tombstoneCache.size !== size) {
      const armed = new Map<string, Tombstone>();
      for (const line of (readIfExists(this.layout.tombstonesFile) ?? '').split('\n')) {
        if (line.trim() === '') continue;
        let ev: { event?: string } & Partial<Tombstone>;
        try {
          ev = JSON.parse(line);
        } catch {
          continue; // a torn last line from a crash: never committed
        }
        const k = `${ev.scope}\u0000${ev.key}`;
        if (ev.event === 'arm') {
          const { event: _e, ...t } = ev;
          armed.set(k, t as Tombstone);
        } else if (ev.event === 'lift') armed.delete(k);
      }
      this.tombstoneCache = { size, list: [...armed.values()] };
    }
    const want = new Set(scopes);
    return this.tombstoneCache.list.filter((t) => want.has(t.scope));
  }

  async proposals(q: ProposalQuery): Promise<Proposal[]> {
    const dir = this.layout.proposalsDir;
    const names = q.id ? [`${q.id}.json`] : safeReaddir(dir).filter((n) => n.endsWith('.json'));
    const out: Proposal[] = [];
    for (const n of names) {
      if (q.id && !/^prop_[0-9A-Z]{26}$/.test(q.id)) return [];
      const text = readIfExists(path.join(dir, n));
      if (text === null) continue;
      try {
        const p = JSON.parse(text) as Proposal;
        if (q.state && p.state !== q.state) continue;
        if (q.scopes && !q.scopes.includes(p.scope)) continue;
        out.push(p);
      } catch {
        /* reported by fsck */
      }
    }
    return out.sort((a, b) =>
      a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1,
    );
  }

  async usage(opts: { since?: string } = {}): Promise<UsageEvent[]> {
    const out: UsageEvent[] = [];
    for (const f of safeReaddir(this.layout.usageDir).filter((n) => n.endsWith('.jsonl'))) {
      for (const line of (readIfExists(path.join(this.layout.usageDir, f)) ?? '').split('\n')) {
        if (line.trim() === '') continue;
        try {
          const e = JSON.parse(line) as UsageEvent;
          if (!opts.since || e.at > opts.since) out.push(e);
        } catch {
          /* a torn line */
        }
      }
    }
    return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  }

  /**
   * The whole chain against its anchor. Read without the lock first (a writer may be mid-commit);
   * a break, or an earlier recorded break, is judged again under the lock, where a break is
   * recorded (every write then refuses) and a journal that verifies again lifts the record.
   */
  async verifyJournal(): Promise<VerifyReport> {
    const first = this.journalFiles.verify(this.hasData);
    if (first.ok && !this.journalFiles.hasBrokenMark()) return first;
    return this.withWriteLock(async () => {
      this.journalFiles.repairTornTail();
      const health = this.journalFiles.check(this.hasData, { full: true });
      if (health.ok ? health.cleared : health.detected) this.rebuildIndex();
      return this.journalFiles.verify(this.hasData);
    });
  }

  async anchor(): Promise<JournalAnchor> {
    const read = this.journalFiles.readAnchor();
    if (read.state === 'ok')
      return {
        present: true,
        head: { seq: read.anchor.seq, hash: read.anchor.hash },
        ...(read.legacy ? {} : { passphrase: read.anchor.pp }),
      };
    // No anchor yet on a store that has never committed anything is not a loss.
    return this.journalFiles.segments().length === 0 && !this.hasData()
      ? { present: true, head: { seq: 0, hash: '0'.repeat(64) }, passphrase: null }
      : { present: false };
  }

  async diagnoseJournal(): Promise<JournalDamage> {
    return this.damageNow();
  }

  private damageNow(): JournalDamage {
    const ev = this.journalFiles.evaluate(this.hasData);
    const anchor =
      ev.read.state === 'ok'
        ? {
            seq: ev.read.anchor.seq,
            hash: ev.read.anchor.hash,
            ...(ev.read.legacy ? {} : { passphrase: ev.read.anchor.pp }),
          }
        : null;
    const d = damageOf(ev.scan, anchor, ev.problem);
    // A recorded break nothing shows any more still needs a person's word to lift it.
    return d.ok && this.journalFiles.hasBrokenMark() ? { ...d, ok: false } : d;
  }

  async repairJournal(req: RepairRequest): Promise<RepairReport> {
    return this.withWriteLock(async () => {
      this.journalFiles.repairTornTail();
      const damage = this.damageNow();
      if (damage.ok) return { damage, entries: [] };
      // Finish or undo what a crash left while the chain was broken, against the journal as it
      // stands (before the repair entry takes the next seq an intent may name).
      const intentText = readIfExists(this.layout.intentFile);
      if (intentText !== null) {
        try {
          this.resolveIntent(JSON.parse(intentText) as Intent, this.journalFiles.head().seq);
        } catch {
          /* an unreadable intent: nothing to finish */
        }
        fs.rmSync(this.layout.intentFile, { force: true });
      }
      const anchorFor = (pp: typeof damage.journalPassphrase) => ({
        v: 2 as const,
        seq: 0,
        hash: '',
        pp,
        cp: null,
      });
      const entries: JournalEntry[] = [];
      entries.push(
        this.journalFiles.append(
          repairBody(damage, req, 'journal/HEAD'),
          anchorFor(damage.journalPassphrase),
        ),
      );
      if (damage.restorePassphrase)
        entries.push(
          this.journalFiles.append(
            restoredPassphraseBody(damage.restorePassphrase, req),
            anchorFor(damage.journalPassphrase),
          ),
        );
      const health = this.journalFiles.check(this.hasData, { full: true });
      if (!health.ok)
        throw new MnemeError('internal', `the repair did not verify: ${health.firstBad.problem}`);
      const pp = health.anchor.pp;
      if (damage.restorePassphrase && !samePassphrase(pp, damage.restorePassphrase))
        throw new MnemeError('internal', 'the repair did not re-record the review passphrase');
      this.rebuildIndex();
      return { damage, entries };
    });
  }

  async appendUsage(events: UsageEvent[]): Promise<void> {
    if (events.length === 0) return;
    const month = events[0]!.at.slice(0, 7);
    const file = path.join(this.layout.usageDir, `${month}.jsonl`);
    appendDurable(file, events.map((e) => JSON.stringify(e)).join('\n') + '\n', false);
  }

  async injectCandidates(q: InjectQuery): Promise<SearchHit[]> {
    await this.catchUp();
    return this.index.injectCandidates(q);
  }

  async weights(ids: string[]): Promise<Map<string, number>> {
    await this.catchUp();
    return this.index.weights(ids);
  }

  private vectorDb: Promise<VectorDb> | null = null;

  /** The vector arm's table in the index; sqlite-vec is loaded here, on first use only. */
  async vectors(): Promise<VectorStore> {
    this.vectorDb ??= VectorDb.open(this.index).catch((e: unknown) => {
      this.vectorDb = null;
      throw e;
    });
    return this.vectorDb;
  }

  /** Whether this process has opened the vector arm (tests: the arm off loads nothing). */
  get vectorArmLoaded(): boolean {
    return this.vectorDb !== null;
  }

  // ---- rebuild ----------------------------------------------------------------------------

  async rebuild(onProgress?: (done: number, total: number) => void): Promise<RebuildReport> {
    return this.withWriteLock(async () => this.rebuildIndex(onProgress));
  }

  private rebuildIndex(onProgress?: (done: number, total: number) => void): RebuildReport {
    const report: RebuildReport = {
      memories: 0,
      revisions: 0,
      journalEntries: 0,
      usageEvents: 0,
      problems: [],
      handEdits: [],
    };
    const ids = safeReaddir(this.layout.historyDir).filter((n) => n.startsWith('mem_'));
    const currentByPath = new Map<string, { last: Revision; text: string }>();
    const all = this.journalFiles.all();
    const journaled = journaledRevisions(all);
    const withheld = new Set<string>();
    this.index.transaction(() => {
      this.index.reset();
      ids.forEach((id, i) => {
        try {
          const read = this.readLineageTexts(id);
          const missing = read ? unjournaledRev(read.revisions, journaled) : null;
          if (read && missing !== null) {
            // Never committed, or its journal entry was cut: the whole lineage stays unserved
            // (serving the revisions before it could bring back a corrected or retracted value).
            withheld.add(id);
            report.problems.push(
              `history/${id}/${String(missing).padStart(6, '0')}.md has no journal entry: ${id} is withheld from every read (see \`mneme fsck\`)`,
            );
          } else if (read) {
            const lineage = read.revisions;
            this.fault('during-rebuild');
            this.index.replaceLineage(deriveLineage(lineage));
            report.memories++;
            report.revisions += lineage.length;
            const last = lineage[lineage.length - 1]!;
            if (last.status === 'active')
              currentByPath.set(this.layout.currentFile(last.scope, last.type, last.slug), {
                last,
                text: read.lastText,
              });
          }
        } catch (e) {
          report.problems.push((e as Error).message);
        }
        if (onProgress && (i % 500 === 0 || i === ids.length - 1)) onProgress(i + 1, ids.length);
      });
      for (const e of all) {
        report.journalEntries++;
        this.index.applyEntry(e);
      }
      this.applyWeightPasses(all);
      this.index.setMeta('journal_seq', String(this.journalFiles.head().seq));
    });
    // Hand edits: a file under memories/ that is not byte-identical to its recorded revision.
    walk(this.layout.memoriesDir, (f) => {
      if (!f.endsWith('.md')) return;
      const text = fs.readFileSync(f, 'utf8');
      const recorded = currentByPath.get(f);
      // The current file is a copy of its last history file; serialize only when they differ.
      if (recorded && (recorded.text === text || serializeRevision(recorded.last) === text)) return;
      const idMatch = /\nid: (mem_[0-9A-Z]{26})\n/.exec(text);
      if (!recorded && idMatch && withheld.has(idMatch[1]!)) return; // reported above
      report.handEdits.push({
        path: path.relative(this.layout.root, f),
        id: idMatch?.[1] ?? recorded?.last.id ?? null,
        text,
      });
    });
    for (const f of safeReaddir(this.layout.usageDir)) {
      const text = readIfExists(path.join(this.layout.usageDir, f)) ?? '';
      report.usageEvents += text.split('\n').filter(Boolean).length;
    }
    return report;
  }

  async freshness(ids: string[]): Promise<Map<string, FreshnessRecord>> {
    await this.catchUp();
    return this.index.freshness(ids) as Map<string, FreshnessRecord>;
  }

  /** The weight table as cached (fsck and rebuild-equivalence checks). */
  cachedWeights(): Map<string, number> {
    return this.index.allWeights();
  }

  async handEdited(current: Revision): Promise<{ path: string; text: string } | null> {
    if (current.status !== 'active') return null;
    const file = this.layout.currentFile(current.scope, current.type, current.slug);
    const text = readIfExists(file);
    if (text === null || text === serializeRevision(toRevision(current))) return null;
    return { path: path.relative(this.layout.root, file), text };
  }

  async reindex(ids: string[]): Promise<void> {
    await this.withWriteLock(async () => {
      const journaled = journaledRevisions(this.journalFiles.all());
      this.index.transaction(() => {
        for (const id of ids) {
          const lineage = this.readLineageFiles(id);
          if (lineage && unjournaledRev(lineage, journaled) === null)
            this.index.replaceLineage(deriveLineage(lineage));
          else this.index.removeLineage(id);
        }
      });
    });
  }

  /**
   * fsck's integrity phase for this adapter: the journal chain; each revision file against the
   * hash its journal entry recorded (an edited or unreadable file names its memory); files with
   * no journal entry; index rows against the files; current files that differ from their
   * revision (hand edits); a commit left half done; unreadable proposal files.
   */
  async integrity(): Promise<IntegrityFinding[]> {
    const out: IntegrityFinding[] = [];
    const v = await this.verifyJournal();
    if (!v.ok && v.firstBad)
      out.push({
        kind: 'journal_chain',
        severity: 'error',
        message: `journal chain broken: ${v.firstBad.problem} — every write is refused until a person runs \`mneme journal repair\``,
      });
    if (fs.existsSync(this.layout.intentFile))
      out.push({
        kind: 'half_done_write',
        severity: 'error',
        path: '.state/intent.json',
        message: 'a commit was left half done (recovery finishes or undoes it on the next write)',
      });
    const journaled = new Map<string, string>();
    for (const e of this.journalFiles.all())
      if (e.target && e.after) journaled.set(`${e.target.id}#${e.after.rev}`, e.after.hash);
    const indexed = this.index.allRevisionKeys();
    const onDisk = new Set<string>();
    const currentByPath = new Map<string, Revision>();
    const withheldIds = new Set<string>();
    for (const id of safeReaddir(this.layout.historyDir)) {
      if (!id.startsWith('mem_')) continue;
      const dir = path.join(this.layout.historyDir, id);
      const names = safeReaddir(dir).filter((n) => /^\d{6}\.md$/.test(n));
      // A lineage with an unjournaled revision is withheld: it has no index rows on purpose.
      const withheld = names.some((n) => !journaled.has(`${id}#${Number(n.slice(0, 6))}`));
      if (withheld) withheldIds.add(id);
      let last: Revision | null = null;
      for (const n of names) {
        const rev = Number(n.slice(0, 6));
        const key = `${id}#${rev}`;
        onDisk.add(key);
        const text = readIfExists(path.join(dir, n));
        const where = `history/${id}/${n}`;
        if (text === null) {
          out.push({
            kind: 'revision_unreadable',
            severity: 'error',
            memory: id,
            rev,
            path: where,
            message: `${where} cannot be read`,
          });
          continue;
        }
        let parsed: Revision | null = null;
        try {
          parsed = parseRevision(text, where);
        } catch (e) {
          out.push({
            kind: 'revision_unreadable',
            severity: 'error',
            memory: id,
            rev,
            path: where,
            message: (e as Error).message,
          });
        }
        const want = journaled.get(key);
        if (want === undefined) {
          out.push({
            kind: 'revision_unjournaled',
            severity: 'error',
            memory: id,
            rev,
            path: where,
            message: `${where} has no journal entry (cut from the journal, or added by hand): ${id} is withheld from every read. Repair: restore the journal from a backup (the memory is served again once its entries are back); or accept the loss: a person moves history/${id}/ and its current file under memories/ out of the store, runs \`mneme rebuild\`, and remembers it again if it still holds`,
          });
        } else if (sha256(text) !== want) {
          out.push({
            kind: 'revision_hash',
            severity: 'error',
            memory: id,
            rev,
            path: where,
            message: `${where} does not match the hash its journal entry recorded (edited or damaged)`,
          });
        }
        if (parsed && !withheld) {
          last = parsed;
          const doc = indexed.get(key);
          if (doc === undefined)
            out.push({
              kind: 'index_missing',
              severity: 'warning',
              memory: id,
              rev,
              message: `the index has no row for ${key}`,
            });
          else if (!sameRevision(JSON.parse(doc) as Revision, parsed))
            out.push({
              kind: 'index_stale',
              severity: 'warning',
              memory: id,
              rev,
              message: `the index row for ${key} differs from its file`,
            });
        }
      }
      if (last && last.status === 'active')
        currentByPath.set(this.layout.currentFile(last.scope, last.type, last.slug), last);
    }
    for (const key of indexed.keys())
      if (!onDisk.has(key)) {
        const [id, rev] = key.split('#');
        out.push({
          kind: 'index_stale',
          severity: 'warning',
          memory: id,
          rev: Number(rev),
          message: `the index holds ${key}, which has no revision file`,
        });
      }
    walk(this.layout.memoriesDir, (f) => {
      if (!f.endsWith('.md')) return;
      const rel = path.relative(this.layout.root, f);
      const text = readIfExists(f) ?? '';
      const recorded = currentByPath.get(f);
      if (recorded && serializeRevision(recorded) === text) return;
      const id = /\nid: (mem_[0-9A-Z]{26})\n/.exec(text)?.[1] ?? recorded?.id;
      if (!recorded && id && withheldIds.has(id)) return; // reported with its revision
      if (recorded || id)
        out.push({
          kind: 'hand_edit',
          severity: 'warning',
          memory: id ?? recorded!.id,
          path: rel,
          text,
          message: `${rel} was edited outside mneme`,
        });
      else
        out.push({
          kind: 'orphan_file',
          severity: 'warning',
          path: rel,
          message: `${rel} belongs to no memory`,
        });
    });
    for (const n of safeReaddir(this.layout.proposalsDir).filter((x) => x.endsWith('.json'))) {
      try {
        JSON.parse(readIfExists(path.join(this.layout.proposalsDir, n)) ?? '');
      } catch {
        out.push({
          kind: 'proposal_unreadable',
          severity: 'warning',
          path: `proposals/${n}`,
          message: `proposals/${n} is not valid JSON`,
        });
      }
    }
    return out;
  }

  /** The bytes of a memory's current file, or null (hand-edit detection). */
  readCurrentFile(r: Revision): string | null {
    return readIfExists(this.layout.currentFile(r.scope, r.type, r.slug));
  }

  fileHash(r: Revision): string {
    return sha256(serializeRevision(r));
  }

  async status(scopes?: string[]): Promise<StoreStatus> {
    await this.catchUp();
    const c = this.index.counts(scopes);
    return {
      backend: this.backend,
      location: this.layout.root,
      memories: c.memories,
      activeMemories: c.active,
      revisions: c.revisions,
      journalHead: this.journalFiles.head(),
      byScope: c.byScope,
      byType: c.byType,
    };
  }

  async close(): Promise<void> {
    this.index.close();
  }
}

function sameRevision(a: Revision, b: Revision): boolean {
  return serializeRevision(toRevision(a)) === serializeRevision(toRevision(b));
}

/** Removes `<name>.tmp-<pid>-<n>` files left by a process killed mid-write. */
function removeStrayTemps(dir: string): void {
  for (const n of safeReaddir(dir)) {
    if (/\.tmp-\d+-\d+$/.test(n)) fs.rmSync(path.join(dir, n), { force: true });
  }
}

/** id → the revisions the journal records for it. */
function journaledRevisions(entries: readonly JournalEntry[]): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const e of entries) {
    if (!e.target || !e.after) continue;
    let set = out.get(e.target.id);
    if (!set) out.set(e.target.id, (set = new Set()));
    set.add(e.after.rev);
  }
  return out;
}

/** The first revision of a lineage that the journal does not record, or null. */
function unjournaledRev(
  lineage: readonly Revision[],
  journaled: Map<string, Set<number>>,
): number | null {
  const set = journaled.get(lineage[0]?.id ?? '');
  for (const r of lineage) if (!set?.has(r.rev)) return r.rev;
  return null;
}

function dirHasEntry(dir: string): boolean {
  let d: fs.Dir | null = null;
  try {
    d = fs.opendirSync(dir);
    for (let e = d.readSync(); e !== null; e = d.readSync())
      if (!e.name.startsWith('.')) return true;
    return false;
  } catch {
    return false;
  } finally {
    d?.closeSync();
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
}

function walk(dir: string, fn: (file: string) => void): void {
  for (const ent of safeReaddirEntries(dir)) {
    const p = path.join(dir, ent.name);
    if (ent.isDirectory()) walk(p, fn);
    else if (ent.isFile()) fn(p);
  }
}

function safeReaddirEntries(dir: string): fs.Dirent[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}
