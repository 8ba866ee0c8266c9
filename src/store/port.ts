// The Store port: what the engine needs from a backend. The engine decides *what* to write
// (validation, screening, tombstones, trust); an adapter decides *how* to persist it durably and
// how to express the eligibility predicate inside its own queries. Every method is required and
// holds on every adapter; what genuinely differs is the small `capabilities` set (a vector arm,
// hand-editable files), and a method behind a missing capability gives the backend's true answer
// (handEdited: null) or a refusal that says what to do (vectors). The session archive is part
// of the port (`sessions`, store/sessions.ts). Every adapter passes the conformance suite in
// test/store-conformance.ts; a behaviour not in that suite is not in the port.
import type { Eligibility } from '../core/eligibility.js';
import type {
  AcknowledgedBreak,
  ChainHead,
  ChainProblem,
  JournalBody,
  JournalEntry,
  PassphraseRecord,
} from '../core/journal.js';
import type { Tombstone, TombstoneProbe } from '../core/normalize.js';
import type { Proposal } from '../core/proposal.js';
import type { FeedbackChoice, RankingModel } from '../core/ranking.js';
import type { QueryTerm } from '../core/text.js';
import type { Actor, Revision, RevisionView } from '../core/types.js';
import type { ArtifactStore } from './artifacts.js';
import type { SessionStore } from './sessions.js';

/**
 * A lexical search. Every adapter returns the same list for the same rows: the candidates and
 * order of the ranking model (core/ranking.ts rankCandidates — rare-term narrowing by document
 * frequency, then BM25 over the index tokens of core/text.ts), computed from the counts the
 * adapter reads (per-field term counts, lengths, document frequencies, rows and tokens).
 */
export interface SearchRequest {
  terms: QueryTerm[];
  eligibility: Eligibility;
  /** Size of the candidate pool handed to the ranker. */
  limit: number;
  /**
   * How many results the caller will show: the narrowed candidate query (very common terms left
   * out) stands only while it finds at least this many eligible rows (0: first budget only).
   */
  want?: number;
  /** Field weights and narrowing budgets (default DEFAULT_RANKING). */
  model?: RankingModel;
  /**
   * The terms are offered best first (feedback): search only the first `maxTerms` of those that
   * weigh (core/ranking.ts termsThatWeigh, from the store's document frequencies).
   */
  maxTerms?: number;
  /** With maxTerms: how to choose the terms searched (core/ranking.ts termsThatWeigh). */
  feedback?: FeedbackChoice;
}

/** What ranking needs of a candidate, available without reading the whole revision. */
export type HitHead = Pick<RevisionView, 'id' | 'rev' | 'recorded_at' | 'trust' | 'valid_from'>;

export interface SearchHit {
  head: HitHead;
  /** The whole revision; an adapter may read it lazily, so rank on `head` and read this last. */
  readonly view: RevisionView;
  /** Lexical relevance (the model's BM25), higher is better. */
  relevance: number;
  /** Usage-derived weight (1 when there is no usage). */
  weight: number;
}

/** A vector-arm candidate: eligible, with its cosine distance to the query (lower is nearer). */
export interface VectorHit extends SearchHit {
  distance: number;
}

/** A revision's vector as the vector arm stores it (keyed by revision; `hash` names its text). */
export interface StoredVector {
  id: string;
  rev: number;
  hash: string;
  vector: Float32Array;
}

/**
 * The optional vector arm's storage (an index cache, like the lexical index). Keys are
 * `vectorKey(model, dim)` strings; an adapter never compares vectors of two keys.
 */
export interface VectorStore {
  /**
   * Eligible candidates nearest to `query`: the same eligibility predicate as `search`, inside
   * the same statement, before ranking — a vector never brings back an ineligible revision.
   */
  search(
    key: string,
    query: Float32Array,
    eligibility: Eligibility,
    limit: number,
  ): Promise<VectorHit[]>;
  /**
   * Nearest revisions in the given scopes with no other eligibility applied, nearest first (the
   * exclusion trace only). The scope is a predicate inside the query: a binding never learns
   * another project's ids.
   */
  nearest(key: string, query: Float32Array, scopes: string[], limit: number): Promise<VectorHit[]>;
  /** Revisions in these scopes that could become eligible and have no vector under `key`, newest first. */
  missing(key: string, scopes: string[], limit: number): Promise<RevisionView[]>;
  /** Vectors already computed for these text hashes under `key` (so no model is asked twice). */
  cached(key: string, hashes: string[]): Promise<Map<string, Float32Array>>;
  put(key: string, vectors: StoredVector[]): Promise<void>;
  /** Drops vectors whose revision is gone or whose text no longer hashes to what was stored. */
  prune(key: string, hashOf: (v: RevisionView) => string): Promise<number>;
  /** How many revisions there are in these scopes, and how many of them have a vector under `key`. */
  count(key: string, scopes: string[]): Promise<{ revisions: number; withVector: number }>;
  /** Keys (models at dimensions) that have stored vectors. */
  keys(): Promise<string[]>;
}

