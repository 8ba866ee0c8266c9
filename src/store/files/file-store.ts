// The embedded store: Markdown revision files and JSONL logs are the truth, SQLite is a cache.
// A commit writes its journal line (carrying the revision file's text) and index rows; the lock
// section's end syncs the journal once for all its commits (the commit point, a group commit)
// and then writes the revision and current files (commit.ts). Opening the store re-creates what
// a crash left unwritten from the journal lines, and brings a lagging index up to the journal. A journal whose chain does not
// verify against its anchor (journal/HEAD) takes no write until a person repairs it; the index
// then follows the journal as it stands, and a lineage with a revision file the journal does not
// record is served nowhere (journal-files.ts says how the check stays cheap).
//
// This file is the class and its port methods; the work is in commit.ts (one commit),
// recovery.ts (intents, catch-up), rebuild.ts (the index from the files), integrity.ts (fsck's
// findings), hand-edits.ts, journal-health.ts (anchor, damage, repair), effects.ts (tombstones
// and proposals), lineage-files.ts and usage-log.ts, each taking the FileParts of parts.ts.
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import { MnemeError } from '../../core/errors.js';
import { sha256 } from '../../core/hash.js';
import type { JournalEntry } from '../../core/journal.js';
import type { Tombstone, TombstoneProbe } from '../../core/normalize.js';
import type { Proposal } from '../../core/proposal.js';
import { serializeRevision } from '../../core/markdown.js';
import type { QueryTerm } from '../../core/text.js';
import type { Revision, RevisionView } from '../../core/types.js';
import type {
  CommitRequest,
  FreshnessRecord,
  IntegrityFinding,
  IntegrityOptions,
  JournalAnchor,
  JournalDamage,
  RepairReport,
  RepairRequest,
  InjectQuery,
  JournalQuery,
  ProposalQuery,
  PurgeReport,
  PurgeRequest,
  RebuildReport,
  ScanPlace,
  SearchHit,
  SearchRequest,
  Store,
  StoreStatus,
  UsageEvent,
  VectorStore,
  KnowledgeStore,
  VerifyReport,
} from '../port.js';
import { ArtifactFiles } from './artifact-files.js';
import { readIfExists } from './atomic.js';
import { commitLocked, flushLocked } from './commit.js';
import { dirHasEntry } from './dirs.js';
import {
  readProposals,
  TombstoneLog,
  withStagedProposals,
  withStagedTombstones,
} from './effects.js';
import { handEditOf } from './hand-edits.js';
import { IndexDb } from './index-db.js';
import { isBusy } from './index-schema.js';
import { integrityFindings } from './integrity.js';
import { JournalFiles } from './journal-files.js';
import { anchorOf, damageNow, repairLocked, verifyLocked } from './journal-health.js';
import { Layout } from './layout.js';
import { journaledRevisions } from './lineage-files.js';
import { withFileLock } from './lock.js';
import type { FileParts, StagedCommit } from './parts.js';
import { purgeLocked, purgeSecretFile, resecurePurged, scanFiles } from './purge-files.js';
import { rebuildIndex, reindexLineages } from './rebuild.js';
import { materialiseFrom, needsFullRebuild, needsRecovery, recoverLocked } from './recovery.js';
import { appendUsage, readUsage } from './usage-log.js';
import { SessionFiles } from './session-files.js';
import { VectorDb } from './vector-db.js';
import { KnowledgeDb } from './knowledge-db.js';

export interface FileStoreOptions {
  /** fdatasync the journal at each group commit's end (default true); no other file is synced. */
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

/** How many callers may join one holder's group commit (the rest queue for the next). */
const MAX_JOINERS = 256;

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };
interface Joiner {
  fn: () => Promise<unknown>;
  settle: (r: Settled) => void;
}

async function settle(fn: () => Promise<unknown>): Promise<Settled> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    return { ok: false, error };
  }
}

export class FileStore implements Store {
  readonly backend = 'files';
  readonly capabilities = { vectors: true, handEdits: true };
  readonly layout: Layout;
  /** The session archive: `archive/sessions/` and `.state/` under the store's directory. */
  readonly sessions: SessionFiles;
  /** Artifact bytes: `artifacts/sha256/<aa>/<hash>` under the store's directory. */
  readonly artifacts: ArtifactFiles;
  private readonly index: IndexDb;
  private readonly journalFiles: JournalFiles;
  private readonly lockTimeoutMs: number;
  private readonly deferFullRebuild: boolean;
  /** What the concept modules work on (the layout, index and journal above, and settings). */
  private readonly parts: FileParts;
  /** Set inside the write lock's own async context (see withWriteLock). */
  private readonly held = new AsyncLocalStorage<true>();
  /** This process's writers queue here, so one at a time waits on the lock file. */
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * A commit reached its journal line but could not update the index (or write its effects):
   * the write stands, and the index is caught up from the journal before the next read here.
   */
  private behind = false;
  private readonly markBehind = (): void => {
    this.behind = true;
  };

