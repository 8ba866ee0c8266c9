// The Postgres adapter (DESIGN §4, scale-out): one store object per tenant, every statement
// carrying `tenant_id = $1`. Revision rows are the truth; lifecycle columns and the tsvector are
// derived from them. withWriteLock opens one transaction on one connection, takes a per-tenant
// advisory lock, and runs fn with that connection in async-local context, so the reads and
// commits inside fn see one consistent state and every instance's writers queue on one lock.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { MnemeError } from '../../core/errors.js';
import {
  EMPTY_HEAD,
  chainEntry,
  verifyChain,
  type ChainHead,
  type JournalEntry,
} from '../../core/journal.js';
import type { Tombstone } from '../../core/normalize.js';
import type { Proposal } from '../../core/proposal.js';
import type { QueryTerm } from '../../core/text.js';
import type { RevisionView } from '../../core/types.js';
import type {
  CommitRequest,
  JournalQuery,
  ProposalQuery,
  RebuildReport,
  SearchHit,
  SearchRequest,
  Store,
  StoreStatus,
  UsageEvent,
  VerifyReport,
} from '../port.js';
import { connectionError, pgError, redactUrl } from './errors.js';
import { rederiveLineages, writeRevision } from './lineage-rows.js';
import { migrate } from './schema.js';
import { Params, VIEW_COLUMNS, eligibleSql, toView, tsQuery, type ViewRow } from './sql.js';
import { tenantExists } from './tenants.js';

export interface PostgresStoreOptions {
  tenant: string;
  /** Connections per instance (default 10). */
  poolSize?: number;
  /** How long a writer waits for the tenant's write lock (default 30 s). */
  lockTimeoutMs?: number;
}

type Queryable = Pick<pg.PoolClient, 'query'>;

/** Advisory lock class for per-tenant write locks (the object id is a hash of the tenant). */
const WRITE_LOCK_CLASS = 0x6d6e6d77; // "mnmw"

/** ts_rank_cd weights {D, C, B, A}: abstract 4 : tags/fields 2 : body 1, as the FTS5 bm25 call. */
const RANK = `ts_rank_cd('{0.1, 0.25, 0.5, 1.0}', r.tsv, tq.q, 1)`;

