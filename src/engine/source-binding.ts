// Binding a memory to a file at write time: the engine reads the file through the injected
// SourceFiles ability, hashes it, checks the symbol and notes HEAD. A binding made here is what
// lets the write path assign `verified` trust (core/trust.ts freshSource).
import { MnemeError, invalid } from '../core/errors.js';
import { sha256 } from '../core/hash.js';
import { hasSymbol, parseSourceSpec } from '../core/source.js';
import type { SourceBinding } from '../core/types.js';
import type { EngineContext, SourceFiles } from './context.js';

function needFiles(ctx: EngineContext): SourceFiles {
  if (!ctx.files)
    throw new MnemeError('refused', 'no project files are available to bind a source to', {
      hint: 'run from inside the project the file belongs to',
    });
  return ctx.files;
}

/** Reads and hashes `PATH[#SYMBOL]` now; refuses a missing file or an absent symbol. */
export function bindSource(ctx: EngineContext, spec: string): SourceBinding {
  const files = needFiles(ctx);
  const { path, symbol } = parseSourceSpec(spec);
  const bytes = files.read(path);
  if (bytes === null)
    throw invalid(
      `source ${path} is not a readable regular file inside the project`,
      'check the path (relative to the repository root)',
    );
  if (symbol && !hasSymbol(bytes.toString('utf8'), symbol, path))
    throw invalid(
      `"${symbol}" is not defined in ${path}`,
      'name a function, class, constant or Markdown heading that the file contains',
    );
  const commit = files.head();
  return {
    path,
    sha256: sha256(bytes),
    ...(symbol ? { symbol } : {}),
    ...(commit ? { commit } : {}),
  };
}
