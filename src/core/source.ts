// Source bindings (DESIGN §2): a memory derived from a file records the file's sha256, an
// optional symbol and the commit it was read at. This module is pure: it parses `PATH#SYMBOL`,
// refuses paths that could leave the project root, finds a symbol in a file's text and decides
// freshness from what a reader observed. Reading files and git state is injected by surfaces.
import { invalid } from './errors.js';
import { sha256 } from './hash.js';
import type { Freshness, SourceBinding } from './types.js';

export interface SourceSpec {
  path: string;
  symbol?: string;
}

/** `src/pay.ts#charge` → {path, symbol}; the path must be relative and stay inside the root. */
export function parseSourceSpec(spec: string): SourceSpec {
  const hash = spec.lastIndexOf('#');
  const rawPath = hash >= 0 ? spec.slice(0, hash) : spec;
  const symbol = hash >= 0 ? spec.slice(hash + 1).trim() : undefined;
  const path = checkSourcePath(rawPath);
  if (symbol !== undefined && !/^[\p{L}\p{N}_$][\p{L}\p{N}_$.\- ]{0,199}$/u.test(symbol))
    throw invalid(
      `source symbol "${symbol.slice(0, 60)}" is not a name`,
      'name a function, class, constant or heading, e.g. --source src/pay.ts#charge',
    );
  return symbol ? { path, symbol } : { path };
}

/** A project-relative path with forward slashes; absolute paths and `..` are refused. */
export function checkSourcePath(raw: string): string {
  const p = raw.trim().replace(/\\/g, '/').replace(/^\.\//, '');
  // eslint-disable-next-line no-control-regex
  if (p === '' || /[\u0000-\u001f]/.test(p))
    throw invalid('the source path is empty or has control characters');
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p) || p.split('/').some((s) => s === '..'))
    throw invalid(
      `source path "${p.slice(0, 120)}" must be relative to the project root and stay inside it`,
      'pass a path like src/billing/pay.ts, relative to the repository root',
    );
  if (p.split('/').some((s) => s === '.git'))
    throw invalid('a source binding may not point into .git');
  return p
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether `symbol` is defined in `text`: simple per-language shapes (function, class, def, const
 * or `NAME =`, a Markdown heading). Deliberately lexical; a renamed symbol is drift.
 */
export function hasSymbol(text: string, symbol: string, filePath: string): boolean {
  const s = escape(symbol);
  if (/\.(md|markdown|mdx|txt|rst)$/i.test(filePath)) {
    return new RegExp(`^#{1,6}[ \\t]+${s}[ \\t]*#*[ \\t]*$`, 'mu').test(text);
  }
  const shapes = [
    `\\bfunction\\*?[ \\t]+${s}\\b`,
    `\\bclass[ \\t]+${s}\\b`,
    `\\b(?:def|fn|func|sub|interface|type|enum|struct|trait|module)[ \\t]+${s}\\b`,
    `\\b(?:const|let|var|val)[ \\t]+${s}\\b`,
    `^[ \\t]*(?:export[ \\t]+)?(?:public[ \\t]+|private[ \\t]+|static[ \\t]+|async[ \\t]+)*${s}[ \\t]*(?::[^=\\n]*)?=(?!=)`,
    `^[ \\t]*(?:async[ \\t]+)?${s}[ \\t]*\\([^)\\n]*\\)[ \\t]*(?::[^{\\n]*)?\\{`,
  ];
  return shapes.some((re) => new RegExp(re, 'mu').test(text));
}

/** What a reader saw when it looked at a bound source. */
export interface SourceObservation {
  /** The file's bytes, or null when it does not exist (or is not a regular file). */
  bytes: Uint8Array | null;
  /** Whether the bound commit is still an ancestor of HEAD; null when it cannot be told. */
  commitReachable: boolean | null;
}

export interface FreshnessVerdict {
  freshness: Freshness;
  observed_sha: string | null;
  why: string;
}

export function judgeSource(
  binding: SourceBinding | null,
  seen: SourceObservation,
): FreshnessVerdict {
  if (!binding) return { freshness: 'unbound', observed_sha: null, why: 'not bound to a source' };
  if (seen.bytes === null)
    return { freshness: 'missing', observed_sha: null, why: `${binding.path} is gone` };
  const observed = sha256(seen.bytes);
  if (observed !== binding.sha256)
    return { freshness: 'drifted', observed_sha: observed, why: `${binding.path} changed` };
  if (binding.symbol) {
    const text = Buffer.from(seen.bytes).toString('utf8');
    if (!hasSymbol(text, binding.symbol, binding.path))
      return {
        freshness: 'drifted',
        observed_sha: observed,
        why: `${binding.symbol} is no longer in ${binding.path}`,
      };
  }
  if (binding.commit && seen.commitReachable === false)
    return {
      freshness: 'drifted',
      observed_sha: observed,
      why: `commit ${binding.commit.slice(0, 12)} is no longer an ancestor of HEAD`,
    };
  return { freshness: 'fresh', observed_sha: observed, why: 'content unchanged' };
}
