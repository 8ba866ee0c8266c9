// Fuzzed rejected values and texts that may run into them, for the indexed tombstone lookup's
// equivalence to the full scan (test/tombstone-index.test.ts on the pure matcher, the store
// conformance suite on both stores): respellings of a rejected value (case, spacing, homoglyphs,
// fullwidth, escapes, leetspeak, words split or joined, filler inserted, clauses reordered, the
// value inside a body) and controls (another number, a word added, unrelated text).
import fc from 'fast-check';

const CONTENT = ['deploy', 'cache', 'postgres', 'region', 'timeout', 'billing', 'worker', 'queue'];
const MORE = ['staging', 'database', 'password', 'rotates', 'sails', 'lasso', 'k8s', 'ec2'];
const FILLER = ['the', 'basically', 'we', 'should', 'just', 'really', 'please', 'is', 'a'];
const CONNECTIVE = ['for', 'with', 'to', 'on', 'after', 'before', 'not'];
const OTHER = ['the config lives in vault.', 'ops said so yesterday', 'Run it from the root.'];

/** Latin → Cyrillic/Greek look-alikes (as test/normalize.test.ts). */
const HOMOGLYPHS: Record<string, string> = {
  a: '\u0430',
  c: '\u0441',
  e: '\u0435',
  o: '\u043E',
  p: '\u0440',
  s: '\u0455',
  x: '\u0445',
  i: '\u0456',
};
const LEET: Record<string, string> = { a: '4', e: '3', i: '1', o: '0', s: '5', t: '7', g: '9' };

/** A rejected value: two to four content words, maybe a connective and a number. */
export const rejectedValue = fc
  .tuple(
    fc.shuffledSubarray([...CONTENT, ...MORE], { minLength: 1, maxLength: 4 }),
    fc.option(fc.constantFrom(...CONNECTIVE)),
    fc.option(fc.integer({ min: 0, max: 999 })),
    fc.boolean(),
  )
  .map(([words, conn, n, filler]) => {
    const ws = [...words];
    if (conn) ws.splice(1, 0, conn);
    if (n !== null) ws.push(String(n));
    return (filler ? 'we should ' : '') + ws.join(' ');
  });

const eachChar = (s: string, f: (ch: string, i: number) => string) => [...s].map(f).join('');

/** One respelling (or control) of `v`, chosen by `kind` and `pick`. */
export function respell(v: string, kind: number, pick: number): string {
  const words = v.split(' ');
  switch (kind % 16) {
    case 0:
      return v;
    case 1:
      return v.toUpperCase();
    case 2:
      return `  ${words.join('   ')}.  `;
    case 3:
      return eachChar(v, (ch, i) => ((i + pick) % 2 === 0 ? (HOMOGLYPHS[ch] ?? ch) : ch));
    case 4:
      return eachChar(v, (ch) =>
        /[a-z0-9]/.test(ch) ? String.fromCodePoint(ch.codePointAt(0)! + 0xfee0) : ch,
      );
    case 5:
      return v.replace(/ /g, '%20');
    case 6:
      return eachChar(v, (ch, i) => ((i + pick) % 3 === 0 ? (LEET[ch] ?? ch) : ch));
    case 7: {
      const k = pick % words.length;
      return words.map((w, i) => (i === k ? [...w].join(' ') : w)).join(' ');
    }
    case 8:
      return words.join('');
    case 9: {
      const k = pick % words.length;
      const w = words[k]!;
      words[k] = `${w.slice(0, 2)}-${w.slice(2)}`;
      return words.join(' ');
    }
    case 10: {
      words.splice(pick % (words.length + 1), 0, FILLER[pick % FILLER.length]!);
      return words.join(' ');
    }
    case 11: {
      const k = (pick % Math.max(1, words.length - 1)) + 1;
      return [...words.slice(k), ...words.slice(0, k)].join(' ');
    }
    case 12:
      return `${OTHER[pick % OTHER.length]} ${v}. ${OTHER[(pick + 1) % OTHER.length]}`;
    case 13:
      return `${OTHER[pick % OTHER.length]}\n\n${v.replace(' ', '\n')}\n\nThen build.`;
    case 14:
      return `${v} ${pick % 1000}`;
    default:
      return `${CONTENT[pick % CONTENT.length]} ${OTHER[pick % OTHER.length]}`;
  }
}

/** Texts to check: respellings of some of the rejected values, and controls. */
export const checkedText = (values: readonly string[]) =>
  fc
    .tuple(fc.nat(values.length - 1), fc.nat(15), fc.nat(1000))
    .map(([i, kind, pick]) => respell(values[i]!, kind, pick));
