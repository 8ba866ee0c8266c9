// Slugs: derived from the type's key fields (or the abstract when none is given), so the same
// subject in one scope maps to one file, and two scopes never collide (the scope is the folder).
import { sha256 } from './hash.js';
import type { TypeSchema } from './schema.js';

export const SAFE_NAME = /^[a-z0-9](?:[a-z0-9._-]{0,118}[a-z0-9])?$/;

export function slugify(text: string, max = 64): string {
  const ascii = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const cut = ascii.slice(0, max).replace(/-+$/g, '');
  return cut;
}

export function deriveSlug(
  type: TypeSchema,
  fields: Record<string, string>,
  abstract: string,
  uniqueness: string,
): string {
  const key = type.keyFields
    .map((f) => fields[f])
    .filter((v): v is string => v !== undefined && v.trim() !== '')
    .join(' ');
  const base = key !== '' ? key : abstract;
  let slug = slugify(base, 64);
  // Non-Latin text slugifies to nothing; a hash keeps it addressable and stable.
  const needsHash = slug === '' || key === '' || type.addOnly;
  if (needsHash) {
    const h = sha256(`${base}\u0000${type.addOnly ? uniqueness : ''}`).slice(0, 8);
    slug = slug === '' ? `m-${h}` : `${slug.slice(0, 55)}-${h}`;
  }
  return slug;
}
