// The Postgres schema as ordered, versioned migrations, applied on open under a global advisory
// lock so several instances starting together migrate once. Every table is keyed by tenant_id;
// timestamps are ISO-8601 strings in COLLATE "C" so string order is time order, as in the
// embedded index. Revision rows are the truth; their lifecycle columns are derived (lineage.ts).
import type pg from 'pg';
import { MnemeError } from '../../core/errors.js';
import { tombstoneGram, type Tombstone } from '../../core/normalize.js';
import type { Revision } from '../../core/types.js';
import { ftsColumns } from './sql.js';
import { reindexTombstones } from './tombstone-rows.js';

/** Each entry is one migration; never edit a shipped one, append a new one. */
// 10: the tombstone lookup index (core/normalize.ts, "Indexed lookup"): each armed
// tombstone under the gram of its longest probe, so a write reads only the tombstones its texts
// could run into. Rows are only added (a lift is read from tombstone_events); the tombstones
// armed before are indexed in code after the SQL (indexTombstones).
const TOMBSTONE_GRAMS = `
CREATE TABLE tombstone_grams(
  tenant_id text COLLATE "C" NOT NULL REFERENCES tenants(name),
  scope text COLLATE "C" NOT NULL,
  gram text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  PRIMARY KEY (tenant_id, scope, gram, key)
);
`;

// 12: each tombstone's grams beside the one it is indexed under (store/postgres/tombstone-rows.ts):
// a write reads a row only to keep it when it holds all of them, and each tombstone is indexed
// under its gram with the fewest entries, so the rows a write reads stay few whatever the
// vocabulary. Every armed tombstone is indexed again in code after the SQL (reindexTombstones).
const TOMBSTONE_GRAMS_ALL = `
ALTER TABLE tombstone_grams ADD COLUMN grams text[] COLLATE "C" NOT NULL DEFAULT '{}';
`;

