// A hand-written confusable table in the spirit of UTS #39: characters that render like a Latin
// letter map to that letter, so a tombstoned value respelled with homoglyphs keys the same.
// NFKC already folds fullwidth, mathematical, circled and superscript forms; this covers what
// NFKC leaves alone (other scripts' look-alikes, small capitals, typographic punctuation).
// ASCII digits are deliberately NOT folded to letters (0→o, 1→l): numbers are the values that
// most often tell two memories apart.

/** Upper- and lower-case look-alikes, mapped before case folding so case stays meaningful. */
// prettier-ignore
const PAIRS: readonly (readonly [string, string])[] = [
  // Cyrillic, upper case
  ['А', 'A'], ['В', 'B'], ['Е', 'E'], ['Ѕ', 'S'], ['І', 'I'], ['Ј', 'J'], ['К', 'K'],
  ['М', 'M'], ['Н', 'H'], ['О', 'O'], ['Р', 'P'], ['С', 'C'], ['Т', 'T'], ['У', 'Y'],
  ['Х', 'X'], ['Ү', 'Y'], ['Һ', 'H'], ['Ԛ', 'Q'], ['Ԝ', 'W'], ['Ӏ', 'I'], ['Ԁ', 'D'],
  // Cyrillic, lower case
  ['а', 'a'], ['в', 'b'], ['г', 'r'], ['е', 'e'], ['к', 'k'], ['м', 'm'], ['н', 'h'],
  ['о', 'o'], ['п', 'n'], ['р', 'p'], ['с', 'c'], ['т', 't'], ['у', 'y'], ['х', 'x'],
  ['ь', 'b'], ['і', 'i'], ['ј', 'j'], ['ѕ', 's'], ['ԁ', 'd'], ['ԛ', 'q'], ['ԝ', 'w'],
  ['ҽ', 'e'], ['һ', 'h'], ['ӏ', 'l'], ['ү', 'y'], ['ұ', 'y'], ['ҳ', 'x'], ['ɡ', 'g'],
  // Greek, upper case
  ['Α', 'A'], ['Β', 'B'], ['Ε', 'E'], ['Ζ', 'Z'], ['Η', 'H'], ['Ι', 'I'], ['Κ', 'K'],
  ['Μ', 'M'], ['Ν', 'N'], ['Ο', 'O'], ['Ρ', 'P'], ['Τ', 'T'], ['Υ', 'Y'], ['Χ', 'X'],
  ['Ϲ', 'C'], ['Ϳ', 'J'],
  // Greek, lower case
  ['α', 'a'], ['γ', 'y'], ['ε', 'e'], ['η', 'n'], ['ι', 'i'], ['κ', 'k'], ['ν', 'v'],
  ['ο', 'o'], ['ρ', 'p'], ['σ', 'o'], ['ς', 'c'], ['τ', 't'], ['υ', 'u'], ['χ', 'x'],
  ['ω', 'w'], ['ϲ', 'c'], ['ϳ', 'j'],
  // Armenian
  ['Օ', 'O'], ['Ս', 'U'], ['օ', 'o'], ['ս', 'u'], ['ց', 'g'], ['հ', 'h'], ['ո', 'n'],
  ['զ', 'q'], ['ա', 'w'],
  // Cherokee (upper case; their lower-case forms are added below)
  ['Ꭺ', 'A'], ['Ᏼ', 'B'], ['Ꮯ', 'C'], ['Ꭼ', 'E'], ['Ꮐ', 'G'], ['Ꮋ', 'H'], ['Ꭻ', 'J'],
  ['Ꮶ', 'K'], ['Ꮮ', 'L'], ['Ꮇ', 'M'], ['Ꮲ', 'P'], ['Ꮢ', 'R'], ['Ꮪ', 'S'], ['Ꭲ', 'T'],
  ['Ꮩ', 'V'], ['Ꮃ', 'W'], ['Ꮓ', 'Z'],
  // Lisu
  ['ꓮ', 'A'], ['ꓐ', 'B'], ['ꓚ', 'C'], ['ꓓ', 'D'], ['ꓰ', 'E'], ['ꓝ', 'F'], ['ꓖ', 'G'],
  ['ꓧ', 'H'], ['ꓲ', 'I'], ['ꓙ', 'J'], ['ꓗ', 'K'], ['ꓡ', 'L'], ['ꓟ', 'M'], ['ꓠ', 'N'],
  ['ꓳ', 'O'], ['ꓑ', 'P'], ['ꓣ', 'R'], ['ꓢ', 'S'], ['ꓔ', 'T'], ['ꓴ', 'U'], ['ꓦ', 'V'],
  ['ꓪ', 'W'], ['ꓫ', 'X'], ['ꓬ', 'Y'], ['ꓜ', 'Z'],
  // Latin look-alikes outside ASCII that NFKC keeps (small capitals, IPA, dotless, barred)
  ['ı', 'i'], ['ȷ', 'j'], ['ɑ', 'a'], ['ɩ', 'i'], ['ɪ', 'i'], ['ʏ', 'y'], ['ᴀ', 'a'],
  ['ʙ', 'b'], ['ᴄ', 'c'], ['ᴅ', 'd'], ['ᴇ', 'e'], ['ɢ', 'g'], ['ʜ', 'h'], ['ᴊ', 'j'],
  ['ᴋ', 'k'], ['ʟ', 'l'], ['ᴍ', 'm'], ['ɴ', 'n'], ['ᴏ', 'o'], ['ᴘ', 'p'], ['ʀ', 'r'],
  ['ꜱ', 's'], ['ᴛ', 't'], ['ᴜ', 'u'], ['ᴠ', 'v'], ['ᴡ', 'w'], ['ᴢ', 'z'], ['ɛ', 'e'],
  ['ɵ', 'o'], ['ł', 'l'], ['đ', 'd'], ['ƒ', 'f'], ['ǀ', 'l'], ['Ɩ', 'l'], ['Ɪ', 'I'],
  ['Ɑ', 'A'], ['Ɡ', 'G'], ['Ł', 'L'], ['Đ', 'D'],
  // Typographic punctuation that matters for tokenising (apostrophes join contractions)
  ['\u2018', "'"], ['\u2019', "'"], ['\u201B', "'"], ['\u2032', "'"], ['\u02BC', "'"],
  ['\u00B4', "'"], ['\u0060', "'"], ['\u201C', '"'], ['\u201D', '"'], ['\u2033', '"'],
  ['\u2010', '-'], ['\u2011', '-'], ['\u2012', '-'], ['\u2013', '-'], ['\u2014', '-'],
  ['\u2015', '-'], ['\u2212', '-'], ['\u2024', '.'], ['\u00B7', '.'],
];

function build(): ReadonlyMap<string, string> {
  const map = new Map<string, string>(PAIRS);
  // Scripts whose capitals have lower-case forms (Cherokee) reach us in either case.
  for (const [from, to] of PAIRS) {
    const lower = from.toLowerCase();
    if (lower !== from && !map.has(lower)) map.set(lower, to.toLowerCase());
  }
  return map;
}

/** Look-alike character → Latin (or ASCII punctuation) prototype. */
export const CONFUSABLES: ReadonlyMap<string, string> = build();

/** Replaces every look-alike character with its prototype; other characters pass through. */
export function confusableSkeleton(text: string): string {
  let out = '';
  for (const ch of text) out += CONFUSABLES.get(ch) ?? ch;
  return out;
}
