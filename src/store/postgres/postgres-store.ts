// The Postgres adapter (DESIGN §4, scale-out): one store object per tenant, every statement
// carrying `tenant_id = $1`. Revision rows are the truth; lifecycle columns and the tsvector are
// derived from them. withWriteLock opens one transaction on one connection, takes a per-tenant
// advisory lock, and runs fn with that connection in async-local context, so the reads and
// commits inside fn see one consistent state and every instance's writers queue on one lock.
// This file is the class, its connection handling and its port methods; the statements are in
// reads.ts, commit-rows.ts, journal-rows.ts (the chain and its head row), lineage-rows.ts,
// derived-rows.ts (freshness, weights, injection candidates), integrity-rows.ts (fsck) and
// session-rows.ts (the session archive).
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { MnemeError } from '../../core/errors.js';
import type { JournalEntry } from '../../core/journal.js';
import { TombstoneIndex, type Tombstone, type TombstoneProbe } from '../../core/normalize.js';
import type { Proposal } from '../../core/proposal.js';
import type { QueryTerm } from '../../core/text.js';
import type { RevisionView } from '../../core/types.js';
import type {
  CommitRequest,
  FreshnessRecord,
  InjectQuery,
  IntegrityFinding,
  IntegrityOptions,
  JournalAnchor,
  JournalDamage,
  JournalQuery,
  RepairReport,
  RepairRequest,
  ProposalQuery,
  RebuildReport,
  SearchHit,
  SearchRequest,
  Store,
  StoreStatus,
  PurgeReport,
  PurgeRequest,
  ScanPlace,
  UsageEvent,
  VectorStore,
  KnowledgeStore,
  VerifyReport,
} from '../port.js';
import { ArtifactRows } from './artifact-rows.js';
import {
  beginHoldingHead,
  commitIn,
  deferCommit,
  flushDeferred,
  needsSavepoint,
  type DeferredCommit,
  type HeldHead,
} from './commit-rows.js';
import { connectionError, fromDb, pgError, redactUrl } from './errors.js';
import {
  anchorOf,
  damageFor,
  evaluate,
  repairIn,
  type Evaluation,
  type Queryable,
} from './journal-rows.js';
import * as derived from './derived-rows.js';
import { integrityFindings } from './integrity-rows.js';
import { rederiveLineages } from './lineage-rows.js';
import { purgeIn, purgeSecretRow, scanRows, vacuumAfterPurge, vacuumDue } from './purge-rows.js';
import * as reads from './reads.js';
import { openPool } from './pool.js';
import { migrate } from './schema.js';
import { SessionRows } from './session-rows.js';
import { KnowledgeRows } from './knowledge-rows.js';
import { checkTenantName, tenantExists } from './tenants.js';
import { armedTombstonesSince, tombstoneEventsSince, tombstoneLookup } from './tombstone-rows.js';
import { reportOf } from '../journal-guard.js';
import { UsageBatch, type UsageBatchOptions } from './usage-batch.js';

export interface PostgresStoreOptions {
  tenant: string;
  /** Connections per instance (default 10). */
  poolSize?: number;
  /** How long a writer waits for the tenant's write lock (default 30 s). */
  lockTimeoutMs?: number;
  /**
   * Usage events written in the background, batched (a server: a recall does not wait for its
   * usage row; usage-batch.ts says what is kept and when). Absent: each append is awaited.
   */
  usageBatch?: UsageBatchOptions;
}

/** The most writers one write transaction carries (bounds how long the lock is held). */
const MAX_GROUP = 32;

/** Scope lists whose tombstones are kept between reads (a binding reads one: project+global). */
const TOMBSTONE_LISTS_KEPT = 256;

/** Scopes whose tombstone lookup index is kept in memory (tombstoneCandidates). */
const TOMBSTONE_INDEXES_KEPT = 64;