// 13: postings (store/postgres/search-rows.ts): per revision and index token, its occurrences
// in each field (abstract, body, extra) and the revision's length — what BM25 reads of a
// candidate, so a search reads its terms' postings by an index-only scan of the primary key
// and ranks in SQL instead of shipping every match's token texts. Kept by statement triggers on
// revisions (every writer: commits, lineage re-derivation, purges, migrations; a lifecycle
// update changes no text and rewrites nothing), backfilled here for the revisions already
// stored. Tokens are the space-separated index tokens of the fts_* columns, counted as
// core/ranking.ts countTokens counts them.
const POSTINGS = `
CREATE FUNCTION mneme_tokens(a text, b text, e text)
  RETURNS TABLE(tok text, ta integer, tb integer, te integer)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
  SELECT x.t, (count(*) FILTER (WHERE x.f = 1))::int, (count(*) FILTER (WHERE x.f = 2))::int,
         (count(*) FILTER (WHERE x.f = 3))::int
  FROM (SELECT t, 1 AS f FROM unnest(string_to_array(a, ' ')) t
        UNION ALL SELECT t, 2 FROM unnest(string_to_array(b, ' ')) t
        UNION ALL SELECT t, 3 FROM unnest(string_to_array(e, ' ')) t) x
  WHERE x.t <> ''
  GROUP BY x.t
$f$;
CREATE TABLE postings(
  tenant_id text COLLATE "C" NOT NULL,
  lexeme text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  rev integer NOT NULL,
  ta integer NOT NULL,
  tb integer NOT NULL,
  te integer NOT NULL,
  len integer NOT NULL
);
INSERT INTO postings(tenant_id, lexeme, id, rev, ta, tb, te, len)
SELECT r.tenant_id, k.tok, r.id, r.rev, k.ta, k.tb, k.te, r.fts_len
FROM revisions r, mneme_tokens(r.fts_abstract, r.fts_body, r.fts_extra) k;
ALTER TABLE postings ADD PRIMARY KEY (tenant_id, lexeme, id, rev) INCLUDE (ta, tb, te, len);
CREATE FUNCTION mneme_postings() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  -- Deleted by the primary key: the old text's tokens name its rows.
  IF TG_OP = 'INSERT' THEN
    INSERT INTO postings(tenant_id, lexeme, id, rev, ta, tb, te, len)
    SELECT n.tenant_id, k.tok, n.id, n.rev, k.ta, k.tb, k.te, n.fts_len
    FROM new_rows n, mneme_tokens(n.fts_abstract, n.fts_body, n.fts_extra) k;
  ELSIF TG_OP = 'DELETE' THEN
    DELETE FROM postings p USING (
      SELECT o.tenant_id, k.tok, o.id, o.rev
      FROM old_rows o, mneme_tokens(o.fts_abstract, o.fts_body, o.fts_extra) k) d
    WHERE p.tenant_id = d.tenant_id AND p.lexeme = d.tok AND p.id = d.id AND p.rev = d.rev;
  ELSE
    -- Only rows whose text changed (a lifecycle update changes none).
    DELETE FROM postings p USING (
      SELECT o.tenant_id, k.tok, o.id, o.rev
      FROM old_rows o JOIN new_rows n
        ON n.tenant_id = o.tenant_id AND n.id = o.id AND n.rev = o.rev
       AND (n.fts_abstract, n.fts_body, n.fts_extra) IS DISTINCT FROM
           (o.fts_abstract, o.fts_body, o.fts_extra),
      mneme_tokens(o.fts_abstract, o.fts_body, o.fts_extra) k) d
    WHERE p.tenant_id = d.tenant_id AND p.lexeme = d.tok AND p.id = d.id AND p.rev = d.rev;
    INSERT INTO postings(tenant_id, lexeme, id, rev, ta, tb, te, len)
    SELECT n.tenant_id, k.tok, n.id, n.rev, k.ta, k.tb, k.te, n.fts_len
    FROM new_rows n JOIN old_rows o
      ON n.tenant_id = o.tenant_id AND n.id = o.id AND n.rev = o.rev
     AND (n.fts_abstract, n.fts_body, n.fts_extra) IS DISTINCT FROM
         (o.fts_abstract, o.fts_body, o.fts_extra),
    mneme_tokens(n.fts_abstract, n.fts_body, n.fts_extra) k;
  END IF;
  RETURN NULL;
END
$f$;
CREATE TRIGGER revisions_postings_insert AFTER INSERT ON revisions
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION mneme_postings();
CREATE TRIGGER revisions_postings_update AFTER UPDATE ON revisions
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION mneme_postings();
CREATE TRIGGER revisions_postings_delete AFTER DELETE ON revisions
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION mneme_postings();
ANALYZE postings;
`;

