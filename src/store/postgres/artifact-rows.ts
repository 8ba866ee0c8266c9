// Artifact bytes on Postgres, one tenant's rows: `artifacts` names each hash with its size, and
// `artifact_chunks` holds its bytes in 1 MiB bytea rows (a whole 64 MiB value in one row would
// need one 64 MiB parameter and one 64 MiB read for every page). A put inside the write lock
// runs in the write transaction, so the bytes commit with the journal line that references them.
import { createHash } from 'node:crypto';
import { MnemeError } from '../../core/errors.js';
import { isArtifactHash } from '../../core/artifact.js';
import type { ArtifactCheck, ArtifactStore } from '../artifacts.js';
import type { Query } from './reads.js';

const CHUNK = 1024 * 1024;

function checked(sha256: string): string {
  if (!isArtifactHash(sha256))
    throw new MnemeError('invalid', `"${sha256.slice(0, 80)}" is not an artifact hash`, {
      hint: 'an artifact hash is 64 hexadecimal digits (sha256), as `mneme read ID` shows it',
    });
  return sha256;
}

export class ArtifactRows implements ArtifactStore {
  constructor(
    private readonly q: Query,
    private readonly tenant: string,
  ) {}

  async put(sha256: string, bytes: Uint8Array): Promise<void> {
    const h = checked(sha256);
    const t = this.tenant;
    const { rowCount } = await this.q(
      `INSERT INTO artifacts(tenant_id, sha256, size) VALUES ($1, $2, $3)
       ON CONFLICT (tenant_id, sha256) DO NOTHING`,
      [t, h, bytes.byteLength],
    );
    if (rowCount === 0) return;
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let n = 0, off = 0; off < buf.length || n === 0; n++, off += CHUNK)
      await this.q(
        'INSERT INTO artifact_chunks(tenant_id, sha256, n, bytes) VALUES ($1, $2, $3, $4)',
        [t, h, n, buf.subarray(off, off + CHUNK)],
      );
  }

  async read(sha256: string, start: number, end: number): Promise<Uint8Array | null> {
    const h = checked(sha256);
    const size = await this.size(h);
    if (size === null) return null;
    const to = Math.min(end, size);
    if (to <= start) return Buffer.alloc(0);
    const { rows } = await this.q<{ n: number; bytes: Buffer }>(
      `SELECT n, bytes FROM artifact_chunks WHERE tenant_id = $1 AND sha256 = $2
         AND n BETWEEN $3 AND $4 ORDER BY n`,
      [this.tenant, h, Math.floor(start / CHUNK), Math.floor((to - 1) / CHUNK)],
    );
    const first = Math.floor(start / CHUNK) * CHUNK;
    const all = Buffer.concat(rows.map((r) => r.bytes));
    return all.subarray(start - first, to - first);
  }

  async size(sha256: string): Promise<number | null> {
    const { rows } = await this.q<{ size: string }>(
      'SELECT size FROM artifacts WHERE tenant_id = $1 AND sha256 = $2',
      [this.tenant, checked(sha256)],
    );
    return rows[0] ? Number(rows[0].size) : null;
  }

  async check(sha256: string): Promise<ArtifactCheck> {
    const size = await this.size(sha256);
    if (size === null) return 'missing';
    const h = createHash('sha256');
    let got = 0;
    // Chunk by chunk, so a check never holds a whole artifact in memory.
    for (let n = 0; ; n++) {
      const { rows } = await this.q<{ bytes: Buffer }>(
        'SELECT bytes FROM artifact_chunks WHERE tenant_id = $1 AND sha256 = $2 AND n = $3',
        [this.tenant, sha256, n],
      );
      if (!rows[0]) break;
      h.update(rows[0].bytes);
      got += rows[0].bytes.length;
    }
    return got === size && h.digest('hex') === sha256 ? 'ok' : 'mismatch';
  }

  async remove(sha256: string): Promise<boolean> {
    const h = checked(sha256);
    await this.q('DELETE FROM artifact_chunks WHERE tenant_id = $1 AND sha256 = $2', [
      this.tenant,
      h,
    ]);
    const { rowCount } = await this.q(
      'DELETE FROM artifacts WHERE tenant_id = $1 AND sha256 = $2',
      [this.tenant, h],
    );
    return (rowCount ?? 0) > 0;
  }
}
