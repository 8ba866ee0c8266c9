// Input limits, documented in the README and enforced at the write path's boundary. Text may
// not carry NUL or other control characters (tabs and newlines are allowed in bodies).
import { invalid } from './errors.js';

export const LIMITS = {
  abstractChars: 240,
  bodyBytes: 64 * 1024,
  tags: 32,
  tagChars: 64,
  fieldChars: 1_000,
  fields: 32,
  reasonChars: 1_000,
  appliesTo: 32,
  /** Identifiers and short values every surface bounds the same way (zod, engine/ops.ts). */
  idChars: 200,
  typeChars: 40,
  isoChars: 64,
  sourceChars: 1_000,
  /** A recall: the query's length and the most results one call returns, on every surface. */
  queryChars: 2_000,
  recallLimit: 200,
  /** An import bundle file (`mneme import`): a whole store's export, read into memory once. */
  bundleBytes: 256 * 1024 * 1024,
} as const;

/** How many results a recall returns when the caller does not say. */
export const RECALL_DEFAULT_LIMIT = 10;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const CONTROL_OR_NEWLINE = /[\u0000-\u001f\u007f]/;
// An unpaired UTF-16 surrogate cannot be written as UTF-8: it would be silently replaced on disk.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const notUtf8 = (v: string) => v.includes('\ufffd') || LONE_SURROGATE.test(v);

export function checkLine(value: string, what: string, max: number): string {
  if (CONTROL_OR_NEWLINE.test(value)) {
    throw invalid(
      `${what} contains a control character or line break`,
      `${what} must be one line of plain text`,
    );
  }
  if (notUtf8(value)) throw invalid(`${what} is not valid UTF-8`);
  const trimmed = value.trim();
  if ([...trimmed].length > max) {
    throw invalid(
      `${what} is ${[...trimmed].length} characters; the limit is ${max}`,
      `shorten the ${what}; put detail in the body`,
    );
  }
  return trimmed;
}

export function checkBody(value: string): string {
  if (CONTROL.test(value))
    throw invalid(
      'body contains a NUL or control character',
      'remove binary content from the body',
    );
  if (notUtf8(value)) throw invalid('body is not valid UTF-8');
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > LIMITS.bodyBytes) {
    throw invalid(
      `body is ${bytes} bytes; the limit is ${LIMITS.bodyBytes}`,
      'split it into several memories or link to a file',
    );
  }
  return value;
}