export const MIGRATIONS: readonly string[] = [
  // 1: tenants, tokens, memories and revisions with full-text search, the journal, tombstones,
  // proposals, usage, weights and the session archive.
  `
CREATE TABLE tenants(
  name text COLLATE "C" PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE tokens(
  hash text PRIMARY KEY,
  tenant_id text COLLATE "C" NOT NULL REFERENCES tenants(name),
  projects text[],
  label text,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX tokens_tenant ON tokens(tenant_id);

-- Stemming without stop-word removal (FTS5's porter tokenizer keeps stop words too, and a query
-- made only of stop words falls back to them).
CREATE TEXT SEARCH DICTIONARY mneme_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION mneme (COPY = english);
ALTER TEXT SEARCH CONFIGURATION mneme
  ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH mneme_stem;

-- One row per lineage: the optimistic-revision check and the live-slug uniqueness live here.
CREATE TABLE memories(
  tenant_id text COLLATE "C" NOT NULL REFERENCES tenants(name),
  id text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  type text COLLATE "C" NOT NULL,
  slug text COLLATE "C" NOT NULL,
  current_rev integer NOT NULL,
  status text NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX memories_live_slug ON memories(tenant_id, scope, type, slug)
  WHERE status = 'active';

CREATE TABLE revisions(
  tenant_id text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  rev integer NOT NULL,
  doc text NOT NULL,
  scope text COLLATE "C" NOT NULL,
  type text COLLATE "C" NOT NULL,
  slug text COLLATE "C" NOT NULL,
  status text NOT NULL,
  trust_rank smallint NOT NULL,
  quarantine text,
  review text NOT NULL,
  valid_from text COLLATE "C" NOT NULL,
  valid_to text COLLATE "C",
  recorded_at text COLLATE "C" NOT NULL,
  state text NOT NULL,
  valid_to_eff text COLLATE "C",
  retired_at text COLLATE "C",
  retire_kind text,
  retired_by integer,
  lineage_end_at text COLLATE "C",
  lineage_end text,
  is_current boolean NOT NULL,
  fts_abstract text NOT NULL,
  fts_extra text NOT NULL,
  fts_body text NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('mneme'::regconfig, fts_abstract), 'A') ||
    setweight(to_tsvector('mneme'::regconfig, fts_extra), 'B') ||
    setweight(to_tsvector('mneme'::regconfig, fts_body), 'C')
  ) STORED,
  PRIMARY KEY (tenant_id, id, rev),
  FOREIGN KEY (tenant_id, id) REFERENCES memories(tenant_id, id)
);
CREATE INDEX revisions_tsv ON revisions USING gin(tsv);
CREATE INDEX revisions_current ON revisions(tenant_id, scope) WHERE is_current;

CREATE TABLE journal_head(
  tenant_id text COLLATE "C" PRIMARY KEY REFERENCES tenants(name),
  seq bigint NOT NULL,
  hash text NOT NULL
);
CREATE TABLE journal(
  tenant_id text COLLATE "C" NOT NULL REFERENCES tenants(name),
  seq bigint NOT NULL,
  at text COLLATE "C" NOT NULL,
  op text NOT NULL,
  actor_kind text NOT NULL,
  target_id text COLLATE "C",
  idem text,
  entry text NOT NULL,
  PRIMARY KEY (tenant_id, seq)
);
CREATE INDEX journal_target ON journal(tenant_id, target_id);
CREATE UNIQUE INDEX journal_idem ON journal(tenant_id, idem) WHERE idem IS NOT NULL;

CREATE TABLE tombstone_events(
  tenant_id text COLLATE "C" NOT NULL REFERENCES tenants(name),
  seq bigserial,
  journal_seq bigint NOT NULL,
  event text NOT NULL CHECK (event IN ('arm', 'lift')),
  scope text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  doc text NOT NULL,
  PRIMARY KEY (tenant_id, seq)
);
CREATE INDEX tombstone_events_key ON tombstone_events(tenant_id, scope, key, seq);

CREATE TABLE proposals(
  tenant_id text COLLATE "C" NOT NULL REFERENCES tenants(name),
  id text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  state text NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  doc text NOT NULL,
  PRIMARY KEY (tenant_id, id)
);

CREATE TABLE usage_events(
  tenant_id text COLLATE "C" NOT NULL REFERENCES tenants(name),
  seq bigserial,
  at text COLLATE "C" NOT NULL,
  kind text NOT NULL,
  doc text NOT NULL,
  PRIMARY KEY (tenant_id, seq)
);
CREATE INDEX usage_events_at ON usage_events(tenant_id, at);

CREATE TABLE weights(
  tenant_id text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  w double precision NOT NULL,
  PRIMARY KEY (tenant_id, id)
);

-- Raw transcript increments from hooks (DESIGN §3 archive/sessions), kept before any model sees
-- them (session-rows.ts).
CREATE TABLE session_archive(
  tenant_id text COLLATE "C" NOT NULL REFERENCES tenants(name),
  host text NOT NULL,
  session text NOT NULL,
  seq integer NOT NULL,
  at text COLLATE "C" NOT NULL,
  text text NOT NULL,
  PRIMARY KEY (tenant_id, host, session, seq)
);
`,
  // 2: the journal head row also anchors the review passphrase as of that head (so removing
  // journal rows cannot drop it) and records a chain break a full verify found (every write is
  // refused until a person runs `mneme journal repair`). Existing rows take the passphrase the
  // journal sets now.
  `
ALTER TABLE journal_head ADD COLUMN passphrase text;
ALTER TABLE journal_head ADD COLUMN broken text;
UPDATE journal_head h SET passphrase = (
  SELECT json_build_object('salt', e.entry::json->'data'->>'salt',
                           'hash', e.entry::json->'data'->>'hash')::text
  FROM journal e
  WHERE e.tenant_id = h.tenant_id AND e.op = 'set_passphrase'
  ORDER BY e.seq DESC LIMIT 1);
`,
  // 3: the session port on Postgres. session_archive (from 1) holds the archived transcript
  // lines, `seq` being the 1-based line number; session_state holds each session's bookkeeping
  // records (watermarks, distilled, sessions, injected, inflight, pending) and, under kind
  // 'shared' with host '', the distiller's store-wide records by name (its run log).
  `
CREATE TABLE session_state(
  tenant_id text COLLATE "C" NOT NULL REFERENCES tenants(name),
  kind text COLLATE "C" NOT NULL,
  host text COLLATE "C" NOT NULL,
  session text COLLATE "C" NOT NULL,
  doc text NOT NULL,
  PRIMARY KEY (tenant_id, kind, host, session)
);
-- A bound memory's journaled freshness (store/derived.ts freshnessFrom), kept at commit so
-- injection withholds drifted memories inside its query; backfilled from the journal here.
CREATE TABLE source_freshness(
  tenant_id text COLLATE "C" NOT NULL REFERENCES tenants(name),
  id text COLLATE "C" NOT NULL,
  rev integer NOT NULL,
  state text NOT NULL,
  observed text,
  at text COLLATE "C" NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
INSERT INTO source_freshness(tenant_id, id, rev, state, observed, at)
SELECT DISTINCT ON (j.tenant_id, j.target_id) j.tenant_id, j.target_id,
  CASE WHEN j.op = 'check_source' THEN (e.d->'data'->>'rev')::int ELSE (e.d->'after'->>'rev')::int END,
  CASE WHEN j.op = 'check_source' THEN e.d->'data'->>'freshness' ELSE 'fresh' END,
  CASE WHEN j.op = 'check_source' THEN e.d->'data'->>'observed_sha' END,
  j.at
FROM journal j CROSS JOIN LATERAL (SELECT j.entry::jsonb AS d) e
WHERE j.target_id IS NOT NULL
  AND ((j.op = 'check_source' AND e.d->'data'->>'freshness' IN ('fresh', 'drifted', 'missing')
        AND jsonb_typeof(e.d->'data'->'rev') = 'number')
    OR (e.d->'data'->'source_bound' = 'true'::jsonb AND jsonb_typeof(e.d->'after') = 'object'))
ORDER BY j.tenant_id, j.target_id, j.seq DESC;
`,
  // 4: the full-text columns hold the index tokens of core/text.ts (stemmed, space-separated,
  // the same tokens the embedded index holds), indexed as they are ('simple': no stemming, no
  // stop words), with their number (BM25's document length). RETOKENIZE rewrites the columns of
  // rows written before.
  `
DROP INDEX revisions_tsv;
ALTER TABLE revisions DROP COLUMN tsv;
ALTER TABLE revisions ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('simple'::regconfig, fts_abstract), 'A') ||
  setweight(to_tsvector('simple'::regconfig, fts_extra), 'B') ||
  setweight(to_tsvector('simple'::regconfig, fts_body), 'C')
) STORED;
ALTER TABLE revisions ADD COLUMN fts_len integer GENERATED ALWAYS AS (
  cardinality(string_to_array(fts_abstract, ' ')) + cardinality(string_to_array(fts_extra, ' '))
  + cardinality(string_to_array(fts_body, ' '))
) STORED;
CREATE INDEX revisions_tsv ON revisions USING gin(tsv);
CREATE INDEX revisions_tokens ON revisions(tenant_id) INCLUDE (fts_len);
`,
  // 5: each tenant's purge secret (the key of its purge tombstones' hashes, core/purge.ts):
  // kept apart from the journal and never exported. `vacuum_due`: a purge committed whose
  // VACUUM has not run yet (set in the purge's transaction, cleared once the vacuum is done):
  // a crash in between leaves it set, and the next write vacuums.
  `
CREATE TABLE purge_secrets(
  tenant_id text COLLATE "C" PRIMARY KEY REFERENCES tenants(name),
  secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  vacuum_due boolean NOT NULL DEFAULT false
);
`,
  // 6: governance. A tenant can be disabled; a token has a public id (what `token list` shows
  // and `token revoke` takes), an optional expiry and the time it was last used. The operator
  // journal is the journal of the reserved tenant `_operator` (a name TENANT_PATTERN refuses).
  `
ALTER TABLE tenants ADD COLUMN disabled_at timestamptz;
ALTER TABLE tokens ADD COLUMN id text COLLATE "C";
UPDATE tokens SET id = 'tok_' || substr(hash, 1, 16);
ALTER TABLE tokens ALTER COLUMN id SET NOT NULL;
CREATE UNIQUE INDEX tokens_id ON tokens(id);
ALTER TABLE tokens ADD COLUMN expires_at timestamptz;
ALTER TABLE tokens ADD COLUMN last_used_at timestamptz;
INSERT INTO tenants(name) VALUES ('_operator') ON CONFLICT DO NOTHING;
`,
  // 7 (issue 19, artifacts): artifact bytes by sha256 (artifact-rows.ts). `artifacts` names each
  // hash the tenant holds with its size; `artifact_chunks` holds the bytes in 1 MiB rows, 0-based.
  `
CREATE TABLE artifacts(
  tenant_id text COLLATE "C" NOT NULL REFERENCES tenants(name),
  sha256 text COLLATE "C" NOT NULL,
  size bigint NOT NULL,
  PRIMARY KEY (tenant_id, sha256)
);
CREATE TABLE artifact_chunks(
  tenant_id text COLLATE "C" NOT NULL,
  sha256 text COLLATE "C" NOT NULL,
  n integer NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (tenant_id, sha256, n),
  FOREIGN KEY (tenant_id, sha256) REFERENCES artifacts(tenant_id, sha256) ON DELETE CASCADE
);
`,
  // 8 (its number is its position): the knowledge index (issue 19), the repository's documents
  // as a cache keyed by tenant and scope: a row per file (its hash, or why it was skipped) and
  // per chunk. No journal: a refresh rebuilds it from the repository.
  `
CREATE TABLE knowledge_files(
  tenant_id text COLLATE "C" NOT NULL REFERENCES tenants(name),
  scope text COLLATE "C" NOT NULL,
  path text COLLATE "C" NOT NULL,
  hash text NOT NULL,
  bytes integer NOT NULL,
  chunks integer NOT NULL,
  skipped text,
  PRIMARY KEY (tenant_id, scope, path)
);
CREATE TABLE knowledge_chunks(
  tenant_id text COLLATE "C" NOT NULL REFERENCES tenants(name),
  scope text COLLATE "C" NOT NULL,
  path text COLLATE "C" NOT NULL,
  ord integer NOT NULL,
  line_from integer NOT NULL,
  line_to integer NOT NULL,
  trail text NOT NULL,
  body text NOT NULL,
  hash text NOT NULL,
  trail_tokens text NOT NULL,
  body_tokens text NOT NULL,
  fts_trail tsvector NOT NULL,
  fts_body tsvector NOT NULL,
  PRIMARY KEY (tenant_id, scope, path, ord)
);
CREATE INDEX knowledge_chunks_trail ON knowledge_chunks USING gin(fts_trail);
CREATE INDEX knowledge_chunks_body ON knowledge_chunks USING gin(fts_body);
`,
  // 9: what BM25 and the rare-term narrowing read, kept as the rows change instead of counted at
  // every search (which read every row holding a common word): each tenant's document frequency
  // per lexeme of the full-text column, and its rows and tokens. Kept by statement triggers on
  // revisions (every writer: commits, lineage re-derivation, purges, migrations), backfilled
  // here. Full-text search matches inside one tenant: GIN on (tenant_id, tsv) through btree_gin
  // (PostgreSQL's contrib, trusted), and where it cannot be created the index on tsv stays.
  `
CREATE TABLE fts_terms(
  tenant_id text COLLATE "C" NOT NULL,
  lexeme text COLLATE "C" NOT NULL,
  df integer NOT NULL,
  PRIMARY KEY (tenant_id, lexeme)
);
CREATE TABLE fts_totals(
  tenant_id text COLLATE "C" PRIMARY KEY,
  n_rows bigint NOT NULL,
  n_tokens bigint NOT NULL
);
-- A transaction's changes are queued in fts_pending (rows only ever inserted: a transaction that
-- writes many revisions would otherwise update a common word's row once per revision, each
-- update walking the versions the ones before it left) and folded into fts_terms and
-- fts_totals once, at commit, by a deferred trigger that fts_dirty's one row per transaction
-- queues. Statement triggers on revisions queue every writer's changes: commits, lineage
-- re-derivation, purges (which rewrite text: the purged words leave with the old rows) and
-- migrations. PL/pgSQL: its statements are planned once per connection.
CREATE TABLE fts_pending(
  tx bigint NOT NULL,
  tenant_id text COLLATE "C" NOT NULL,
  lexeme text COLLATE "C", -- NULL: the rows and tokens
  d integer NOT NULL,
  tokens bigint NOT NULL DEFAULT 0
);
CREATE INDEX fts_pending_tx ON fts_pending(tx);
CREATE TABLE fts_dirty(tx bigint PRIMARY KEY);
CREATE INDEX fts_terms_gone ON fts_terms(tenant_id) WHERE df <= 0;
CREATE FUNCTION mneme_fts_queue() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO fts_pending(tx, tenant_id, lexeme, d, tokens)
    SELECT txid_current(), n.tenant_id, l.l, 1, 0
    FROM new_rows n, unnest(tsvector_to_array(n.tsv)) AS l(l)
    UNION ALL
    SELECT txid_current(), n.tenant_id, NULL, 1, n.fts_len FROM new_rows n;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO fts_pending(tx, tenant_id, lexeme, d, tokens)
    SELECT txid_current(), o.tenant_id, l.l, -1, 0
    FROM old_rows o, unnest(tsvector_to_array(o.tsv)) AS l(l)
    UNION ALL
    SELECT txid_current(), o.tenant_id, NULL, -1, -o.fts_len FROM old_rows o;
  ELSE
    -- Only rows whose full-text column changed (a lifecycle update changes no text).
    INSERT INTO fts_pending(tx, tenant_id, lexeme, d, tokens)
    SELECT txid_current(), o.tenant_id, l.l, -1, 0
    FROM old_rows o, unnest(tsvector_to_array(o.tsv)) AS l(l)
    WHERE NOT EXISTS (
      SELECT 1 FROM new_rows n WHERE n.tenant_id = o.tenant_id AND n.id = o.id
        AND n.rev = o.rev AND n.tsv = o.tsv AND n.fts_len = o.fts_len)
    UNION ALL
    SELECT txid_current(), o.tenant_id, NULL, -1, -o.fts_len FROM old_rows o
    WHERE NOT EXISTS (
      SELECT 1 FROM new_rows n WHERE n.tenant_id = o.tenant_id AND n.id = o.id
        AND n.rev = o.rev AND n.tsv = o.tsv AND n.fts_len = o.fts_len)
    UNION ALL
    SELECT txid_current(), n.tenant_id, l.l, 1, 0
    FROM new_rows n, unnest(tsvector_to_array(n.tsv)) AS l(l)
    WHERE NOT EXISTS (
      SELECT 1 FROM old_rows o WHERE n.tenant_id = o.tenant_id AND n.id = o.id
        AND n.rev = o.rev AND n.tsv = o.tsv AND n.fts_len = o.fts_len)
    UNION ALL
    SELECT txid_current(), n.tenant_id, NULL, 1, n.fts_len FROM new_rows n
    WHERE NOT EXISTS (
      SELECT 1 FROM old_rows o WHERE n.tenant_id = o.tenant_id AND n.id = o.id
        AND n.rev = o.rev AND n.tsv = o.tsv AND n.fts_len = o.fts_len);
    IF NOT FOUND THEN
      RETURN NULL;
    END IF;
  END IF;
  INSERT INTO fts_dirty VALUES (txid_current()) ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$f$;
CREATE FUNCTION mneme_fts_fold() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  DELETE FROM fts_dirty WHERE tx = NEW.tx;
  WITH gone AS (DELETE FROM fts_pending WHERE tx = NEW.tx AND lexeme IS NOT NULL
                RETURNING tenant_id, lexeme, d)
  INSERT INTO fts_terms(tenant_id, lexeme, df)
  SELECT tenant_id, lexeme, sum(d)::int FROM gone GROUP BY 1, 2 HAVING sum(d) <> 0 ORDER BY 1, 2
  ON CONFLICT (tenant_id, lexeme) DO UPDATE SET df = fts_terms.df + EXCLUDED.df;
  WITH gone AS (DELETE FROM fts_pending WHERE tx = NEW.tx AND lexeme IS NULL
                RETURNING tenant_id, d, tokens)
  INSERT INTO fts_totals(tenant_id, n_rows, n_tokens)
  SELECT tenant_id, sum(d), sum(tokens) FROM gone GROUP BY 1 ORDER BY 1
  ON CONFLICT (tenant_id) DO UPDATE
    SET n_rows = fts_totals.n_rows + EXCLUDED.n_rows,
        n_tokens = fts_totals.n_tokens + EXCLUDED.n_tokens;
  -- A lexeme no row holds any more leaves the table (a purged word must not stay behind here).
  DELETE FROM fts_terms WHERE df <= 0;
  RETURN NULL;
END
$f$;
CREATE TRIGGER revisions_fts_insert AFTER INSERT ON revisions
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION mneme_fts_queue();
CREATE TRIGGER revisions_fts_update AFTER UPDATE ON revisions
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION mneme_fts_queue();
CREATE TRIGGER revisions_fts_delete AFTER DELETE ON revisions
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION mneme_fts_queue();
CREATE CONSTRAINT TRIGGER fts_dirty_fold AFTER INSERT ON fts_dirty
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION mneme_fts_fold();
INSERT INTO fts_terms(tenant_id, lexeme, df)
SELECT r.tenant_id, l.l, count(*)::int
FROM revisions r, unnest(tsvector_to_array(r.tsv)) AS l(l) GROUP BY 1, 2;
INSERT INTO fts_totals(tenant_id, n_rows, n_tokens)
SELECT tenant_id, count(*), coalesce(sum(fts_len), 0) FROM revisions GROUP BY 1;
-- The OR of tsqueries (one phrase per term): a search's match is one parameter, an array.
CREATE AGGREGATE mneme_tsquery_or(tsquery) (SFUNC = tsquery_or, STYPE = tsquery);
DO $f$
BEGIN
  CREATE EXTENSION IF NOT EXISTS btree_gin;
  CREATE INDEX revisions_tenant_tsv ON revisions USING gin(tenant_id, tsv);
  DROP INDEX revisions_tsv;
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'no btree_gin (%): full-text search keeps the index on tsv alone', SQLERRM;
END
$f$;
`,
  TOMBSTONE_GRAMS,
  // 11: fsck's marks (store/postgres/integrity-rows.ts): each lineage checked
  // clean, with the fingerprint (rows' xmin, journaled hashes) it had then. A cache of what was
  // checked: losing it only makes the next fsck read everything.
  `
CREATE TABLE fsck_marks(
  tenant_id text COLLATE "C" NOT NULL REFERENCES tenants(name),
  lineage_id text COLLATE "C" NOT NULL,
  fp text NOT NULL,
  PRIMARY KEY (tenant_id, lineage_id)
);
`,
  TOMBSTONE_GRAMS_ALL,
  POSTINGS,
];

