// A small glob matcher for `applies_to` patterns (paths relative to the project root, '/'
// separated): `**` spans directories, `*` and `?` stay inside one segment, `{a,b}` alternates,
// `[abc]` is a class. Node 20's path.matchesGlob is experimental and warns on stderr, which a
// hook must not do, so the few rules needed are written out here.

const cache = new Map<string, RegExp>();

function escapeRe(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

export function globToRegExp(glob: string): RegExp {
  const hit = cache.get(glob);
  if (hit) return hit;
  let re = '';
  let depth = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const atStart = i === 0 || glob[i - 1] === '/';
        const atEnd = i + 2 === glob.length || glob[i + 2] === '/';
        i++;
        if (atStart && atEnd) {
          if (glob[i + 1] === '/') {
            i++;
            re += '(?:[^/]*/)*';
          } else re += '.*';
          continue;
        }
        re += '[^/]*';
        continue;
      }
      re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '{') {
      depth++;
      re += '(?:';
    } else if (c === '}' && depth > 0) {
      depth--;
      re += ')';
    } else if (c === ',' && depth > 0) re += '|';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end === -1) re += '\\[';
      else {
        const body = glob
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\');
        re += `[${body}]`;
        i = end;
      }
    } else re += escapeRe(c);
  }
  while (depth-- > 0) re += ')';
  let out: RegExp;
  try {
    out = new RegExp(`^${re}$`);
  } catch {
    out = /(?!)/; // an unparseable pattern matches nothing (fail closed)
  }
  cache.set(glob, out);
  return out;
}

/** Does the relative path match the glob? A directory glob `dir/` matches everything below. */
export function matchGlob(relPath: string, glob: string): boolean {
  const p = relPath.replace(/\\/g, '/').replace(/^\.\//, '');
  const g = glob.endsWith('/') ? `${glob}**` : glob;
  return globToRegExp(g).test(p);
}
