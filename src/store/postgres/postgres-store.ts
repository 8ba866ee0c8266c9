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
  entryHashValid,
  judgeChain,
  passphraseSetBy,
  verifyChain,
  type AnchorRecord,
  type ChainHead,
  type ChainProblem,
  type ChainScan,
  type JournalEntry,
  type PassphraseRecord,
} from '../../core/journal.js';
import type { Tombstone } from '../../core/normalize.js';
import type { Proposal } from '../../core/proposal.js';
import type { QueryTerm } from '../../core/text.js';
import type { RevisionView } from '../../core/types.js';
import type {
  CommitRequest,
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
  UsageEvent,
  VerifyReport,
} from '../port.js';
import { connectionError, pgError, redactUrl } from './errors.js';
import { rederiveLineages, writeRevision } from './lineage-rows.js';
import { migrate } from './schema.js';
import { Params, VIEW_COLUMNS, eligibleSql, toView, tsQuery, type ViewRow } from './sql.js';
import { tenantExists } from './tenants.js';
import {
  chainRefused,
  damageOf,
  repairBody,
  reportOf,
  restoredPassphraseBody,
} from '../journal-guard.js';

const HEAD_NAME = 'the journal head row';

interface HeadRow {
  seq: string;
  hash: string;
  passphrase: string | null;
  broken: string | null;
}

