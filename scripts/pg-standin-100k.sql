-- A 100k-revision stand-in tenant from a 10k seed (bench/NOTES.md, "Postgres recall statements
-- at 100k"): tenant t1's memories, revisions and weights copied 9 more times, ids and slugs
-- suffixed (the triggers fill postings and fts_terms). On a copy of a `mneme bench serve
-- --tenants 1 --memories 10000 --keep` database, never on one a benchmark reuses as seeded:
--   psql -h 127.0.0.1 -U postgres -c "CREATE DATABASE x_100k TEMPLATE <seeded 10k>"
--   psql -h 127.0.0.1 -U postgres -d x_100k -v ON_ERROR_STOP=1 -f scripts/pg-standin-100k.sql
-- then `bench serve --tenants 1 --memories 10000 --reuse-db <a TEMPLATE copy of x_100k>`.
BEGIN;
INSERT INTO memories(tenant_id, id, scope, type, slug, current_rev, status)
SELECT m.tenant_id, m.id || '-r' || k, m.scope, m.type, m.slug || '-r' || k, m.current_rev, m.status
FROM memories m, generate_series(1, 9) k WHERE m.tenant_id = 't1';
INSERT INTO revisions(tenant_id, id, rev, doc, scope, type, slug, status, trust_rank, quarantine, review,
  valid_from, valid_to, recorded_at, state, valid_to_eff, retired_at, retire_kind, retired_by,
  lineage_end_at, lineage_end, is_current, fts_abstract, fts_extra, fts_body)
SELECT r.tenant_id, r.id || '-r' || k, r.rev, replace(r.doc, r.id, r.id || '-r' || k), r.scope, r.type,
  r.slug || '-r' || k, r.status, r.trust_rank, r.quarantine, r.review,
  r.valid_from, r.valid_to, r.recorded_at, r.state, r.valid_to_eff, r.retired_at, r.retire_kind, r.retired_by,
  r.lineage_end_at, r.lineage_end, r.is_current, r.fts_abstract, r.fts_extra, r.fts_body
FROM revisions r, generate_series(1, 9) k WHERE r.tenant_id = 't1';
INSERT INTO weights(tenant_id, id, w)
SELECT w.tenant_id, w.id || '-r' || k, w.w FROM weights w, generate_series(1, 9) k WHERE w.tenant_id = 't1';
COMMIT;
VACUUM ANALYZE;