export class PostgresStore implements Store {
  readonly backend = 'postgres';
  readonly tenant: string;
  /**
   * Whether the server offers pgvector (feature-detected on open). The vector arm is not wired
   * into recall yet (no embedder in the engine); until then search is lexical either way.
   */
  vectorAvailable = false;
  private readonly tx = new AsyncLocalStorage<pg.PoolClient>();
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
    this.lockKey = createHash('sha256').update(opts.tenant).digest().readInt32BE(0);
    this.lockTimeoutMs = opts.lockTimeoutMs ?? 30_000;
  }

  /** Connects, applies pending migrations and checks the tenant exists. */
  static async open(url: string, opts: PostgresStoreOptions): Promise<PostgresStore> {
    const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? 10 });
    // An idle connection dropped by the server must not crash the process.
    pool.on('error', () => {});
    try {
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

  private async q<R extends pg.QueryResultRow>(text: string, values: unknown[] = []) {
    try {
      return await this.db.query<R>(text, values);
    } catch (e) {
      throw pgError(e);
    }
  }

  // ---- locking ----------------------------------------------------------------------------

  async withWriteLock<T>(fn: () => Promise<T>): Promise<T> {
    if (this.tx.getStore()) return fn();
    // Writers of this instance queue here, so at most one pooled connection waits on the lock.
    const prior = this.queue;
    let done!: () => void;
    this.queue = new Promise<void>((r) => (done = r));
    await prior.catch(() => {});
    try {
      return await this.inTransaction(fn);
    } finally {
      done();
    }
  }

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
      // One round trip; the SQL holds only numbers computed here, never text from a caller.
      try {
        await client.query(
          `BEGIN ISOLATION LEVEL READ COMMITTED;
           SET LOCAL lock_timeout = ${Math.max(1, Math.floor(this.lockTimeoutMs))};
           SELECT pg_advisory_xact_lock(${WRITE_LOCK_CLASS}, ${this.lockKey})`,
        );
      } catch (e) {
        throw pgError(e);
      }
      const out = await this.tx.run(client, fn);
      await client.query('COMMIT');
      return out;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw fromDb(e);
    } finally {
      client.release(broken);
    }
  }

  // ---- the write path's storage half ------------------------------------------------------

  async commit(req: CommitRequest): Promise<JournalEntry> {
    const client = this.tx.getStore();
    if (!client) throw new MnemeError('internal', 'commit called without the store lock');
    // Not released after success (saves a round trip): COMMIT releases them all, and a later
    // ROLLBACK TO goes back to the newest savepoint of that name only.
    await client.query('SAVEPOINT mneme_commit');
    try {
      return await this.commitIn(client, req);
    } catch (e) {
      // Keep the surrounding transaction usable (the engine journals the refusal next).
      await client.query('ROLLBACK TO SAVEPOINT mneme_commit');
      throw fromDb(e);
    }
  }

  private async commitIn(c: pg.PoolClient, req: CommitRequest): Promise<JournalEntry> {
    const t = this.tenant;
    // The chain head, row-locked: even a writer that skipped the advisory lock would queue here.
    const headRows = await c.query<{ seq: string; hash: string }>(
      'SELECT seq, hash FROM journal_head WHERE tenant_id = $1 FOR UPDATE',
      [t],
    );
    const headRow = headRows.rows[0];
    const head: ChainHead = headRow ? { seq: Number(headRow.seq), hash: headRow.hash } : EMPTY_HEAD;
    const r = req.revision;
    if (r) await writeRevision(c, this.tenant, r);
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
    const entry = chainEntry(head, body);
    await c.query(
      `WITH j AS (
         INSERT INTO journal(tenant_id, seq, at, op, actor_kind, target_id, idem, entry)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING tenant_id, seq)
       INSERT INTO journal_head(tenant_id, seq, hash) SELECT tenant_id, seq, $9 FROM j
       ON CONFLICT (tenant_id) DO UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash`,
      [
        t,
        entry.seq,
        entry.at,
        entry.op,
        entry.actor.kind,
        entry.target?.id ?? null,
        entry.idem,
        JSON.stringify(entry),
        entry.hash,
      ],
    );
    if (req.tombstone) {
      const [event, scope, key, doc] =
        'arm' in req.tombstone
          ? ['arm', req.tombstone.arm.scope, req.tombstone.arm.key, req.tombstone.arm]
          : ['lift', req.tombstone.lift.scope, req.tombstone.lift.key, req.tombstone.lift];
      await c.query(
        `INSERT INTO tombstone_events(tenant_id, journal_seq, event, scope, key, doc)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [t, entry.seq, event, scope, key, JSON.stringify(doc)],
      );
    }
    if (req.proposal) {
      const p = req.proposal;
      await c.query(
        `INSERT INTO proposals(tenant_id, id, scope, state, created_at, doc)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (tenant_id, id) DO UPDATE
           SET scope = EXCLUDED.scope, state = EXCLUDED.state, doc = EXCLUDED.doc`,
        [t, p.id, p.scope, p.state, p.created_at, JSON.stringify(p)],
      );
    }
    return entry;
  }

  // ---- reads ------------------------------------------------------------------------------

  async getLineage(id: string): Promise<RevisionView[] | null> {
    const { rows } = await this.q<ViewRow>(
      `SELECT ${VIEW_COLUMNS} FROM revisions r WHERE r.tenant_id = $1 AND r.id = $2 ORDER BY r.rev`,
      [this.tenant, id],
    );
    return rows.length === 0 ? null : rows.map(toView);
  }

  async findLiveBySlug(scope: string, type: string, slug: string): Promise<RevisionView | null> {
    // Through the memories table's unique live-slug index: one row, whatever the store's size
    // and whether or not the planner has statistics.
    const { rows } = await this.q<ViewRow>(
      `SELECT ${VIEW_COLUMNS} FROM memories m
       JOIN revisions r ON r.tenant_id = m.tenant_id AND r.id = m.id AND r.rev = m.current_rev
       WHERE m.tenant_id = $1 AND m.scope = $2 AND m.type = $3 AND m.slug = $4
         AND m.status = 'active'`,
      [this.tenant, scope, type, slug],
    );
    return rows[0] ? toView(rows[0]) : null;
  }

  async findIdempotent(key: string): Promise<JournalEntry | null> {
    const { rows } = await this.q<{ entry: string }>(
      'SELECT entry FROM journal WHERE tenant_id = $1 AND idem = $2 ORDER BY seq DESC LIMIT 1',
      [this.tenant, key],
    );
    return rows[0] ? (JSON.parse(rows[0].entry) as JournalEntry) : null;
  }

  async search(req: SearchRequest): Promise<SearchHit[]> {
    const q = req.eligibility;
    if (q.scopes.length === 0) return [];
    const p = new Params();
    const tenant = p.add(this.tenant);
    const tq = tsQuery(req.terms, p);
    if (tq === null) return [];
    const scopes = p.add(q.scopes);
    const eligible = eligibleSql(q, p);
    return this.hits(
      `SELECT ${VIEW_COLUMNS}, ${RANK} AS rel, w.w
       FROM (SELECT ${tq} AS q) tq
       JOIN revisions r ON r.tsv @@ tq.q
       LEFT JOIN weights w ON w.tenant_id = r.tenant_id AND w.id = r.id
       WHERE r.tenant_id = ${tenant} AND r.scope = ANY(${scopes}::text[]) AND ${eligible}
       ORDER BY rel DESC, r.id, r.rev
       LIMIT ${p.add(req.limit)}`,
      p.values,
    );
  }

  async nearest(terms: QueryTerm[], scopes: string[], limit: number): Promise<SearchHit[]> {
    if (scopes.length === 0) return [];
    const p = new Params();
    const tenant = p.add(this.tenant);
    const inScopes = p.add(scopes);
    const tq = tsQuery(terms, p);
    if (tq === null) return [];
    return this.hits(
      `SELECT ${VIEW_COLUMNS}, ${RANK} AS rel, w.w
       FROM (SELECT ${tq} AS q) tq
       JOIN revisions r ON r.tsv @@ tq.q
       LEFT JOIN weights w ON w.tenant_id = r.tenant_id AND w.id = r.id
       WHERE r.tenant_id = ${tenant} AND r.scope = ANY(${inScopes}::text[])
       ORDER BY rel DESC, r.id, r.rev
       LIMIT ${p.add(limit)}`,
      p.values,
    );
  }

  private async hits(sql: string, values: unknown[]): Promise<SearchHit[]> {
    const { rows } = await this.q<ViewRow & { rel: number; w: number | null }>(sql, values);
    return rows.map((row) => {
      const view = toView(row);
      return { head: view, view, relevance: row.rel, weight: row.w ?? 1 };
    });
  }

  async listCurrent(
    scopes: string[],
    opts: { includeEnded?: boolean } = {},
  ): Promise<RevisionView[]> {
    if (scopes.length === 0) return [];
    const { rows } = await this.q<ViewRow>(
      `SELECT ${VIEW_COLUMNS} FROM revisions r
       WHERE r.tenant_id = $1 AND r.is_current AND r.scope = ANY($2::text[])
         ${opts.includeEnded ? '' : "AND r.status = 'active'"}
       ORDER BY r.id`,
      [this.tenant, scopes],
    );
    return rows.map(toView);
  }

  async journal(q: JournalQuery): Promise<JournalEntry[]> {
    const p = new Params();
    const where = [`tenant_id = ${p.add(this.tenant)}`];
    if (q.afterSeq !== undefined) where.push(`seq > ${p.add(q.afterSeq)}`);
    if (q.id) where.push(`target_id = ${p.add(q.id)}`);
    if (q.actorKind) where.push(`actor_kind = ${p.add(q.actorKind)}`);
    if (q.op) where.push(`op = ${p.add(q.op)}`);
    const limit = q.limit !== undefined ? `LIMIT ${p.add(q.limit)}` : '';
    const { rows } = await this.q<{ entry: string }>(
      `SELECT entry FROM journal WHERE ${where.join(' AND ')}
       ORDER BY seq ${q.reverse ? 'DESC' : 'ASC'} ${limit}`,
      p.values,
    );
    return rows.map((r) => JSON.parse(r.entry) as JournalEntry);
  }

  async tombstones(scopes: string[]): Promise<Tombstone[]> {
    if (scopes.length === 0) return [];
    const { rows } = await this.q<{ event: string; doc: string }>(
      `SELECT DISTINCT ON (scope, key) event, doc FROM tombstone_events
       WHERE tenant_id = $1 AND scope = ANY($2::text[])
       ORDER BY scope, key, seq DESC`,
      [this.tenant, scopes],
    );
    return rows.filter((r) => r.event === 'arm').map((r) => JSON.parse(r.doc) as Tombstone);
  }

  async proposals(q: ProposalQuery): Promise<Proposal[]> {
    const p = new Params();
    const where = [`tenant_id = ${p.add(this.tenant)}`];
    if (q.state) where.push(`state = ${p.add(q.state)}`);
    if (q.scopes) where.push(`scope = ANY(${p.add(q.scopes)}::text[])`);
    if (q.id) where.push(`id = ${p.add(q.id)}`);
    const { rows } = await this.q<{ doc: string }>(
      `SELECT doc FROM proposals WHERE ${where.join(' AND ')} ORDER BY created_at, id`,
      p.values,
    );
    return rows.map((r) => JSON.parse(r.doc) as Proposal);
  }

  async usage(opts: { since?: string } = {}): Promise<UsageEvent[]> {
    const { rows } = await this.q<{ doc: string }>(
      `SELECT doc FROM usage_events WHERE tenant_id = $1 AND ($2::text IS NULL OR at > $2)
       ORDER BY at, seq`,
      [this.tenant, opts.since ?? null],
    );
    return rows.map((r) => JSON.parse(r.doc) as UsageEvent);
  }

  async appendUsage(events: UsageEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.q(
      `INSERT INTO usage_events(tenant_id, at, kind, doc)
       SELECT $1, u.at, u.kind, u.doc FROM unnest($2::text[], $3::text[], $4::text[])
         WITH ORDINALITY AS u(at, kind, doc, n) ORDER BY u.n`,
      [
        this.tenant,
        events.map((e) => e.at),
        events.map((e) => e.kind),
        events.map((e) => JSON.stringify(e)),
      ],
    );
  }

  async verifyJournal(): Promise<VerifyReport> {
    const { rows } = await this.q<{ entry: string; seq: string }>(
      'SELECT seq, entry FROM journal WHERE tenant_id = $1 ORDER BY seq',
      [this.tenant],
    );
    const parsed = function* () {
      for (const r of rows) {
        let entry: JournalEntry | null = null;
        try {
          entry = JSON.parse(r.entry) as JournalEntry;
        } catch {
          entry = null;
        }
        yield { entry, where: `journal #${r.seq}` };
      }
    };
    const { problem, head, count } = verifyChain(parsed());
    if (problem) return { ok: false, entries: count, head, firstBad: problem };
    const recorded = await this.q<{ seq: string; hash: string }>(
      'SELECT seq, hash FROM journal_head WHERE tenant_id = $1',
      [this.tenant],
    );
    const rec = recorded.rows[0];
    if (rec && (Number(rec.seq) !== head.seq || rec.hash !== head.hash)) {
      return {
        ok: false,
        entries: count,
        head,
        firstBad: {
          seq: head.seq + 1,
          position: count + 1,
          problem: `the journal head records seq ${rec.seq} but the journal ends at seq ${head.seq} (entries were deleted or replaced)`,
        },
      };
    }
    return { ok: true, entries: count, head, firstBad: null };
  }

  // ---- rebuild ----------------------------------------------------------------------------

  /**
   * There are no files behind this store: the revision rows are the truth. Rebuild re-derives
   * every derived column (lineage states, the memories table, the full-text columns and hence
   * the tsvector) from the stored revisions, lineage by lineage, in one transaction.
   */
  async rebuild(onProgress?: (done: number, total: number) => void): Promise<RebuildReport> {
    return this.withWriteLock(async () => {
      const lineages = await rederiveLineages(this.tx.getStore()!, this.tenant, onProgress);
      return {
        ...lineages,
        journalEntries: await this.count('journal'),
        usageEvents: await this.count('usage_events'),
        handEdits: [],
      };
    });
  }

  private async count(table: 'journal' | 'usage_events'): Promise<number> {
    const { rows } = await this.q<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1`,
      [this.tenant],
    );
    return rows[0]?.n ?? 0;
  }

  async status(scopes?: string[]): Promise<StoreStatus> {
    // $2 is the scopes counted, or NULL for the whole tenant.
    const t = [this.tenant, scopes ?? null];
    const inScopes = '($2::text[] IS NULL OR scope = ANY($2::text[]))';
    const { rows } = await this.q<{ memories: number; active: number; revisions: number }>(
      `SELECT
         (SELECT count(*)::int FROM memories WHERE tenant_id = $1 AND ${inScopes}) AS memories,
         (SELECT count(*)::int FROM memories
           WHERE tenant_id = $1 AND status = 'active' AND ${inScopes}) AS active,
         (SELECT count(*)::int FROM revisions WHERE tenant_id = $1 AND ${inScopes}) AS revisions`,
      t,
    );
    const group = async (col: 'scope' | 'type') => {
      const r = await this.q<{ k: string; n: number }>(
        `SELECT ${col} AS k, count(*)::int AS n FROM memories
         WHERE tenant_id = $1 AND status = 'active' AND ${inScopes} GROUP BY ${col}`,
        t,
      );
      return Object.fromEntries(r.rows.map((x) => [x.k, x.n]));
    };
    const head = await this.q<{ seq: string; hash: string }>(
      'SELECT seq, hash FROM journal_head WHERE tenant_id = $1',
      [this.tenant],
    );
    const h = head.rows[0];
    return {
      backend: this.backend,
      location: `${this.location} (tenant ${this.tenant})`,
      memories: rows[0]?.memories ?? 0,
      activeMemories: rows[0]?.active ?? 0,
      revisions: rows[0]?.revisions ?? 0,
      journalHead: h ? { seq: Number(h.seq), hash: h.hash } : EMPTY_HEAD,
      byScope: await group('scope'),
      byType: await group('type'),
    };
  }

  async close(): Promise<void> {
    await this.queue.catch(() => {});
    if (this.ownsPool) await this.pool.end();
  }
}

/** pgvector is used only when the server has it (DESIGN §7: lexical retrieval stands alone). */
export async function detectVector(db: Pick<pg.Pool, 'query'>): Promise<boolean> {
  const { rows } = await db.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
  return rows.length > 0;
}

/** Database and connection errors get the store's vocabulary; anything else passes unchanged. */
function fromDb(e: unknown): unknown {
  const code = (e as { code?: unknown } | null)?.code;
  const socket = typeof code === 'string' && /^E[A-Z]+$/.test(code);
  return e instanceof pg.DatabaseError || socket ? pgError(e) : e;
}
