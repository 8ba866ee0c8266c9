// The artifact part of the Store port (issue 19 item 3): bytes kept by their sha256, beside the
// revisions that name them. The engine decides what to keep (cap, screening, hashing) and when
// (under the write lock, before the commit whose revision references the bytes); an adapter
// keeps them durably — files: `artifacts/sha256/<aa>/<hash>` written temp + fsync + rename;
// Postgres: the tenant's rows, in the write transaction. Content-addressed, so a put of bytes
// already held is a no-op and two memories may share one artifact.

/** What a check of stored bytes found: present and hashing to their name, absent, or altered. */
export type ArtifactCheck = 'ok' | 'missing' | 'mismatch';

export interface ArtifactStore {
  /** Keeps `bytes` under `sha256` (the caller hashed them); durable once it returns. */
  put(sha256: string, bytes: Uint8Array): Promise<void>;
  /** Bytes [start, end) of the artifact, or null when the store holds none under that hash. */
  read(sha256: string, start: number, end: number): Promise<Uint8Array | null>;
  /** The stored size, or null when absent. */
  size(sha256: string): Promise<number | null>;
  /** Re-hashes the stored bytes (fsck): ok, missing, or mismatch (altered since they were kept). */
  check(sha256: string): Promise<ArtifactCheck>;
  /** Removes the bytes (a person's `mneme artifact purge`); false when there were none. */
  remove(sha256: string): Promise<boolean>;
}
