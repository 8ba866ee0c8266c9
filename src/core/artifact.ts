// Large artifacts by reference (issue 19 item 3): a memory's abstract and body are what is
// indexed; a long log, a diff or a report rides beside them as content-addressed bytes that a
// revision names by hash, size, name and media type (so the reference is journaled and hashed
// with the revision). Pure: sizes, names, byte ranges and whether bytes are text.
import { invalid } from './errors.js';

/** What a revision records of its artifact; the bytes live in the store, keyed by `sha256`. */
export interface ArtifactRef {
  sha256: string;
  size: number;
  name: string;
  media_type: string;
}

/** The default cap on one artifact (setting `artifacts.max_bytes`). */
export const ARTIFACT_DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** How many bytes one read returns when the caller names no range, and at most. */
export const ARTIFACT_PAGE_BYTES = 1024 * 1024;
export const ARTIFACT_NAME_CHARS = 200;

export const isArtifactHash = (h: string) => /^[0-9a-f]{64}$/.test(h);

/** A file name as a reference keeps it: the last path part, one line, bounded. */
export function artifactName(raw: string): string {
  const base = raw.split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(base))
    throw invalid('the artifact name has a control character');
  const name = base.trim();
  if (name === '' || name === '.' || name === '..')
    throw invalid('the artifact needs a file name', 'give artifact.name, e.g. "build.log"');
  if ([...name].length > ARTIFACT_NAME_CHARS)
    throw invalid(`the artifact name is longer than ${ARTIFACT_NAME_CHARS} characters`);
  return name;
}

const TEXT_TYPES: Record<string, string> = {
  md: 'text/markdown',
  txt: 'text/plain',
  log: 'text/plain',
  diff: 'text/x-diff',
  patch: 'text/x-diff',
  json: 'application/json',
  jsonl: 'application/jsonl',
  csv: 'text/csv',
  html: 'text/html',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  ts: 'text/plain',
  js: 'text/javascript',
};

/** The media type a reference records: the caller's, else one guessed from the name and bytes. */
export function mediaTypeOf(name: string, text: boolean, given?: string): string {
  if (given !== undefined) {
    const t = given.trim().toLowerCase();
    if (!/^[a-z0-9][a-z0-9!#$&^_.+-]{0,62}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/.test(t))
      throw invalid(`"${given.slice(0, 80)}" is not a media type`, 'e.g. text/plain or image/png');
    return t;
  }
  const ext = /\.([A-Za-z0-9]{1,10})$/.exec(name)?.[1]?.toLowerCase();
  const known = ext ? TEXT_TYPES[ext] : undefined;
  if (text) return known ?? 'text/plain';
  return 'application/octet-stream';
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes are text when they are valid UTF-8 with no NUL: they are screened and served decoded. */
export function decodeText(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** A byte range, start inclusive, end exclusive. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * `A-B` (bytes A to B, both included, as HTTP's Range counts), `A-` (from A), or nothing (the
 * first page), clipped to one page of `page` bytes.
 */
export function pageRange(spec: string | undefined, size: number, page: number): ByteRange {
  if (spec === undefined || spec === '') return { start: 0, end: Math.min(size, page) };
  const m = /^(\d{1,15})-(\d{0,15})$/.exec(spec.trim());
  if (!m)
    throw invalid(
      `"${spec.slice(0, 40)}" is not a byte range`,
      'give A-B (bytes A to B, both included) or A- (from A); bytes count from 0',
    );
  const start = Number(m[1]);
  const last = m[2] === '' ? size - 1 : Number(m[2]);
  if (last < start) throw invalid(`the range ${spec} ends before it starts`);
  if (start >= size && !(size === 0 && start === 0))
    throw invalid(
      `the range ${spec} starts past the artifact's end (it has ${size} bytes)`,
      `give a start below ${size}`,
    );
  return { start, end: Math.min(last + 1, size, start + page) };
}

/** How many bytes one text page may end earlier so it does not split a UTF-8 character. */
export function textBoundary(bytes: Uint8Array, end: number, total: number): number {
  if (end >= total) return end;
  let e = end;
  // A continuation byte (10xxxxxx) at `e` belongs to the character that started before it.
  while (e > 0 && end - e < 4 && ((bytes[e] ?? 0) & 0xc0) === 0x80) e--;
  return e;
}