/** Work a migration needs done in code, in its transaction, after its SQL (by version). */
const AFTER: Record<number, (client: pg.PoolClient) => Promise<void>> = {
  4: retokenize,
  [MIGRATIONS.indexOf(TOMBSTONE_GRAMS) + 1]: indexTombstones,
  [MIGRATIONS.indexOf(TOMBSTONE_GRAMS_ALL) + 1]: reindexTombstones,
};

/** Indexes every tombstone armed before tombstone_grams existed (migration 10's gram). */
export async function indexTombstones(client: Pick<pg.PoolClient, 'query'>): Promise<void> {
  const { rows } = await client.query<{
    tenant_id: string;
    scope: string;
    key: string;
    doc: string;
  }>("SELECT tenant_id, scope, key, doc FROM tombstone_events WHERE event = 'arm'");
  for (let i = 0; i < rows.length; i += 500) {
    const batch = rows.slice(i, i + 500);
    await client.query(
      `INSERT INTO tombstone_grams(tenant_id, scope, gram, key)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
       ON CONFLICT DO NOTHING`,
      [
        batch.map((r) => r.tenant_id),
        batch.map((r) => r.scope),
        batch.map((r) => tombstoneGram(JSON.parse(r.doc) as Tombstone)),
        batch.map((r) => r.key),
      ],
    );
  }
}

