// The knowledge index on Postgres: one tenant's rows of knowledge_files and knowledge_chunks
// (see the migration in schema.ts). A cache of the repository's documents, never memory: no
// journal, no write lock, keyed by tenant and scope in every statement, so a project's chunks are
// never read under another project. The chunk's search column holds the index tokens of
// core/text.ts, matched with the same phrase queries as the memory rows.
import type pg from 'pg';
import { indexText, termTokens, uniqueTerms, type QueryTerm } from '../../core/text.js';
import type { KnowledgeChunkRow, KnowledgeFile, KnowledgeHit, KnowledgeStore } from '../port.js';
import { pgError } from './errors.js';
import { Params } from './sql.js';

/** An OR of one phrase query per term (a word: one token). Null when there is nothing to search. */
function tsQuery(terms: readonly QueryTerm[], p: Params): string | null {
  const live = uniqueTerms(terms);
  if (live.length === 0) return null;
  return live
    .map((t) => `phraseto_tsquery('simple', ${p.add(termTokens(t).join(' '))})`)
    .join(' || ');
}

export class KnowledgeRows implements KnowledgeStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly tenant: string,
    /** What the request already read of the tenant (PostgresStore.knowing), if anything. */
    private readonly known: () => { knowledge: boolean } | undefined = () => undefined,
  ) {}

  /** Whether this instance changed the index (then what a request read before is not trusted). */
  private changed = false;

  async files(scope: string): Promise<KnowledgeFile[]> {
    try {
      const { rows } = await this.pool.query<KnowledgeFile>(
        `SELECT path, hash, bytes, chunks, skipped FROM knowledge_files
         WHERE tenant_id = $1 AND scope = $2 ORDER BY path`,
        [this.tenant, scope],
      );
      return rows;
    } catch (e) {
      throw pgError(e);
    }
  }

  async change(
    scope: string,
    put: { file: KnowledgeFile; chunks: KnowledgeChunkRow[] }[],
    remove: string[],
  ): Promise<{ added: number; removed: number }> {
    if (put.length === 0 && remove.length === 0) return { added: 0, removed: 0 };
    this.changed = true;
    const c = await this.pool.connect();
    try {
      await c.query('BEGIN');
      const paths = [...remove, ...put.map((p) => p.file.path)];
      const del = await c.query(
        `DELETE FROM knowledge_chunks WHERE tenant_id = $1 AND scope = $2 AND path = ANY($3::text[])`,
        [this.tenant, scope, paths],
      );
      await c.query(
        `DELETE FROM knowledge_files WHERE tenant_id = $1 AND scope = $2 AND path = ANY($3::text[])`,
        [this.tenant, scope, paths],
      );
      let added = 0;
      for (const { file, chunks } of put) {
        await c.query(
          `INSERT INTO knowledge_files(tenant_id, scope, path, hash, bytes, chunks, skipped)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [this.tenant, scope, file.path, file.hash, file.bytes, file.chunks, file.skipped],
        );
        // One statement per file: the chunks as parallel arrays.
        if (chunks.length === 0) continue;
        await c.query(
          `INSERT INTO knowledge_chunks(tenant_id, scope, path, ord, line_from, line_to, trail,
             body, hash, trail_tokens, body_tokens, fts_trail, fts_body)
           SELECT $1, $2, $3, u.ord, u.lf, u.lt, u.trail, u.body, $4, u.ft, u.fb,
             to_tsvector('simple', u.ft), to_tsvector('simple', u.fb)
           FROM unnest($5::int[], $6::int[], $7::int[], $8::text[], $9::text[], $10::text[],
             $11::text[]) AS u(ord, lf, lt, trail, body, ft, fb)`,
          [
            this.tenant,
            scope,
            file.path,
            file.hash,
            chunks.map((x) => x.ord),
            chunks.map((x) => x.line_from),
            chunks.map((x) => x.line_to),
            chunks.map((x) => x.trail),
            chunks.map((x) => x.text),
            chunks.map((x) => indexText(x.trail)),
            chunks.map((x) => indexText(x.text)),
          ],
        );
        added += chunks.length;
      }
      await c.query('COMMIT');
      // Chunks of a re-put file were deleted too; the ones of `remove` alone are "removed".
      return { added, removed: del.rowCount ?? 0 };
    } catch (e) {
      await c.query('ROLLBACK').catch(() => {});
      throw pgError(e);
    } finally {
      c.release();
    }
  }

  async search(scope: string, terms: QueryTerm[], limit: number): Promise<KnowledgeHit[]> {
    const p = new Params();
    const tenant = p.add(this.tenant);
    const sc = p.add(scope);
    const q = tsQuery(terms, p);
    if (!q) return [];
    // The request's token check found no chunk of the tenant: there is none to find.
    if (!this.changed && this.known()?.knowledge === false) return [];
    try {
      const { rows } = await this.pool.query<KnowledgeHit>(
        `SELECT path, ord, line_from, line_to, trail, body AS text, hash, trail_tokens,
           body_tokens AS text_tokens
         FROM knowledge_chunks, (SELECT ${q} AS q) AS query
         WHERE tenant_id = ${tenant} AND scope = ${sc}
           AND (fts_trail @@ query.q OR fts_body @@ query.q)
         ORDER BY 2 * ts_rank(fts_trail, query.q) + ts_rank(fts_body, query.q) DESC, path, ord
         LIMIT ${p.add(limit)}`,
        p.values,
      );
      return rows;
    } catch (e) {
      throw pgError(e);
    }
  }

  async clear(scope: string): Promise<number> {
    this.changed = true;
    try {
      const { rowCount } = await this.pool.query(
        'DELETE FROM knowledge_chunks WHERE tenant_id = $1 AND scope = $2',
        [this.tenant, scope],
      );
      await this.pool.query('DELETE FROM knowledge_files WHERE tenant_id = $1 AND scope = $2', [
        this.tenant,
        scope,
      ]);
      return rowCount ?? 0;
    } catch (e) {
      throw pgError(e);
    }
  }

  async size(): Promise<number | null> {
    try {
      const { rows } = await this.pool.query<{ n: string | null }>(
        `SELECT sum(pg_column_size(k.*))::bigint AS n FROM knowledge_chunks k WHERE tenant_id = $1`,
        [this.tenant],
      );
      return Number(rows[0]?.n ?? 0);
    } catch (e) {
      throw pgError(e);
    }
  }
}
