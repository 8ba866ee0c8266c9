// Which tracked path the knowledge index may read, decided on the name and on where it really
// leads: a symlink is resolved to its target and the deny list (core/knowledge.ts forbiddenPath)
// applies to both, a link that leaves the repository is not followed, and a path that carries a
// line break or a control character is not read at all (it would reach a reader in every
// citation; refresh also screens the path for instructions). Refresh lists each refusal as
// skipped; a served chunk is held to it again.
import { PATH_CONTROL, forbiddenPath } from '../core/knowledge.js';
import type { SourceFiles } from './context.js';

/** Why a path is not read ({ skip }: listed as skipped), 'gone' when nothing is there, or null. */
export function pathVerdict(files: SourceFiles, rel: string): { skip: string } | 'gone' | null {
  if (PATH_CONTROL.test(rel))
    return { skip: 'its path holds a line break or control character (not read)' };
  if (forbiddenPath(rel)) return { skip: 'a credential or key file by its name (never read)' };
  const target = files.target ? files.target(rel) : rel;
  if (target === null) return 'gone';
  if (target === 'outside')
    return { skip: 'a symlink that leads outside the repository (not followed)' };
  if (target !== rel && forbiddenPath(target))
    return { skip: `a symlink to ${target}, a credential or key file (not followed)` };
  return null;
}