interface Evaluation {
  head: HeadRow | null;
  anchor: AnchorRecord | null;
  scan: ChainScan;
  problem: ChainProblem | null;
  /** The highest seq of any row (an unreadable last row is past the scan's tail). */
  maxSeq: number;
}

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
    // The chain head, row-locked (even a writer that skipped the advisory lock would queue
    // here), with the journal's last row beside it: in one round trip, by primary key, the tail
    // is checked against its anchor before anything is written.
    const { rows } = await c.query<TailRow>(
      `WITH h AS (SELECT seq, hash, passphrase, broken FROM journal_head
                  WHERE tenant_id = $1 FOR UPDATE)
       SELECT h.seq AS h_seq, h.hash AS h_hash, h.passphrase AS h_pp, h.broken AS h_broken,
              t.seq AS t_seq, t.entry AS t_entry,
              (h.seq IS NULL AND t.seq IS NULL
                 AND EXISTS (SELECT 1 FROM memories m WHERE m.tenant_id = $1)) AS orphaned
       FROM (SELECT 1) one
       LEFT JOIN h ON true
       LEFT JOIN LATERAL (SELECT seq, entry FROM journal WHERE tenant_id = $1
                          ORDER BY seq DESC LIMIT 1) t ON true`,
      [t],
    );
    const row = rows[0]!;
    const bad = tailProblem(row);
    if (bad) throw chainRefused(bad);
    const head: ChainHead =
      row.h_seq !== null ? { seq: Number(row.h_seq), hash: row.h_hash! } : EMPTY_HEAD;
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
    await this.appendRow(c, entry, passphraseSetBy(entry) ?? parsePassphrase(row.h_pp));
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

  /** One journal row and the head row moved to it, in one statement (one transaction). */
  private async appendRow(
    c: Queryable,
    entry: JournalEntry,
    passphrase: PassphraseRecord | null,
  ): Promise<void> {
    await c.query(
      `WITH j AS (
         INSERT INTO journal(tenant_id, seq, at, op, actor_kind, target_id, idem, entry)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING tenant_id, seq)
       INSERT INTO journal_head(tenant_id, seq, hash, passphrase, broken)
       SELECT tenant_id, seq, $9, $10, NULL FROM j
       ON CONFLICT (tenant_id) DO UPDATE
         SET seq = EXCLUDED.seq, hash = EXCLUDED.hash, passphrase = EXCLUDED.passphrase,
             broken = NULL`,
      [
        this.tenant,
        entry.seq,
        entry.at,
        entry.op,
        entry.actor.kind,
        entry.target?.id ?? null,
        entry.idem,
        JSON.stringify(entry),
        entry.hash,
        passphrase ? JSON.stringify({ salt: passphrase.salt, hash: passphrase.hash }) : null,
      ],
    );
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

  /** The whole chain against the head row, read in one snapshot (no side effects). */
  private async evaluate(): Promise<Evaluation> {
    const run = async (db: Queryable) => {
      const h = await db.query<HeadRow>(
        'SELECT seq, hash, passphrase, broken FROM journal_head WHERE tenant_id = $1',
        [this.tenant],
      );
      const j = await db.query<{ entry: string; seq: string }>(
        'SELECT seq, entry FROM journal WHERE tenant_id = $1 ORDER BY seq',
        [this.tenant],
      );
      const m = await db.query<{ x: boolean }>(
        'SELECT EXISTS (SELECT 1 FROM memories WHERE tenant_id = $1) AS x',
        [this.tenant],
      );
      return { head: h.rows[0] ?? null, rows: j.rows, hasData: m.rows[0]?.x === true };
    };
    const inTx = this.tx.getStore();
    let got: Awaited<ReturnType<typeof run>>;
    if (inTx) got = await run(inTx);
    else {
      // One snapshot, so a commit landing between the statements cannot look like a cut tail.
      const client = await this.pool.connect().catch((e: unknown) => {
        throw connectionError(e, this.location);
      });
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        got = await run(client);
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK').catch(() => {});
        throw fromDb(e);
      } finally {
        client.release();
      }
    }
    const { head, rows, hasData } = got;
    const anchor: AnchorRecord | null = head
      ? { seq: Number(head.seq), hash: head.hash, passphrase: parsePassphrase(head.passphrase) }
      : null;
    const parsed = function* () {
      for (const r of rows) {
        let entry: JournalEntry | null = null;
        try {
          entry = JSON.parse(r.entry) as JournalEntry;
          if (typeof entry?.seq !== 'number' || typeof entry.hash !== 'string') entry = null;
        } catch {
          entry = null;
        }
        yield { entry, where: `journal #${r.seq}`, raw: r.entry };
      }
    };
    const scan = verifyChain(parsed(), { anchor });
    const problem = judgeChain(scan, anchor, {
      allowExtension: false,
      hasData: () => hasData,
      name: HEAD_NAME,
    });
    const maxSeq = rows.length ? Number(rows[rows.length - 1]!.seq) : 0;
    return { head, anchor, scan, problem, maxSeq };
  }

  /**
   * A break found here is recorded in the head row (every write then refuses); a chain that
   * verifies again lifts an earlier record. Both are judged again under the write lock.
   */
  async verifyJournal(): Promise<VerifyReport> {
    const first = await this.evaluate();
    if (!first.problem && !first.head?.broken) return reportOf(first.scan, first.problem);
    return this.withWriteLock(async () => {
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
    const { rows } = await this.q<HeadRow & { any: boolean }>(
      `SELECT h.seq, h.hash, h.passphrase, h.broken,
              EXISTS (SELECT 1 FROM journal WHERE tenant_id = $1) AS any
       FROM (SELECT 1) one LEFT JOIN journal_head h ON h.tenant_id = $1`,
      [this.tenant],
    );
    const h = rows[0]!;
    if (h.seq !== null)
      return {
        present: true,
        head: { seq: Number(h.seq), hash: h.hash },
        passphrase: parsePassphrase(h.passphrase),
      };
    return h.any ? { present: false } : { present: true, head: EMPTY_HEAD, passphrase: null };
  }

  async diagnoseJournal(): Promise<JournalDamage> {
    return damageFor(await this.evaluate());
  }

  async repairJournal(req: RepairRequest): Promise<RepairReport> {
    return this.withWriteLock(async () => {
      const c = this.tx.getStore()!;
      const ev = await this.evaluate();
      const damage = damageFor(ev);
      if (damage.ok) return { damage, entries: [] };
      if (ev.maxSeq > ev.scan.tail.seq)
        throw new MnemeError(
          'refused',
          `the journal's last row (#${ev.maxSeq}) is unreadable, so a repair entry has nothing to chain to`,
          { hint: 'restore that row from a backup, or delete it by hand, then repair again' },
        );
      const bodies = [repairBody(damage, req, HEAD_NAME)];
      if (damage.restorePassphrase)
        bodies.push(restoredPassphraseBody(damage.restorePassphrase, req));
      let tail = ev.scan.tail;
      let pp = damage.journalPassphrase;
      const entries: JournalEntry[] = [];
      for (const body of bodies) {
        const entry = chainEntry(tail, body);
        pp = passphraseSetBy(entry) ?? pp;
        await this.appendRow(c, entry, pp);
        entries.push(entry);
        tail = { seq: entry.seq, hash: entry.hash };
      }
      const after = await this.evaluate();
      if (after.problem)
        throw new MnemeError('internal', `the repair did not verify: ${after.problem.problem}`);
      return { damage, entries };
    });
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

interface TailRow {
  h_seq: string | null;
  h_hash: string | null;
  h_pp: string | null;
  h_broken: string | null;
  t_seq: string | null;
  t_entry: string | null;
  orphaned: boolean;
}

/** The journal's last row against the head row (O(1)); null when they agree. */
function tailProblem(row: TailRow): ChainProblem | null {
  if (row.h_broken !== null) {
    try {
      const p = JSON.parse(row.h_broken) as ChainProblem;
      if (typeof p?.problem === 'string') return p;
    } catch {
      /* fall through */
    }
    return { seq: null, position: 0, problem: 'a chain break was recorded' };
  }
  const tailSeq = row.t_seq === null ? null : Number(row.t_seq);
  if (row.h_seq === null) {
    if (tailSeq === null)
      return row.orphaned
        ? {
            seq: 1,
            position: 1,
            problem: `the journal and ${HEAD_NAME} are both missing, but the tenant holds memories (the journal was deleted)`,
          }
        : null;
    return {
      seq: tailSeq + 1,
      position: tailSeq + 1,
      problem: `${HEAD_NAME} is missing, so nothing shows whether entries were cut from the journal's tail`,
    };
  }
  const headSeq = Number(row.h_seq);
  if (tailSeq === null || tailSeq < headSeq)
    return {
      seq: (tailSeq ?? 0) + 1,
      position: (tailSeq ?? 0) + 1,
      problem:
        tailSeq === null
          ? `${HEAD_NAME} records seq ${headSeq} but the journal is empty (its entries were deleted)`
          : `${HEAD_NAME} records seq ${headSeq} but the journal ends at seq ${tailSeq} (entries were deleted from the tail)`,
    };
  if (tailSeq > headSeq)
    return {
      seq: headSeq + 1,
      position: headSeq + 1,
      problem: `the journal runs past ${HEAD_NAME} (seq ${headSeq}) to seq ${tailSeq}`,
    };
  let e: JournalEntry | null = null;
  try {
    e = JSON.parse(row.t_entry ?? '') as JournalEntry;
  } catch {
    e = null;
  }
  if (!e || e.seq !== tailSeq || e.hash !== row.h_hash || !entryHashValid(e))
    return {
      seq: tailSeq,
      position: tailSeq,
      problem: `the journal's last entry (seq ${tailSeq}) does not match ${HEAD_NAME}: it was replaced or edited`,
    };
  return null;
}

function parsePassphrase(text: string | null): PassphraseRecord | null {
  if (text === null) return null;
  try {
    const p = JSON.parse(text) as Partial<PassphraseRecord>;
    return typeof p.salt === 'string' && typeof p.hash === 'string'
      ? { salt: p.salt, hash: p.hash }
      : null;
  } catch {
    return null;
  }
}

function damageFor(ev: Evaluation): JournalDamage {
  const d = damageOf(ev.scan, ev.anchor, ev.problem);
  // A recorded break nothing shows any more still needs a person's word to lift it.
  return d.ok && ev.head?.broken ? { ...d, ok: false } : d;
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