/** One file the knowledge index holds (a repository document), by project-relative path. */
export interface KnowledgeFile {
  path: string;
  /** CHUNKER_VERSION + the file's sha256: a refresh re-chunks a file only when this moved. */
  hash: string;
  bytes: number;
  chunks: number;
  /** Why the file has no chunks (a secret found, binary, too large), or null when indexed. */
  skipped: string | null;
}

/** One stored chunk of a document (core/knowledge.ts Chunk, with its file). */
export interface KnowledgeChunkRow {
  path: string;
  ord: number;
  line_from: number;
  line_to: number;
  trail: string;
  text: string;
}

export interface KnowledgeHit extends KnowledgeChunkRow {
  /** The file hash the chunk was cut from. */
  hash: string;
  /** The index tokens of the trail and of the text, as stored (core/text.ts indexText). */
  trail_tokens: string;
  text_tokens: string;
}

/**
 * The knowledge index (a cache of the repository's documents, never memory: no journal, no
 * trust, no tombstones). Every call names one project scope, applied as a predicate inside the
 * query: a project's chunks are never read under another scope. Deleting it loses nothing.
 */
export interface KnowledgeStore {
  files(scope: string): Promise<KnowledgeFile[]>;
  /**
   * In one transaction: each `put` file's chunks replace the ones stored for its path (and its
   * file row), each `remove` path loses its file row and chunks. Returns the chunk counts.
   */
  change(
    scope: string,
    put: { file: KnowledgeFile; chunks: KnowledgeChunkRow[] }[],
    remove: string[],
  ): Promise<{ added: number; removed: number }>;
  /** Chunks of `scope` matching any term (the index tokens of core/text.ts), best first. */
  search(scope: string, terms: QueryTerm[], limit: number): Promise<KnowledgeHit[]>;
  /** Drops every file and chunk of `scope`; returns how many chunks went. */
  clear(scope: string): Promise<number>;
  /** Bytes the knowledge index takes on disk (all scopes), when the backend can tell. */
  size(): Promise<number | null>;
}

export interface CommitRequest {
  /** The journal entry, minus its chain fields; the adapter chains it under its lock. */
  body: JournalBody;
  /** The new revision to persist, or null for entries that change no memory (refusals…). */
  revision: Revision | null;
  /** Arm a tombstone, or lift one (by key and scope). Tombstones are truth, never expire. */
  tombstone?: { arm: Tombstone } | { lift: { key: string; scope: string } };
  /** The new full state of a proposal (created or decided). */
  proposal?: Proposal;
}

/**
 * A person's purge (engine/purge.ts decided it): erase the text of these revisions from every
 * place the store keeps it, under the write lock, and journal it.
 */
export interface PurgeRequest {
  /** The purge entry, minus its chain fields; the adapter adds `data.redacted` (core/journal.ts). */
  body: JournalBody;
  id: string;
  /** The skeleton each purged revision is rewritten to (core/purge.ts skeletonOf). */
  skeletons: Revision[];
  /** The clear texts to erase (core/purge.ts purgeNeedles): in memory for this call only. */
  needles: string[];
  /** The purge tombstone (keyed hashes only), armed by the purge entry. */
  tombstone: Tombstone;
}

export interface PurgeReport {
  entry: JournalEntry;
  /** Earlier journal entries rewritten to erase the value (each vouched for by the entry). */
  redactedEntries: number[];
  /** Other places rewritten: files under the store, or `table:<name>` rows on Postgres. */
  places: string[];
}

/** One place `scan` hands over: a file (and line) under the store, or a table's row. */
export interface ScanPlace {
  where: string;
  id?: string;
  rev?: number;
  line?: number;
}

export interface ProposalQuery {
  state?: Proposal['state'];
  scopes?: string[];
  id?: string;
}