interface Waiter {
  fn: () => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * What a statement of the request read of its tenant: its latest tombstone event's seq, and
 * whether it had any knowledge chunk.
 */
export interface TenantState {
  tombstones: string;
  knowledge: boolean;
}

interface ProbeAsk {
  scope: string;
  probe: TombstoneProbe;
  resolve: (t: Tombstone[]) => void;
  reject: (e: unknown) => void;
}

/** A group writer failed without a savepoint: the transaction rolls back and the group runs again. */
class RunAgain extends Error {
  constructor(readonly failure: unknown) {
    super('a writer of the group failed; the group runs again, each writer in its own savepoint');
  }
}

/** Advisory lock class for per-tenant write locks (the object id is a hash of the tenant). */
const WRITE_LOCK_CLASS = 0x6d6e6d77; // "mnmw"

export class PostgresStore implements Store {
  readonly backend = 'postgres';
  /**
   * No vector arm (recall is lexical; pgvector is only detected, see vectorAvailable) and no
   * files a person can edit (handEdited always answers null).
   */
  readonly capabilities = { vectors: false, handEdits: false };
  readonly tenant: string;
  /** The tenant's session archive and session state rows (session-rows.ts). */
  readonly sessions: SessionRows;
  /** The tenant's artifact bytes (artifact-rows.ts), in the write transaction when inside one. */
  readonly artifacts: ArtifactRows;
  /**
   * Whether the server offers pgvector (feature-detected on open). The vector arm is not wired
   * to Postgres (capabilities.vectors is false); search is lexical either way.
   */
  vectorAvailable = false;
  private readonly tx = new AsyncLocalStorage<pg.PoolClient>();
  /**
   * What the open write transaction already knows (it holds the tenant's lock, so nobody else
   * changes it): the head its last commit left, and the tombstones it read (by scope list).
   * Dropped at the transaction's end, and by every write that is not a plain commit.
   */
  private held: HeldHead | null = null;
  /**
   * The open write transaction's connection itself: the connection in `tx` is a view of it that
   * first writes the deferred commits (flushPending) before any statement it sends.
   */
  private raw: pg.PoolClient | null = null;
  /**
   * Whether plain commits are deferred: only while a group runs bare (runGroup), which runs
   * again guarded when a flush fails, so a deferred commit's refusal is never lost.
   */
  private deferring = false;
  /** Plain commits made in memory only, written together by the next flush (commit-rows.ts). */
  private pending: DeferredCommit[] = [];
  /** The head after the last deferred commit (what the flush moves the head row to). */
  private pendingHead: HeldHead | null = null;
  /** A flush that failed in this transaction: the group runs again guarded (runGroup). */
  private flushFailed: unknown = null;
  private readonly tombstoneCache = new Map<string, Tombstone[]>();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly lockTimeoutMs: number;
  /** The tenant's advisory lock id (a hash collision only makes two tenants queue together). */
  private readonly lockKey: number;

  private constructor(
    readonly pool: pg.Pool,
    private readonly location: string,
    opts: PostgresStoreOptions,
    private readonly ownsPool: boolean,
  ) {
    this.tenant = opts.tenant;
    this.sessions = new SessionRows(pool, opts.tenant, location);
    this.artifacts = new ArtifactRows((text, values) => this.q(text, values), opts.tenant);
    this.lockKey = createHash('sha256').update(opts.tenant).digest().readInt32BE(0);
    this.lockTimeoutMs = opts.lockTimeoutMs ?? 30_000;
    this.usageBatch = opts.usageBatch
      ? new UsageBatch(
          // On the pool, never in a write transaction (the batch outlives the request).
          (events) => reads.appendUsage(this.poolQuery, this.tenant, events),
          opts.usageBatch,
        )
      : null;
  }

  /** Background usage writes (a server), or null when each append is awaited. */
  private readonly usageBatch: UsageBatch | null;

  /** Every usage event appended so far is in the table (before a read, count or rewrite of it). */
  private async settleUsage(): Promise<void> {
    await this.usageBatch?.settle();
  }

  /** Connects, applies pending migrations and checks the tenant exists. */
  static async open(url: string, opts: PostgresStoreOptions): Promise<PostgresStore> {
    const pool = openPool(url, opts.poolSize ?? 10);
    try {
      checkTenantName(opts.tenant);
      await migrate(pool);
      if (!(await tenantExists(pool, opts.tenant))) {
        throw new MnemeError('not_found', `no tenant "${opts.tenant}" in ${redactUrl(url)}`, {
          hint: `create it with \`mneme tenant create ${opts.tenant} --db URL\``,
        });
      }
    } catch (e) {
      await pool.end().catch(() => {});
      throw e instanceof MnemeError ? e : connectionError(e, url);
    }
    const store = new PostgresStore(pool, redactUrl(url), opts, true);
    store.vectorAvailable = await detectVector(pool);
    return store;
  }

  /**
   * A store for one tenant over a pool shared with other tenants (a server resolving tenants
   * from tokens). The caller has migrated the database and checked the tenant; close() leaves
   * the pool open.
   */
  static forTenant(
    pool: pg.Pool,
    opts: PostgresStoreOptions & { location?: string },
  ): PostgresStore {
    return new PostgresStore(pool, opts.location ?? 'postgres', opts, false);
  }

  /** The connection of the write transaction this call runs in, else the pool. */
  private get db(): Queryable {
    return this.tx.getStore() ?? this.pool;
  }

  private async q<R extends pg.QueryResultRow>(
    text: string,
    values: unknown[] = [],
    name?: string,
  ) {
    try {
      return await (name
        ? this.db.query<R>({ name, text, values })
        : this.db.query<R>(text, values));
    } catch (e) {
      throw pgError(e);
    }
  }