  private constructor(root: string, opts: FileStoreOptions) {
    this.layout = new Layout(path.resolve(root));
    this.sessions = new SessionFiles(this.layout.root);
    const durable = opts.durable ?? true;
    this.artifacts = new ArtifactFiles(path.join(this.layout.root, 'artifacts'), durable);
    this.lockTimeoutMs = opts.lockTimeoutMs ?? 10_000;
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
      durable,
      opts.segmentBytes,
    );
    this.index = this.openIndex();
    const layout = this.layout;
    const index = this.index;
    this.parts = {
      layout,
      index,
      journalFiles: this.journalFiles,
      tombstones: new TombstoneLog(layout.tombstonesFile, durable),
      group: { staged: [] },
      durable,
      fault: opts.faultPoint ?? (() => {}),
      hasData: () =>
        index.journalSeq > 0 ||
        fs.existsSync(layout.tombstonesFile) ||
        dirHasEntry(layout.historyDir) ||
        dirHasEntry(layout.proposalsDir),
    };
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

  /**
   * Re-entrant only inside the holder's own async context (AsyncLocalStorage): a concurrent
   * caller of this process — two requests of `mneme serve` — queues for the lock like another
   * process would, so a read-check-write (expected_rev, live slug) cannot interleave with
   * another one and lose an update.
   *
   * The lock section is a group commit (commit.ts): the commits made inside it are made durable
   * together by one journal sync when it ends, before it returns. A caller of this process that
   * arrives while a holder is inside joins its group: its fn runs after the holder's (one at a
   * time, under the same lock) and shares the sync; each caller gets its own result or error,
   * and only after the sync.
   */
  async withWriteLock<T>(fn: () => Promise<T>): Promise<T> {
    if (this.held.getStore()) return fn();
    if (this.joining && this.joining.length < MAX_JOINERS) {
      return new Promise<T>((resolve, reject) => {
        this.joining!.push({
          fn,
          settle: (r) => (r.ok ? resolve(r.value as T) : reject(r.error)),
        });
      });
    }
    // This caller leads a group: callers arriving from now until it has run them all join it.
    const joined: Joiner[] = [];
    this.joining = joined;
    const close = () => {
      if (this.joining === joined) this.joining = null;
    };
    const prior = this.queue;
    let done!: () => void;
    this.queue = new Promise<void>((r) => (done = r));
    await prior.catch(() => {});
    let results: Settled[] | null = null;
    try {
      return await withFileLock(this.layout.lockFile, this.lockTimeoutMs, () =>
        this.held.run(true, async () => {
          let own: Settled;
          const ran: Settled[] = [];
          try {
            recoverLocked(this.parts);
            own = await settle(fn);
            // The joiners, in arrival order (more may join while they run).
            for (let i = 0; i < joined.length; i++) ran.push(await settle(joined[i]!.fn));
          } finally {
            close();
          }
          try {
            flushLocked(this.parts, this.markBehind);
          } catch (e) {
            // Not known durable: nobody in the group is told it committed.
            own = { ok: false, error: e };
            ran.fill({ ok: false, error: e });
          }
          results = ran;
          if (!own.ok) throw own.error;
          return own.value as T;
        }),
      );
    } catch (e) {
      // The lock or recovery failed before the joiners ran: they fail the same way.
      results ??= joined.map(() => ({ ok: false, error: e }));
      throw e;
    } finally {
      close();
      const settledAll: Settled[] = results ?? [];
      joined.forEach((j, i) =>
        j.settle(
          settledAll[i] ?? {
            ok: false,
            error: new MnemeError('internal', 'the group commit ended before this write ran'),
          },
        ),
      );
      done();
    }
  }

  /** While a holder runs: the callers of this process joining its group commit (else null). */
  private joining: Joiner[] | null = null;

  private async recoverIfNeeded(): Promise<void> {
    if (!needsRecovery(this.parts)) return;
    if (this.deferFullRebuild && needsFullRebuild(this.parts)) {
      this.index.close();
      throw new MnemeError('locked', 'the index must be rebuilt from the files first', {
        hint: 'run `mneme rebuild` (a hook starts it in the background and injects again once it is done)',
        details: { rebuild: 'needed' },
      });
    }
    await this.withWriteLock(async () => {});
  }

  // ---- the write path's storage half ------------------------------------------------------

  async commit(req: CommitRequest): Promise<JournalEntry> {
    if (!this.held.getStore())
      throw new MnemeError('internal', 'commit called without the store lock');
    return commitLocked(this.parts, req, this.markBehind);
  }

  /**
   * Before a read: if a commit in this process left the index behind its journal, finish that
   * commit now (under the lock, as recovery does). If that cannot happen yet, the read is served
   * from the index as it stands and the next read tries again.
   */
  private async catchUp(): Promise<void> {
    if (!this.behind) return;
    try {
      if (this.held.getStore()) recoverLocked(this.parts);
      else await this.withWriteLock(async () => {});
      this.behind = false;
    } catch {
      /* still behind: tried again on the next read or write */
    }
  }