export interface InjectQuery {
  scopes: string[];
  now: string;
  limit: number;
  /** Only these types… */
  types?: string[];
  /**
   * …or, for a file about to be edited: memories bound to this source path, and memories of
   * `types` that carry applies_to globs (the caller matches the globs).
   */
  sourcePath?: string;
  excludeTypes?: string[];
}

export interface UsageEvent {
  at: string;
  kind: 'recall' | 'read' | 'inject' | 'cite' | 'ignored' | 'feedback';
  ids: string[];
  actor: string;
  query?: string;
  scope?: string;
  value?: number;
}

export interface JournalQuery {
  afterSeq?: number;
  limit?: number;
  id?: string;
  actorKind?: string;
  op?: string;
  /** Newest first when true. */
  reverse?: boolean;
}

export interface VerifyReport {
  ok: boolean;
  entries: number;
  head: ChainHead;
  firstBad: { seq: number | null; position: number; problem: string } | null;
  /** Breaks a person acknowledged with `mneme journal repair` (the chain verifies with them). */
  repaired?: { seq: number | null; position: number; problem: string }[];
}

/**
 * What a store keeps apart from its journal (files: journal/HEAD; Postgres: the journal_head
 * row): the head it last committed and the review passphrase as of that head, so neither can be
 * dropped by cutting the journal. `passphrase` is undefined when the anchor predates recording
 * it; `present: false` means the anchor is missing on a journal that has entries.
 */
export type JournalAnchor =
  { present: false } | { present: true; head: ChainHead; passphrase?: PassphraseRecord | null };

/** What `mneme journal repair` would acknowledge and re-anchor (nothing when `ok`). */
export interface JournalDamage {
  ok: boolean;
  firstBad: ChainProblem | null;
  /** Lines read, and the last readable entry (the repair entry chains to it). */
  lines: number;
  tail: ChainHead;
  /** Breaks inside the journal: entries deleted from the middle, edited, reordered, unreadable. */
  breaks: AcknowledgedBreak[];
  /** Entries the anchor recorded that the journal no longer holds (cut from the tail). */
  lostTail: { fromSeq: number; toSeq: number; anchorHash: string } | null;
  /** The anchor: intact, missing (or unreadable), or naming an entry the journal no longer holds. */
  anchor: 'ok' | 'missing' | 'replaced';
  /** The anchored review passphrase, when the journal no longer sets it (the repair re-records it). */
  restorePassphrase: PassphraseRecord | null;
  /** The passphrase the journal sets as it stands (after the repair, when nothing is restored). */
  journalPassphrase: PassphraseRecord | null;
}

export interface RepairRequest {
  at: string;
  actor: Actor;
  reason: string;
}

export interface RepairReport {
  damage: JournalDamage;
  /** The entries the repair appended: the `journal_repair` entry, then any re-recorded setting. */
  entries: JournalEntry[];
}

export interface RebuildReport {
  memories: number;
  revisions: number;
  journalEntries: number;
  usageEvents: number;
  problems: string[];
  /** Memory files that differ from their recorded revision (hand edits). */
  handEdits: { path: string; id: string | null; text: string }[];
}

/** A bound memory's journaled freshness (the last check_source entry about it). */
export interface FreshnessRecord {
  /** The revision it was observed for; a newer revision was bound fresh by the engine. */
  rev: number;
  freshness: 'fresh' | 'drifted' | 'missing';
  observed_sha: string | null;
  at: string;
}

/** How fsck's integrity phase runs (see `integrity`). */
export interface IntegrityOptions {
  /** Check every revision, ignoring the marks of earlier runs (the marks are rewritten). */
  full?: boolean;
  /** Filled in by the check: lineages read and checked, and skipped as unchanged. */
  stats?: { checked: number; skipped: number };
}

/** What an adapter's own integrity check found (fsck's first phase). */
export interface IntegrityFinding {
  kind:
    | 'journal_chain'
    | 'revision_hash'
    | 'revision_unreadable'
    | 'revision_unjournaled'
    | 'index_stale'
    | 'index_missing'
    | 'orphan_file'
    | 'half_done_write'
    | 'hand_edit'
    | 'proposal_unreadable';
  severity: 'error' | 'warning' | 'info';
  memory?: string;
  rev?: number;
  path?: string;
  message: string;
  /** For a hand edit: the file's current text (recorded through the write path by the fix). */
  text?: string;
}

/** What a store holds: all of it, or (`status(scopes)`) only the memories of those scopes. */
export interface StoreStatus {
  backend: string;
  location: string;
  memories: number;
  activeMemories: number;
  revisions: number;
  journalHead: ChainHead;
  byScope: Record<string, number>;
  byType: Record<string, number>;
}