  /** A statement on the pool whatever transaction the caller runs in, errors mapped. */
  private readonly poolQuery: reads.Query = async (text, values = [], name) => {
    try {
      return await (name ? this.pool.query({ name, text, values }) : this.pool.query(text, values));
    } catch (e) {
      throw pgError(e);
    }
  };

  /** `q` as a value for the statement modules (bound once). */
  private readonly query: reads.Query = (text, values, name) => this.q(text, values, name);

  // ---- locking ----------------------------------------------------------------------------

  async withWriteLock<T>(fn: () => Promise<T>): Promise<T> {
    if (this.tx.getStore()) return fn();
    // Writers of this instance queue here, so at most one pooled connection waits on the lock;
    // the writers that queued while a transaction ran share the next one (group commit).
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (this.waiting.length === 1 && !this.draining) this.queue = this.drain();
    });
  }

  /** Writers waiting for the next write transaction of this instance. */
  private readonly waiting: Waiter[] = [];
  /** A group whose transaction one writer's failure rolled back: it runs next, guarded. */
  private readonly redo: Waiter[] = [];
  private draining = false;

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.redo.length > 0 || this.waiting.length > 0) await this.runGroup();
    } finally {
      this.draining = false;
    }
  }

  /**
   * One write transaction for the writers that queued together. The group is taken only once
   * the transaction holds the tenant's lock: every writer that queued while this instance
   * connected and waited for the lock (another instance's transaction) joins it, instead of
   * waiting for one more transaction. Alone, a writer's failure rolls the transaction back. In
   * a group the writers first run one after the other without savepoints (a refusal is an
   * answer, not a failure: it writes its own entry and leaves the transaction usable); if one
   * fails, nothing of the group is kept (what the failing writer wrote before it failed cannot
   * be told apart), the transaction rolls back and the same writers run again in the next one,
   * each inside its own savepoint, so the failing one is rolled back alone. None of them was
   * answered yet, so running one again answers it once. In the bare run a plain first
   * revision's rows are deferred and the group's written by one statement (flushPending): a
   * flush that fails fails the group in the same way. Every writer is answered only once
   * COMMIT returned: a commit that fails fails them all, and none was written.
   */
  private async runGroup(): Promise<void> {
    let group: Waiter[] = [];
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    const guarded = this.redo.length > 0;
    try {
      await this.inTransaction(async () => {
        group = guarded ? this.redo.splice(0) : this.waiting.splice(0, MAX_GROUP);
        if (group.length === 1) {
          outcomes.push({ ok: true, value: await group[0]!.fn() });
          return;
        }
        if (!guarded) {
          // Plain commits are deferred and written together: one statement for the group's
          // rows instead of one per writer. A flush that fails (a row the database refused, a
          // failing statement) is the group failing: it runs again, guarded and not deferred.
          this.deferring = true;
          try {
            for (const w of group) {
              try {
                outcomes.push({ ok: true, value: await w.fn() });
              } catch (error) {
                throw new RunAgain(error);
              }
              if (this.flushFailed) throw new RunAgain(this.flushFailed);
            }
            await this.flushPending().catch((error: unknown) => {
              throw new RunAgain(error);
            });
          } finally {
            this.deferring = false;
          }
          return;
        }
        const c = this.tx.getStore()!;
        for (const w of group) {
          const held = this.held;
          await c.query('SAVEPOINT mneme_writer');
          try {
            outcomes.push({ ok: true, value: await w.fn() });
          } catch (error) {
            await c.query('ROLLBACK TO SAVEPOINT mneme_writer');
            // What the rolled-back writer did is undone: the head it moved, the tombstones.
            this.held = held;
            this.tombstoneCache.clear();
            outcomes.push({ ok: false, error: fromDb(error) });
          }
        }
      });
    } catch (error) {
      // Nothing was committed, so nothing the writers pushed to run after the commit either.
      this.afterCommit.length = 0;
      if (error instanceof RunAgain) {
        // Rolled back: the same writers, unanswered, run again, each in its own savepoint.
        this.redo.push(...group);
        return;
      }
      // No transaction (no connection, the lock not granted in time): the writers waiting now
      // are answered with that failure, none of them ran.
      if (group.length === 0)
        group = guarded ? this.redo.splice(0) : this.waiting.splice(0, MAX_GROUP);
      // Not committed: a writer that failed on its own keeps its own error, the others get this.
      group.forEach((w, i) => {
        const o = outcomes[i];
        w.reject(o && !o.ok ? o.error : error);
      });
      return;
    }
    // The first write of this instance also finishes a purge whose VACUUM a crash cut off.
    if (!this.vacuumChecked) {
      this.vacuumChecked = true;
      this.afterCommit.push(async () => {
        if (await vacuumDue(this.pool, this.tenant)) await vacuumAfterPurge(this.pool, this.tenant);
      });
    }
    for (const f of this.afterCommit.splice(0)) await f().catch(() => {});
    group.forEach((w, i) => {
      const o = outcomes[i]!;
      if (o.ok) w.resolve(o.value);
      else w.reject(o.error);
    });
  }

  /** Work that must run outside the write transaction, once it committed (a purge's VACUUM). */
  private readonly afterCommit: (() => Promise<void>)[] = [];
  /** Whether this instance looked for a purge's VACUUM left undone (on its first write). */
  private vacuumChecked = false;

  private async inTransaction<T>(fn: () => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw connectionError(e, this.location);
    }
    let broken = false;
    try {
      // READ COMMITTED on purpose: each statement after the lock sees every earlier writer.
      // One round trip for the transaction's start, the lock and the head row-locked (a plain
      // first commit then needs neither its read nor a savepoint); the SQL holds only numbers
      // computed here and the tenant quoted as a literal, never text from a caller.
      this.forget();
      try {
        this.held = await beginHoldingHead(
          client,
          this.tenant,
          `BEGIN ISOLATION LEVEL READ COMMITTED;
           SET LOCAL lock_timeout = ${Math.max(1, Math.floor(this.lockTimeoutMs))};
           SELECT pg_advisory_xact_lock(${WRITE_LOCK_CLASS}, ${this.lockKey})`,
        );
      } catch (e) {
        throw pgError(e);
      }
      this.raw = client;
      const out = await this.tx.run(this.flushingView(client), fn);
      // Whatever is still deferred is written before COMMIT (a failure throws: rolled back).
      await this.flushPending();
      // A statement that failed inside fn without a savepoint (its error caught and not
      // rethrown) aborted the transaction: COMMIT then answers ROLLBACK without an error, and
      // nothing fn did may be acknowledged.
      const done = await client.query('COMMIT');
      if (done.command !== 'COMMIT') {
        this.tombstonesMoved = false;
        throw new MnemeError(
          'internal',
          'the write transaction was rolled back: a statement inside it failed, so none of its writes was made',
          {
            hint: 'retry the write; if it fails again, the Postgres server log names the failing statement',
          },
        );
      }
      // Committed: a list read before this commit is not answered again (see armedTombstones).
      if (this.tombstonesMoved) this.tombstoneGeneration++;
      return out;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw fromDb(e);
    } finally {
      this.tombstonesMoved = false;
      this.forget();
      this.raw = null;
      this.pending = [];
      this.pendingHead = null;
      this.flushFailed = null;
      client.release(broken);
    }
  }

  // ---- the write path's storage half ------------------------------------------------------

  async commit(req: CommitRequest): Promise<JournalEntry> {
    const client = this.tx.getStore();
    if (!client) throw new MnemeError('internal', 'commit called without the store lock');
    if (req.tombstone) {
      this.tombstoneCache.clear();
      this.tombstonesMoved = true;
    }
    const deferred =
      this.deferring && this.held && !needsSavepoint(req, this.held)
        ? deferCommit(req, this.held)
        : null;
    if (deferred) {
      // Written by the next flush: before any statement of the transaction, or at its end.
      this.pending.push(deferred.deferred);
      this.held = this.pendingHead = deferred.held;
      return deferred.deferred.entry;
    }
    if (!needsSavepoint(req, this.held)) {
      // Its refusals write nothing (the transaction stays usable); any other failure aborted
      // the transaction, and COMMIT then reports the failure (inTransaction).
      const { entry, held } = await commitIn(client, this.tenant, req, this.held).catch((e) => {
        throw fromDb(e);
      });
      this.held = held;
      return entry;
    }
    // Not released after success (saves a round trip): COMMIT releases them all, and a later
    // ROLLBACK TO goes back to the newest savepoint of that name only.
    await client.query('SAVEPOINT mneme_commit');
    try {
      const { entry, held } = await commitIn(client, this.tenant, req, this.held);
      this.held = held;
      return entry;
    } catch (e) {
      // Keep the surrounding transaction usable (the engine journals the refusal next); the
      // head this transaction held is unchanged by the rollback.
      await client.query('ROLLBACK TO SAVEPOINT mneme_commit');
      throw fromDb(e);
    }
  }

  /**
   * The transaction's connection as the write path sees it: every statement sent through it
   * first writes the deferred commits, so it sees them as if each had been written at once.
   * (Only query is wrapped; everything else is the connection's own.)
   */
  private flushingView(client: pg.PoolClient): pg.PoolClient {
    const view = Object.create(client) as pg.PoolClient;
    const query = (...a: unknown[]) => {
      const send = () => (client.query as (...x: unknown[]) => unknown).apply(client, a);
      return this.pending.length === 0 ? send() : this.flushPending().then(send);
    };
    view.query = query as pg.PoolClient['query'];
    return view;
  }

  /** Writes the deferred commits (one statement); a failure is kept for runGroup and thrown. */
  private async flushPending(): Promise<void> {
    if (this.flushFailed) throw this.flushFailed;
    if (this.pending.length === 0) return;
    const list = this.pending;
    this.pending = [];
    try {
      await flushDeferred(this.raw!, this.tenant, list, this.pendingHead!);
    } catch (e) {
      this.flushFailed = e;
      throw e;
    }
  }

  /**
   * The connection for a read that no deferred commit can change (its rows are a plain first
   * revision's memories, revisions and journal rows): the transaction's own, unflushed.
   */
  private unflushed(affected: boolean): Queryable {
    const inTx = this.tx.getStore();
    if (!inTx) return this.pool;
    return affected ? inTx : this.raw!;
  }

  private rawQuery(affected: boolean): reads.Query {
    return async (text, values = [], name) => {
      const on = this.unflushed(affected);
      try {
        return await (name ? on.query({ name, text, values }) : on.query(text, values));
      } catch (e) {
        throw pgError(e);
      }
    };
  }

  /**
   * Several commits in one transaction under the tenant's lock: each is its own journaled
   * commit (its own savepoint), so one refused (a stale revision, a unique violation) is
   * reported in its slot and the others still commit. They are acknowledged only once the
   * transaction committed: if it fails (a lost connection, a failing COMMIT) this throws and
   * none of them was written. Inside an open write transaction they join it.
   */
  async commitMany(
    reqs: readonly CommitRequest[],
  ): Promise<({ ok: true; entry: JournalEntry } | { ok: false; error: MnemeError })[]> {
    if (reqs.length === 0) return [];
    return this.withWriteLock(async () => {
      const out: ({ ok: true; entry: JournalEntry } | { ok: false; error: MnemeError })[] = [];
      for (const req of reqs) {
        try {
          out.push({ ok: true, entry: await this.commit(req) });
        } catch (e) {
          const err = fromDb(e);
          // A refusal stays in its slot; anything else (the chain refused, a failing
          // statement, the connection lost) fails the whole transaction.
          const refusal =
            err instanceof MnemeError &&
            (err.code === 'conflict' || err.code === 'refused') &&
            err.details?.chain !== 'broken';
          if (!refusal) throw err;
          out.push({ ok: false, error: err });
        }
      }
      return out;
    });
  }

  /** Drops what the write transaction knew (its end, or a write that is not a plain commit). */
  private forget(): void {
    this.held = null;
    this.tombstoneCache.clear();
  }

  // ---- reads ------------------------------------------------------------------------------

  async getLineage(id: string): Promise<RevisionView[] | null> {
    return reads.getLineage(this.query, this.tenant, id);
  }

  async findLiveBySlug(scope: string, type: string, slug: string): Promise<RevisionView | null> {
    // A deferred commit changes this read only when it holds the same live subject.
    const affected = this.pending.some(
      (d) =>
        d.revision.scope === scope &&
        d.revision.type === type &&
        d.revision.slug === slug &&
        d.revision.status === 'active',
    );
    return reads.findLiveBySlug(this.rawQuery(affected), this.tenant, scope, type, slug);
  }

  async findIdempotent(key: string): Promise<JournalEntry | null> {
    const affected = this.pending.some((d) => d.entry.idem === key);
    return reads.findIdempotent(this.rawQuery(affected), this.tenant, key);
  }

  async search(req: SearchRequest): Promise<SearchHit[]> {
    return reads.search(this.query, this.tenant, req);
  }

  async nearest(terms: QueryTerm[], scopes: string[], limit: number): Promise<SearchHit[]> {
    return reads.nearest(this.query, this.tenant, terms, scopes, limit);
  }

  async listCurrent(
    scopes: string[],
    opts: { includeEnded?: boolean } = {},
  ): Promise<RevisionView[]> {
    return reads.listCurrent(this.query, this.tenant, scopes, opts);
  }

  async journal(q: JournalQuery): Promise<JournalEntry[]> {
    return reads.journal(this.query, this.tenant, q);
  }

  async tombstones(scopes: string[]): Promise<readonly Tombstone[]> {
    if (!this.tx.getStore()) return this.armedTombstones(scopes);
    // Inside the write transaction only this transaction's commits arm or lift one.
    const key = JSON.stringify(scopes);
    let got = this.tombstoneCache.get(key);
    if (!got) {
      // (A deferred commit arms and lifts none.)
      got = await reads.tombstones(this.rawQuery(false), this.tenant, scopes);
      this.tombstoneCache.set(key, got);
    }
    return [...got];
  }

  /**
   * Outside a write transaction: the tombstones of a scope list as last read, re-read only when
   * the tenant's tombstone version moved (armedTombstonesSince: one statement either way, so a
   * forget committed by any instance holds at the next read). In a request whose token check
   * already read the version (`knowing`), a list read at exactly that version is answered with
   * no statement at all. While nothing moved the same frozen list is answered, which lets the
   * engine keep what it built from it (rejected-here.ts). A commit of this instance that armed or
   * lifted one retires every list read before it, whatever version a request knew.
   */
  private async armedTombstones(scopes: string[]): Promise<readonly Tombstone[]> {
    const key = scopes.join('\u0000');
    const generation = this.tombstoneGeneration;
    const seen = this.tombstonesSeen.get(key);
    const valid = seen && seen.generation === generation ? seen : undefined;
    const known = this.known.getStore()?.tombstones;
    // Exactly the version the request read: a version that went back (a restore from a backup)
    // is read again, never answered from a list kept at a later one.
    if (valid && known !== undefined && valid.version === known) return valid.tombstones;
    const got = await armedTombstonesSince(this.query, this.tenant, scopes, valid?.version ?? null);
    if (got.tombstones === null && valid) return valid.tombstones;
    const tombstones = Object.freeze(got.tombstones ?? []);
    // Kept only when no commit of this instance moved a tombstone while it was read.
    if (generation !== this.tombstoneGeneration) return tombstones;
    // Ordered by insertion: the first key is the one read least recently set.
    this.tombstonesSeen.delete(key);
    if (this.tombstonesSeen.size >= TOMBSTONE_LISTS_KEPT)
      this.tombstonesSeen.delete(this.tombstonesSeen.keys().next().value!);
    this.tombstonesSeen.set(key, { version: got.version, generation, tombstones });
    return tombstones;
  }

  /** The scope lists read outside a transaction, with the version they were read at. */
  private readonly tombstonesSeen = new Map<
    string,
    { version: string; generation: number; tombstones: readonly Tombstone[] }
  >();
  /** Counts this instance's commits that armed, lifted or dropped a tombstone. */
  private tombstoneGeneration = 0;
  /** Whether the open write transaction armed, lifted or dropped one. */
  private tombstonesMoved = false;
  /** What the request's token check read of this tenant (database.ts), for the reads it spares. */
  private readonly known = new AsyncLocalStorage<TenantState>();

  /**
   * Runs fn (the rest of a request) knowing the tenant's state as a statement of this request
   * read it: a list read at exactly that tombstone version is current for the request.
   */
  knowing<T>(state: TenantState, fn: () => Promise<T>): Promise<T> {
    return this.known.run(state, fn);
  }

  /**
   * Lookups asked in the same tick on the same connection (the write gate asks a value's scope
   * and global at once) share one statement: one round trip inside the write transaction
   * instead of one per scope.
   *
   * Each scope's armed tombstones are also kept indexed in memory (core TombstoneIndex), stamped
   * with the tenant's tombstone version they were read at. The statement reads the version
   * first and runs the index lookups only when it differs from the one the asked scopes' indexes
   * hold (tombstoneLookup): while no tombstone moved, a write costs one descent, whatever their
   * number, and is answered from memory — the same candidates, in the same (key) order. Inside
   * the write transaction the version read counts this transaction's own events, and every event
   * is written under the tenant's write lock (armedTombstonesSince), so an unchanged version is
   * unchanged tombstones. An index is (re)built off the write's path, on the pool, once a scope
   * was looked up twice at the same version with its index missing or older: arming in a loop
   * moves the version at every lookup and so never pays a rebuild per arm.
   */
  async tombstoneCandidates(scope: string, probe: TombstoneProbe): Promise<Tombstone[]> {
    // (A deferred commit arms and lifts none: the lookup needs no flush.)
    const on = this.unflushed(false);
    let batch = this.probeBatches.get(on);
    if (!batch) {
      const asks: ProbeAsk[] = [];
      batch = asks;
      this.probeBatches.set(on, asks);
      queueMicrotask(() => {
        this.probeBatches.delete(on);
        // On the connection the lookups were asked on (the write transaction's, or the pool).
        const query: reads.Query = (text, values = []) =>
          on.query(text, values).catch((e: unknown) => {
            throw pgError(e);
          });
        const indexes = asks.map((a) => this.tombstoneIndexes.get(a.scope));
        const at = indexes[0]?.version;
        const known = at !== undefined && indexes.every((x) => x?.version === at) ? at : null;
        const lookup = async () => {
          const got = await tombstoneLookup(query, this.tenant, asks, known);
          // An index brought up to date while the statement ran answers for a later version:
          // read the rows instead.
          if (got.found === null && indexes.every((x) => x!.version === got.version)) return got;
          return got.found === null ? tombstoneLookup(query, this.tenant, asks, null) : got;
        };
        lookup()
          .then(({ version, found }) => {
            if (found === null)
              asks.forEach((a, i) => a.resolve(byKey(indexes[i]!.index.candidates(a.probe))));
            else {
              asks.forEach((a, i) => a.resolve(found[i]!));
              for (const a of asks) this.indexLater(a.scope, version);
            }
          })
          .catch((e: unknown) => asks.forEach((a) => a.reject(e)));
      });
    }
    const asks = batch;
    return new Promise<Tombstone[]>((resolve, reject) =>
      asks.push({ scope, probe, resolve, reject }),
    );
  }

  /**
   * Brings `scope`'s index up to date once a lookup saw the same stale version twice (see
   * above): from the events written since the version it holds, or read whole when there is
   * none, when the version went back (a restore) or when a purge dropped events since (it arms
   * a purged tombstone in the same transaction: events gone leave no event of their own).
   */
  private indexLater(scope: string, version: string): void {
    if (this.tombstoneIndexes.get(scope)?.version === version) return;
    if (this.staleSeen.get(scope) !== version) {
      this.staleSeen.set(scope, version);
      return;
    }
    if (this.indexing.has(scope)) return;
    const build = (async () => {
      const held = this.tombstoneIndexes.get(scope);
      if (held) {
        const got = await tombstoneEventsSince(this.poolQuery, this.tenant, scope, held.version);
        const purged = got.events.some(
          (e) => e.event === 'arm' && (JSON.parse(e.doc) as Tombstone).kind === 'purged',
        );
        if (BigInt(got.version) >= BigInt(held.version) && !purged) {
          if (this.tombstoneIndexes.get(scope) !== held) return;
          for (const e of got.events)
            if (e.event === 'arm') held.index.add(JSON.parse(e.doc) as Tombstone);
            else held.index.delete(e.key);
          held.version = got.version;
          return;
        }
      }
      const got = await armedTombstonesSince(this.poolQuery, this.tenant, [scope], null);
      const index = new TombstoneIndex(scope);
      for (const t of got.tombstones ?? []) index.add(t);
      this.tombstoneIndexes.delete(scope);
      if (this.tombstoneIndexes.size >= TOMBSTONE_INDEXES_KEPT)
        this.tombstoneIndexes.delete(this.tombstoneIndexes.keys().next().value!);
      this.tombstoneIndexes.set(scope, { version: got.version, index });
    })()
      // A failed build only leaves the lookups on the index rows; the next stale one retries.
      .catch(() => {})
      .finally(() => this.indexing.delete(scope));
    this.indexing.set(scope, build);
  }

  /** Resolves once the index builds under way are done (close; tests). */
  async settleTombstoneIndexes(): Promise<void> {
    await Promise.all(this.indexing.values());
  }

  /** Each scope's tombstones indexed in memory, with the tenant's version they were read at. */
  private readonly tombstoneIndexes = new Map<string, { version: string; index: TombstoneIndex }>();
  /** The stale version a scope's lookup last saw (a second look at it starts a rebuild). */
  private readonly staleSeen = new Map<string, string>();
  /** Index builds under way, by scope. */
  private readonly indexing = new Map<string, Promise<void>>();

  /** Tombstone lookups waiting for the end of the tick, by the connection they run on. */
  private readonly probeBatches = new Map<Queryable, ProbeAsk[]>();

  async proposals(q: ProposalQuery): Promise<Proposal[]> {
    return reads.proposals(this.query, this.tenant, q);
  }

  async usage(opts: { since?: string } = {}): Promise<UsageEvent[]> {
    await this.settleUsage();
    return reads.usage(this.query, this.tenant, opts);
  }

  async appendUsage(events: UsageEvent[]): Promise<void> {
    // Inside a write transaction the events commit (or roll back) with it.
    if (this.usageBatch && !this.tx.getStore()) return this.usageBatch.add(events);
    return reads.appendUsage(this.query, this.tenant, events);
  }

  async injectCandidates(q: InjectQuery): Promise<SearchHit[]> {
    return derived.injectCandidates(this.db, this.tenant, q);
  }

  async weights(ids: string[]): Promise<Map<string, number>> {
    return derived.weightsOf(this.db, this.tenant, ids);
  }

  async freshness(ids: string[]): Promise<Map<string, FreshnessRecord>> {
    return derived.freshnessOf(this.db, this.tenant, ids);
  }

  /** There are no files behind this store, so nothing a person could have edited by hand. */
  async handEdited(): Promise<null> {
    return null;
  }

  private knowledgeRows: KnowledgeRows | null = null;

  /** The tenant's knowledge rows (knowledge_files, knowledge_chunks). */
  async knowledge(): Promise<KnowledgeStore> {
    this.knowledgeRows ??= new KnowledgeRows(this.pool, this.tenant, () => this.known.getStore());
    return this.knowledgeRows;
  }

  async vectors(): Promise<VectorStore> {
    throw new MnemeError('refused', 'the postgres store has no vector arm', {
      hint: 'unset MNEME_EMBEDDER (or pass --embedder off) to recall lexically; the vector arm runs on the embedded store (--store / MNEME_HOME)',
    });
  }

  // ---- the journal's chain ----------------------------------------------------------------

  /** The whole chain against the head row, read in one snapshot (no side effects). */
  private async evaluate(): Promise<Evaluation> {
    return evaluate(this.tenant, this.tx.getStore(), this.pool, this.location);
  }

  /**
   * A break found here is recorded in the head row (every write then refuses); a chain that
   * verifies again lifts an earlier record. Both are judged again under the write lock.
   */
  async verifyJournal(): Promise<VerifyReport> {
    const first = await this.evaluate();
    if (!first.problem && !first.head?.broken) return reportOf(first.scan, first.problem);
    return this.withWriteLock(async () => {
      this.forget();
      const ev = await this.evaluate();
      const want = ev.problem ? JSON.stringify(ev.problem) : null;
      if (ev.head && ev.head.broken !== want)
        await this.q('UPDATE journal_head SET broken = $2 WHERE tenant_id = $1', [
          this.tenant,
          want,
        ]);
      return reportOf(ev.scan, ev.problem);
    });
  }

  async anchor(): Promise<JournalAnchor> {
    return anchorOf(this.query, this.tenant);
  }

  async diagnoseJournal(): Promise<JournalDamage> {
    return damageFor(await this.evaluate());
  }

  async repairJournal(req: RepairRequest): Promise<RepairReport> {
    return this.withWriteLock(async () => {
      this.forget();
      return repairIn(this.tx.getStore()!, this.tenant, req, () => this.evaluate());
    });
  }

  // ---- integrity, reindex and rebuild ----------------------------------------------------------------------------

  /**
   * There are no files behind this store: the revision rows are the truth. Rebuild re-derives
   * every derived column (lineage states, the memories table, the full-text columns and hence
   * the tsvector) from the stored revisions, lineage by lineage, in one transaction.
   */
  async rebuild(onProgress?: (done: number, total: number) => void): Promise<RebuildReport> {
    await this.settleUsage();
    return this.withWriteLock(async () => {
      this.forget();
      const c = this.tx.getStore()!;
      const lineages = await rederiveLineages(c, this.tenant, onProgress);
      await derived.replayDerived(c, this.tenant);
      return {
        ...lineages,
        journalEntries: await reads.count(this.query, this.tenant, 'journal'),
        usageEvents: await reads.count(this.query, this.tenant, 'usage_events'),
        handEdits: [],
      };
    });
  }

  async integrity(opts: IntegrityOptions = {}): Promise<IntegrityFinding[]> {
    await this.settleUsage();
    const verified = await this.verifyJournal();
    return integrityFindings(this.db, this.tenant, verified, opts);
  }

  async reindex(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.withWriteLock(async () => {
      this.forget();
      await rederiveLineages(this.tx.getStore()!, this.tenant, undefined, ids);
    });
  }

  async purge(req: PurgeRequest): Promise<PurgeReport> {
    // Usage rows carry queries: the purge rewrites them, so none may still be on its way.
    await this.settleUsage();
    const report = await this.withWriteLock(async () => {
      // The purge commits (reading the head itself), rewrites journal rows and drops tombstones.
      this.forget();
      this.tombstonesMoved = true;
      const c = this.tx.getStore()!;
      await c.query('SAVEPOINT mneme_purge');
      try {
        return await purgeIn(c, this.tenant, req);
      } catch (e) {
        await c.query('ROLLBACK TO SAVEPOINT mneme_purge');
        throw fromDb(e);
      } finally {
        this.forget();
      }
    });
    // Once the transaction commits, the old row versions are vacuumed away.
    this.afterCommit.push(() => vacuumAfterPurge(this.pool, this.tenant));
    return report;
  }

  async finishPurge(id: string): Promise<string[]> {
    await this.settleUsage();
    await this.withWriteLock(async () => {
      this.forget();
      await rederiveLineages(this.tx.getStore()!, this.tenant, undefined, [id]);
      this.afterCommit.push(() => vacuumAfterPurge(this.pool, this.tenant));
    });
    return ['table:memories', 'table:revisions'];
  }

  async purgeSecret(create: boolean): Promise<string | null> {
    return purgeSecretRow(this.db, this.tenant, create);
  }

  async scan(visit: (place: ScanPlace, text: string) => void): Promise<void> {
    await this.settleUsage();
    await scanRows(this.db, this.tenant, visit);
  }

  async status(scopes?: string[]): Promise<StoreStatus> {
    return reads.status(this.query, this.tenant, this.location, scopes);
  }

  async close(): Promise<void> {
    await this.queue.catch(() => {});
    await this.settleTombstoneIndexes();
    await this.usageBatch?.close();
    if (this.ownsPool) await this.pool.end();
  }
}

/** Tombstones in key order (code point order, as the lookup statement's COLLATE "C"). */
function byKey(ts: Tombstone[]): Tombstone[] {
  return ts.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** pgvector is used only when the server has it (DESIGN §7: lexical retrieval stands alone). */
export async function detectVector(db: Pick<pg.Pool, 'query'>): Promise<boolean> {
  const { rows } = await db.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
  return rows.length > 0;
}
