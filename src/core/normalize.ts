// Tombstone value normalisation and matching (DESIGN §2, invariant 8): a rejected value must stay
// rejected when it comes back respelled (case, width, homoglyphs, zero-width characters, spacing,
// punctuation, digits of another script) or restated (filler words added or removed, clauses
// reordered), while a different value (another number, version, name, region, a negation) must
// pass. Pure: no I/O, no module state.
import { confusableSkeleton } from './confusables.js';
import { sha256 } from './hash.js';
import type { Actor } from './types.js';

/** Invisible and zero-width characters, bidi controls, variation selectors and tag characters. */
// Listing combining code points in a class is the point here, so the lint rule does not apply.
const INVISIBLE =
  // eslint-disable-next-line no-misleading-character-class
  /[\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\u{1BCA0}-\u{1BCA3}\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/gu;

/** Combining diacritics of the Latin, Greek and Cyrillic blocks (not marks other scripts need). */
// eslint-disable-next-line no-misleading-character-class
const DIACRITICS = /[\u0300-\u036F\u1AB0-\u1AFF\u1DC0-\u1DFF\u20D0-\u20FF\uFE20-\uFE2F]/g;

/** Anything that is not a letter, digit or mark; and dots except a dot between two digits. */
const PUNCTUATION = /[^\p{L}\p{N}\p{M}.]+|(?<!\p{N})\.|\.(?!\p{N})/gu;

/** Letters that lower-casing alone does not fold (full case folding, Unicode CaseFolding.txt). */
const SPECIAL_FOLDS: Readonly<Record<string, string>> = { ß: 'ss', ẞ: 'ss', ſ: 's', ς: 'σ' };

/** Removes invisible characters (also used by the screen to reveal hidden directives). */
export function stripInvisible(text: string): string {
  return text.replace(INVISIBLE, '');
}

function caseFold(text: string): string {
  return text.toLowerCase().replace(/[ßẞſς]/g, (ch) => SPECIAL_FOLDS[ch] ?? ch);
}

const DECIMAL_DIGIT = /^\p{Nd}$/u;

/**
 * Decimal digits of every script (Arabic-Indic ٩٠, Devanagari ९०, Bengali, Thai, …) → ASCII, so
 * "every ٩٠ days" is the number 90 and "every ٣٠ days" the number 30. Unicode encodes decimal
 * digits only in runs of ten ascending code points that start at zero (a few blocks put runs
 * back to back), so a digit's value is its distance from the start of its run, modulo ten.
 */
function asciiDigits(text: string): string {
  return text.replace(/\p{Nd}/gu, (d) => {
    const cp = d.codePointAt(0)!;
    if (cp < 0x80) return d;
    let zero = cp;
    while (DECIMAL_DIGIT.test(String.fromCodePoint(zero - 1))) zero--;
    return String((cp - zero) % 10);
  });
}

/** normalizeValue before punctuation is folded (leetspeak matching needs `@`, `$`, `!`, `|`). */
function canonical(text: string): string {
  let t = stripInvisible(text).normalize('NFKD').replace(DIACRITICS, '').normalize('NFKC');
  t = confusableSkeleton(t);
  // Folding can produce new decomposable or look-alike forms (İ → i̇, Cherokee capitals).
  t = caseFold(t).normalize('NFKD').replace(DIACRITICS, '').normalize('NFKC');
  t = asciiDigits(confusableSkeleton(t).toLowerCase());
  return t
    .replace(/(?<=[\p{L}\p{N}])'(?=[\p{L}\p{N}])/gu, '') // don't → dont
    .replace(/(?<=\p{N}),(?=\p{N})/gu, ''); // 1,000 → 1000
}

/** The last step of normalizeValue, for text that is canonical already. */
function foldPunctuation(canon: string): string {
  return canon.replace(PUNCTUATION, ' ').replace(/\s+/g, ' ').trim();
}

/**
 * The canonical form a tombstone is keyed on: invisible characters removed, NFKC, Latin
 * diacritics dropped, confusable skeleton, case folded, decimal digits of any script made ASCII,
 * punctuation and whitespace folded.
 * Idempotent: normalizeValue(normalizeValue(x)) === normalizeValue(x).
 */
export function normalizeValue(text: string): string {
  return foldPunctuation(canonical(text));
}

/** sha256 of scope + NUL + normalised value: the exact-match key of a value tombstone. */
export function tombstoneKey(scope: string, text: string): string {
  return sha256(`${scope}\u0000${normalizeValue(text)}`);
}

// ---------------------------------------------------------------------------------------------
// Near-duplicates. Both sides are normalised and tokenised; FILLER words are dropped; the
// remaining "content" words must be the same set on both sides (any content word, number,
// version or negation added or removed makes it a different value); CONNECTIVE words count only
// toward the similarity score, which must reach the threshold (default 0.8: with the content
// words equal, roughly one connective word in five may differ). Order is not compared, which is
// what lets reordered clauses match — and also means a pure role swap ("A reports to B" vs
// "B reports to A") is treated as a restatement.
// NOT caught, by design: a full paraphrase (different words, same meaning). Tombstones stop a
// value coming back as the same words; semantic matching would refuse legitimate new values.
// ---------------------------------------------------------------------------------------------

/** Words that carry no value: articles, pronouns, auxiliaries, modals, hedges, politeness. */
const FILLER = new Set(
  (
    'a an the this that these those it its there here we our ours us i me my mine you your yours ' +
    'they them their he him his she her one ones is are was were be been being am do does did ' +
    'doing done have has had having will would shall should can could may might must need needs ' +
    'ought just really basically actually simply please kindly note also still already ' +
    'generally usually typically currently honestly literally definitely certainly probably ' +
    'perhaps maybe so very quite well ok okay yes hey hi now then thus hence therefore indeed ' +
    'and remember fyi important reminder always team project repo repository use uses using used'
  ).split(/\s+/),
);

/** Connectives: they may differ a little (see threshold) but never decide a match alone. */
const CONNECTIVE = new Set(
  (
    'or but for in on at from by with of into onto via per as about over under within ' +
    'across through when while if all every each any only both either too'
  ).split(/\s+/),
);

/** Negations are content: "use npm" and "do not use npm" are opposite values. */
const NEGATION = new Set(
  (
    'not no never none nor neither nobody nothing without cannot cant dont doesnt didnt isnt ' +
    'arent wasnt werent shouldnt wouldnt couldnt mustnt wont hasnt havent hadnt'
  ).split(/\s+/),
);

const CJK_CHAR = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;

/** Light, symmetric suffix stripping so "installs"/"install", "deployed"/"deploy" agree. */
function stem(token: string): string {
  if (!/^[a-z]+$/.test(token) || token.length <= 3) return token;
  let t = token;
  if (t.endsWith('ies') && t.length > 4) t = `${t.slice(0, -3)}y`;
  else if (/(?:ches|shes|sses|xes|zes)$/.test(t)) t = t.slice(0, -2);
  else if (t.endsWith('s') && !/(?:ss|us|is)$/.test(t)) t = t.slice(0, -1);
  else if (t.endsWith('ing') && t.length >= 6) t = t.slice(0, -3);
  else if (t.endsWith('ed') && t.length >= 5) t = t.slice(0, -2);
  if (t.endsWith('e') && t.length > 4) t = t.slice(0, -1);
  return t;
}

interface Analysis {
  norm: string;
  content: Set<string>;
  connective: Set<string>;
}

function analyse(text: string): Analysis {
  return analyseNorm(normalizeValue(text));
}

function analyseNorm(norm: string): Analysis {
  const content = new Set<string>();
  const connective = new Set<string>();
  for (const word of norm.split(' ')) {
    if (word === '') continue;
    const tokens = CJK_CHAR.test(word) ? [...word] : [word];
    for (const token of tokens) {
      if (FILLER.has(token)) continue;
      if (CONNECTIVE.has(token)) connective.add(token);
      else content.add(stem(token));
    }
  }
  return { norm, content, connective };
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const x of a) if (b.has(x)) shared++;
  return shared / (a.size + b.size - shared);
}

function describe(token: string): string {
  if (/\p{N}/u.test(token)) return `number or version "${token}"`;
  if (NEGATION.has(token)) return `negation "${token}"`;
  return `word "${token}"`;
}

/** Default similarity threshold over content + connective words (see the note above). */
export const NEAR_DUPLICATE_THRESHOLD = 0.8;

export interface NearDuplicate {
  match: boolean;
  /** Jaccard similarity of content + connective words, 0..1. */
  similarity: number;
  reason: string;
}

/** Does `candidate` restate the `rejected` value (filler words or clause order aside)? */
export function nearDuplicate(
  rejected: string,
  candidate: string,
  threshold = NEAR_DUPLICATE_THRESHOLD,
): NearDuplicate {
  return compare(analyse(rejected), analyse(candidate), threshold);
}

function compare(a: Analysis, b: Analysis, threshold: number): NearDuplicate {
  if (a.norm === b.norm) return { match: true, similarity: 1, reason: 'identical once normalised' };
  const all = (x: Analysis) => new Set([...x.content, ...x.connective]);
  const similarity = Number(jaccard(all(a), all(b)).toFixed(4));
  if (a.content.size === 0 || b.content.size === 0) {
    return { match: false, similarity, reason: 'no content words to compare beyond exact match' };
  }
  const added = [...b.content].find((t) => !a.content.has(t));
  if (added !== undefined) {
    return { match: false, similarity, reason: `candidate adds ${describe(added)}` };
  }
  const removed = [...a.content].find((t) => !b.content.has(t));
  if (removed !== undefined) {
    return { match: false, similarity, reason: `candidate drops ${describe(removed)}` };
  }
  if (similarity < threshold) {
    return {
      match: false,
      similarity,
      reason: `same content words but connectives differ (similarity ${similarity} < ${threshold})`,
    };
  }
  return {
    match: true,
    similarity,
    reason: 'same content words; differs only in filler words, connectives or order',
  };
}

/**
 * A near duplicate always has exactly the same content words, so this key (scope + sorted
 * content words) names the only tombstones a candidate can near-match: an index on it keeps
 * the check independent of how many tombstones a scope holds. Null when there are no content
 * words (only an exact match can apply then).
 */
export function contentKey(scope: string, text: string): string | null {
  const { content } = analyse(text);
  if (content.size === 0) return null;
  return sha256(`${scope}\u0000${[...content].sort().join(' ')}`);
}

// ---------------------------------------------------------------------------------------------
// Tombstones
// ---------------------------------------------------------------------------------------------

export interface Tombstone {
  key: string;
  scope: string;
  kind: 'value';
  /** normalizeValue of the rejected text: what near-duplicate checks compare against. */
  value_norm: string;
  reason: string | null;
  actor: Actor;
  at: string;
  from_op: string;
  memory: string | null;
}

/** The tombstone `text` runs into in `scope`: exact key first, then a near-duplicate. */
export function matchTombstone(
  tombstones: readonly Tombstone[],
  scope: string,
  text: string,
): Tombstone | null {
  const key = tombstoneKey(scope, text);
  const exact = tombstones.find((t) => t.key === key && t.scope === scope);
  if (exact) return exact;
  const candidate = analyse(text);
  for (const t of tombstones) {
    if (t.scope !== scope || t.kind !== 'value') continue;
    if (compare(analyse(t.value_norm), candidate, NEAR_DUPLICATE_THRESHOLD).match) return t;
  }
  return null;
}