/** Rewrites every revision's full-text columns from its document (migration 4). */
async function retokenize(client: pg.PoolClient): Promise<void> {
  let after: [string, string, number] = ['', '', 0];
  for (;;) {
    const { rows } = await client.query<{
      tenant_id: string;
      id: string;
      rev: number;
      doc: string;
    }>(
      `SELECT tenant_id, id, rev, doc FROM revisions WHERE (tenant_id, id, rev) > ($1, $2, $3)
       ORDER BY tenant_id, id, rev LIMIT 500`,
      after,
    );
    if (rows.length === 0) return;
    const cols = rows.map((r) => ftsColumns(JSON.parse(r.doc) as Revision));
    await client.query(
      `UPDATE revisions r SET fts_abstract = u.a, fts_extra = u.e, fts_body = u.b
       FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[])
         AS u(t, id, rev, a, e, b)
       WHERE r.tenant_id = u.t AND r.id = u.id AND r.rev = u.rev`,
      [
        rows.map((r) => r.tenant_id),
        rows.map((r) => r.id),
        rows.map((r) => r.rev),
        cols.map((c) => c.abstract),
        cols.map((c) => c.extra),
        cols.map((c) => c.body),
      ],
    );
    const last = rows[rows.length - 1]!;
    after = [last.tenant_id, last.id, last.rev];
  }
}