/**
 * What genuinely differs between adapters; everything else in the port holds on every store.
 * Checked where it is used, with a refusal that says what, why and what to do.
 */
export interface StoreCapabilities {
  /** A vector arm (sqlite-vec in the embedded index). Postgres: false, recall is lexical. */
  vectors: boolean;
  /** Memory files a person can edit by hand (handEdited can answer). Postgres: false. */
  handEdits: boolean;
}

export interface Store {
  readonly backend: string;
  readonly capabilities: StoreCapabilities;
  /**
   * Runs fn holding the store's exclusive write lock (cross-process). The section is a group
   * commit: every `commit` inside it becomes durable together when it ends — one journal sync on
   * files (store/files/commit.ts), one transaction on Postgres — and before it returns, so a
   * caller acknowledges a write only after this resolves (`Engine.apply(ops)` is one section).
   * Inside, a later commit sees what an earlier one wrote. A concurrent caller of the same
   * process may be run inside an open section (joining its sync); its result is its own.
   */
  withWriteLock<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Persists the revision (if any) and appends the chained journal entry: the commit point,
   * durable once the surrounding write-lock section returns (see withWriteLock).
   * Refuses (code `refused`, details.chain = 'broken') when the journal's tail does not match
   * its anchor or a break was recorded — checked in time independent of the store's size.
   */
  commit(req: CommitRequest): Promise<JournalEntry>;
  getLineage(id: string): Promise<RevisionView[] | null>;
  /** The current revision of the live lineage holding (scope, type, slug), if any. */
  findLiveBySlug(scope: string, type: string, slug: string): Promise<RevisionView | null>;
  /** The journal entry that recorded an idempotency key, if any. */
  findIdempotent(key: string): Promise<JournalEntry | null>;
  /** Eligible candidates only: the predicate is applied inside the query, before ranking. */
  search(req: SearchRequest): Promise<SearchHit[]>;
  /**
   * Best lexical matches in the given scopes with no other eligibility applied (the exclusion
   * trace). The scope is a predicate inside the query: a binding never learns another
   * project's ids.
   */
  nearest(terms: QueryTerm[], scopes: string[], limit: number): Promise<SearchHit[]>;
  /** Current revisions of live lineages in the given scopes (export, injection, maintenance). */
  listCurrent(scopes: string[], opts?: { includeEnded?: boolean }): Promise<RevisionView[]>;
  journal(q: JournalQuery): Promise<JournalEntry[]>;
  /**
   * Armed (not lifted) tombstones of the given scopes. A store may answer the same (frozen) list
   * again while none changed, so what is built from it can be kept (engine/rejected-here.ts);
   * callers never change it.
   */
  tombstones(scopes: string[]): Promise<readonly Tombstone[]>;
  /**
   * The armed tombstones of `scope` that texts with this probe could run into (core/normalize.ts,
   * "Indexed lookup"): those keyed by one of its keys or indexed under one of its grams, in the
   * order `tombstones` lists them. Its cost follows the probe's size, not the scope's tombstones.
   */
  tombstoneCandidates(scope: string, probe: TombstoneProbe): Promise<Tombstone[]>;
  proposals(q: ProposalQuery): Promise<Proposal[]>;
  /** The usage log (state, not cache), oldest first. */
  usage(opts?: { since?: string }): Promise<UsageEvent[]>;
  /**
   * Verifies the whole chain against its anchor. A chain that does not verify is recorded, so
   * every later commit refuses at once until a person repairs it; one that verifies again (say,
   * restored from a backup) lifts that record.
   */
  verifyJournal(): Promise<VerifyReport>;
  /** The anchor kept apart from the journal (see JournalAnchor). */
  anchor(): Promise<JournalAnchor>;
  /** What a repair would do (read-only). */
  diagnoseJournal(): Promise<JournalDamage>;
  /**
   * A person's repair of a chain that does not verify (the engine checks the actor): under the
   * lock, appends a `journal_repair` entry acknowledging each break and recording what was lost,
   * re-records an anchored passphrase the journal lost, and re-anchors the journal to it.
   */
  repairJournal(req: RepairRequest): Promise<RepairReport>;
  appendUsage(events: UsageEvent[]): Promise<void>;
  /**
   * Injection candidates, heaviest first (weight, trust, recency, id): current, active, in the
   * scopes, valid at `now`, trust ≥ claimed, not quarantined, no review pending, not journaled
   * drifted or missing. A prefilter inside the query — the engine still decides each one with
   * autoInjectable — so the cost follows `limit`, not the store's size.
   */
  injectCandidates(q: InjectQuery): Promise<SearchHit[]>;
  /**
   * Usage-derived weights of these memories (absent ids weigh 1). Weights are a cache of the
   * usage log: committing a `sleep_pass` journal entry makes the adapter recompute the weights
   * of that pass's scopes with core/weight.ts at the entry's watermark (`data.weights_at`), and
   * `search`/`injectCandidates` hand them back on each hit; rebuild replays the same entries
   * the same way, so the weights after a rebuild equal the ones before it.
   */
  weights(ids: string[]): Promise<Map<string, number>>;
  /**
   * Journaled freshness of these memories: the last `check_source` verdict, or `fresh` from a
   * source-bound write newer than it. Absent ids were never observed.
   */
  freshness(ids: string[]): Promise<Map<string, FreshnessRecord>>;
  /**
   * The text of a memory's current file when it differs from the revision recorded for it (a
   * hand edit), else null. The write path asks before it overwrites the file. A store with no
   * files a person can edit (`capabilities.handEdits` false: Postgres) always answers null.
   */
  handEdited(current: Revision): Promise<{ path: string; text: string } | null>;
  /**
   * The adapter's own integrity checks (fsck's first phase): the journal chain against its
   * anchor, every stored revision against the hash its journal entry recorded, revisions no
   * journal entry records, and — on stores with a derived index or files — stale index rows,
   * orphan files, half-done writes and hand edits. Incremental unless `full`: the chain is
   * always verified whole, but a lineage unchanged since it was last checked clean (the store
   * keeps a mark of what it checked, saved at checkpoints so an interrupted run resumes) is
   * not read again.
   */
  integrity(opts?: IntegrityOptions): Promise<IntegrityFinding[]>;
  /** Re-derives what is derived about these lineages (index rows, lifecycle columns) from the truth. */
  reindex(ids: string[]): Promise<void>;
  rebuild(onProgress?: (done: number, total: number) => void): Promise<RebuildReport>;
  /**
   * The vector arm's storage, loaded on first use (never when the arm is off). A store without
   * one (`capabilities.vectors` false) refuses (code `refused`) with what to do instead.
   */
  vectors(): Promise<VectorStore>;
  /**
   * The knowledge index (files: its own SQLite database beside the index; Postgres: the
   * tenant's knowledge rows). Opened on first use; nothing is created until a refresh writes.
   */
  knowledge(): Promise<KnowledgeStore>;
  /** The session archive of this store (see store/sessions.ts): files, or the tenant's rows. */
  readonly sessions: SessionStore;
  /** Artifact bytes by hash (see store/artifacts.ts): files under the store, or the tenant's rows. */
  readonly artifacts: ArtifactStore;
  /**
   * The purge (DESIGN invariant 3): under the lock, appends the purge entry (arming its
   * tombstone, vouching for each earlier entry it rewrites), then erases the needles from every
   * place the store keeps text — the purged revisions become their skeletons, the journal,
   * tombstones, usage, session archive, session state, proposals, reports and the index (secure
   * delete, vacuum, checkpoint) — leaving other memories' revisions as they are.
   */
  purge(req: PurgeRequest): Promise<PurgeReport>;
  /**
   * A purged memory's erasure completed where no clear text is needed (a re-run `mneme purge`):
   * its rows re-derived from the skeletons and the old bytes compacted away (files: secure
   * delete, FTS merge, VACUUM, checkpoint; Postgres: VACUUM). Returns the places it touched.
   */
  finishPurge(id: string): Promise<string[]>;
  /**
   * The store's purge secret (the key of every purge tombstone's hashes), kept apart from the
   * journal and never exported: null when none exists and `create` is false.
   */
  purgeSecret(create: boolean): Promise<string | null>;
  /**
   * Every byte the store keeps, as text: files — every file under the store directory (the
   * SQLite database, its WAL and its free pages included), JSON lines one by one; Postgres —
   * every row of every table mneme owns, for this tenant. `purge --verify` and `--find` read it.
   */
  scan(visit: (place: ScanPlace, text: string) => void): Promise<void>;
  /**
   * What the store holds; with `scopes`, counted over those scopes only (a predicate inside the
   * query), which is what any binding is shown.
   */
  status(scopes?: string[]): Promise<StoreStatus>;
  close(): Promise<void>;
}