  /** Ends the group in flight early (sync, then files): for work that reads the files. */
  private flush(): void {
    flushLocked(this.parts, this.markBehind);
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
    return this.index.search(req);
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

  async tombstones(scopes: string[]): Promise<Tombstone[]> {
    await this.catchUp();
    return withStagedTombstones(this.parts.tombstones.armed(scopes), this.staged(), scopes);
  }

  async tombstoneCandidates(scope: string, probe: TombstoneProbe): Promise<Tombstone[]> {
    await this.catchUp();
    // The arms and lifts of the group in flight count too (their effects are written after its
    // sync): every staged arm of the scope is a candidate, the precise check decides.
    return withStagedTombstones(this.parts.tombstones.candidates(scope, probe), this.staged(), [
      scope,
    ]);
  }

  async proposals(q: ProposalQuery): Promise<Proposal[]> {
    await this.catchUp();
    return withStagedProposals(readProposals(this.layout.proposalsDir, q), this.staged(), q);
  }

  /** The commits of the group in flight, seen only by its own lock section (their files wait). */
  private staged(): readonly StagedCommit[] {
    return this.held.getStore() ? this.parts.group.staged : [];
  }

  async usage(opts: { since?: string } = {}): Promise<UsageEvent[]> {
    return readUsage(this.layout.usageDir, opts.since);
  }

  /**
   * The whole chain against its anchor. Read without the lock first (a writer may be mid-commit);
   * a break, or an earlier recorded break, is judged again under the lock, where a break is
   * recorded (every write then refuses) and a journal that verifies again lifts the record.
   */
  async verifyJournal(): Promise<VerifyReport> {
    const first = this.journalFiles.verify(this.parts.hasData);
    if (first.ok && !this.journalFiles.hasBrokenMark()) return first;
    return this.withWriteLock(async () => (this.flush(), verifyLocked(this.parts)));
  }

  async anchor(): Promise<JournalAnchor> {
    return anchorOf(this.parts);
  }

  async diagnoseJournal(): Promise<JournalDamage> {
    return damageNow(this.parts);
  }

  async repairJournal(req: RepairRequest): Promise<RepairReport> {
    return this.withWriteLock(async () => (this.flush(), repairLocked(this.parts, req)));
  }

  async appendUsage(events: UsageEvent[]): Promise<void> {
    appendUsage(this.layout.usageDir, events);
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

  private knowledgeDb: KnowledgeDb | null = null;

  /** The knowledge index: .index/knowledge.db, created by the first refresh that writes. */
  async knowledge(): Promise<KnowledgeStore> {
    this.knowledgeDb ??= new KnowledgeDb(this.layout.knowledgeFile, this.lockTimeoutMs);
    return this.knowledgeDb;
  }

  /** Whether this process has opened the vector arm (tests: the arm off loads nothing). */
  get vectorArmLoaded(): boolean {
    return this.vectorDb !== null;
  }

  // ---- rebuild and maintenance ------------------------------------------------------------

  async rebuild(onProgress?: (done: number, total: number) => void): Promise<RebuildReport> {
    return this.withWriteLock(async () => {
      this.flush();
      // Files a power loss took after their sync (never synced themselves) come back first.
      materialiseFrom(this.parts, 0, { effects: false });
      return rebuildIndex(this.parts, onProgress);
    });
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
    // A memory written earlier in this group has its current file still to come: not an edit.
    if (this.staged().some((s) => s.entry.target?.id === current.id)) return null;
    return handEditOf(this.layout, current);
  }

  async reindex(ids: string[]): Promise<void> {
    await this.withWriteLock(async () => {
      this.flush();
      const journaled = journaledRevisions(this.journalFiles.all());
      this.index.transaction(() => reindexLineages(this.parts, ids, journaled));
    });
  }

  /**
   * fsck's integrity phase for this adapter: the journal chain; each revision file against the
   * hash its journal entry recorded (an edited or unreadable file names its memory); files with
   * no journal entry; index rows against the files; current files that differ from their
   * revision (hand edits); a commit left half done; unreadable proposal files.
   */
  async integrity(opts: IntegrityOptions = {}): Promise<IntegrityFinding[]> {
    return integrityFindings(this.parts, await this.verifyJournal(), opts);
  }

  /** The bytes of a memory's current file, or null (hand-edit detection). */
  readCurrentFile(r: Revision): string | null {
    return readIfExists(this.layout.currentFile(r.scope, r.type, r.slug));
  }

  fileHash(r: Revision): string {
    return sha256(serializeRevision(r));
  }

  async purge(req: PurgeRequest): Promise<PurgeReport> {
    return this.withWriteLock(async () => {
      this.flush();
      return purgeLocked(this.parts, req, this.markBehind);
    });
  }

  async finishPurge(id: string): Promise<string[]> {
    return this.withWriteLock(async () => resecurePurged(this.parts, id));
  }

  async purgeSecret(create: boolean): Promise<string | null> {
    return purgeSecretFile(this.layout.root, create);
  }

  async scan(visit: (place: ScanPlace, text: string) => void): Promise<void> {
    scanFiles(this.layout.root, visit);
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
    this.knowledgeDb?.close();
  }
}