/** An arbitrary constant: the advisory lock class that serialises migrations. */
const MIGRATION_LOCK = 0x6d6e656d; // "mnem"

/** Applies pending migrations in one transaction; returns the versions it applied. */
export async function migrate(pool: pg.Pool): Promise<number[]> {
  // Fast path, no lock and no DDL: the schema is already current (every open after the first).
  const { rows: table } = await pool.query<{ t: string | null }>(
    "SELECT to_regclass('schema_migrations')::text AS t",
  );
  if (table[0]?.t) {
    const { rows: present } = await pool.query<{ v: number | null }>(
      'SELECT max(version) AS v FROM schema_migrations',
    );
    if (present[0]?.v === MIGRATIONS.length) return [];
  }
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations(
      version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ v: number | null }>(
      'SELECT max(version) AS v FROM schema_migrations',
    );
    const done = rows[0]?.v ?? 0;
    if (done > MIGRATIONS.length) {
      throw new MnemeError(
        'corrupt',
        `the database schema is at version ${done}, newer than this mneme understands (${MIGRATIONS.length})`,
        { hint: 'upgrade mneme on this machine to the version the other instances run' },
      );
    }
    const applied: number[] = [];
    for (let v = done + 1; v <= MIGRATIONS.length; v++) {
      await client.query(MIGRATIONS[v - 1]!);
      await AFTER[v]?.(client);
      await client.query('INSERT INTO schema_migrations(version) VALUES ($1)', [v]);
      applied.push(v);
    }
    await client.query('COMMIT');
    return applied;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}

/** The schema version this code expects (a database ahead of it is refused). */
export const SCHEMA_VERSION = MIGRATIONS.length;
