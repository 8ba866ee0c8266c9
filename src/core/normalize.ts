// Tombstone value normalisation and matching (DESIGN §2, invariant 8): a rejected value must stay
// rejected when it comes back respelled (case, width, homoglyphs, zero-width characters, spacing,
// punctuation, digits of another script, letters spaced out, words split or joined, digits for
// letters) or restated (filler words added or removed, clauses reordered), in the abstract or
// inside a body, while a different value (another number, version, name, region, a negation)
// must pass. Pure: no I/O, no module state.
import { confusableSkeleton } from './confusables.js';
import { MnemeError } from './errors.js';
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

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  nbsp: ' ',
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  shy: '',
  zwsp: '',
};

/**
 * Text a model reads as the same characters: HTML character references (&#66;, &#x42;, &nbsp;)
 * and percent-encoded bytes (%20, %C3%A9) decoded, twice over for a doubly encoded value.
 * Malformed sequences stay as written.
 */
function decodeEscapes(text: string): string {
  let t = text;
  for (let round = 0; round < 2; round++) {
    const before = t;
    t = t
      .replace(/&#(?:x([0-9a-f]{1,6})|([0-9]{1,7}));?/gi, (m, hex?: string, dec?: string) => {
        const cp = hex !== undefined ? parseInt(hex, 16) : Number(dec);
        return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : m;
      })
      .replace(/&([a-z]+);/gi, (m, name: string) => NAMED_ENTITIES[name.toLowerCase()] ?? m)
      .replace(/(?:%[0-9a-f]{2})+/gi, (m) => {
        try {
          return decodeURIComponent(m);
        } catch {
          return m;
        }
      });
    if (t === before) break;
  }
  return t;
}

/** normalizeValue before punctuation is folded (leetspeak matching needs `@`, `$`, `!`, `|`). */
function canonical(text: string): string {
  // Escapes are decoded from the form the key compares (compatibility forms, look-alikes and
  // digits of any script made plain), so `%0０` (a fullwidth digit) or `%0А` (a Cyrillic A)
  // decodes as its ASCII twin does.
  const plain = asciiDigits(confusableSkeleton(stripInvisible(text).normalize('NFKC')));
  let t = stripInvisible(decodeEscapes(plain))
    .normalize('NFKD')
    .replace(DIACRITICS, '')
    .normalize('NFKC');
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
  /** `value`: a rejected value, kept normalised; `purged`: a purged one, kept only as keyed hashes. */
  kind: 'value' | 'purged';
  /** normalizeValue of the rejected text: what near-duplicate checks compare against ('' when purged). */
  value_norm: string;
  /** A purged value's features, keyed hashes only (kind `purged`; see core/purge.ts). */
  hashed?: HashedValue[];
  /** What `mneme purge --verify` looks for, keyed hashes only (kind `purged`; core/purge.ts). */
  probes?: { tokens: string[]; grams: { n: number; hashes: string[] }[] };
  reason: string | null;
  actor: Actor;
  at: string;
  from_op: string;
  memory: string | null;
}

/**
 * The tombstones of one scope, prepared once to check many texts against them (a write checks
 * its abstract, body and fields; a read checks every candidate it serves).
 */
export interface TombstoneMatcher {
  /** The tombstone `text` runs into: exact key first, then a near-duplicate or respelling. */
  value(text: string): Tombstone | null;
  /**
   * The tombstone a passage (a body, a field value) repeats, or null. A passage repeats a
   * rejected value when one of its paragraphs, sentences or lines restates it (as `value`
   * decides), or when a paragraph, look-alike respellings undone and filler words dropped, holds
   * all the value's content and connective words in the same order with nothing between them
   * (for values of at least PASSAGE_RUN_MIN_WORDS such words, two of them content) — unless a
   * negation comes right before them in the same clause ("we never run migrations before
   * deploy"). Linear in the passage's length for each tombstone whose words all occur in it.
   */
  passage(text: string): Tombstone | null;
}

export function tombstoneMatcher(
  tombstones: readonly Tombstone[],
  scope: string,
  keyed: Keyed | null = null,
): TombstoneMatcher {
  const inScope = tombstones.filter((t) => t.scope === scope && t.kind === 'value');
  const keys = new Map(inScope.map((t) => [t.key, t]));
  const prepared: [Tombstone, Rejected][] = inScope.map((t) => [t, prepareRejected(t)]);
  const purged = purgedMatcher(
    tombstones.filter((t) => t.scope === scope && t.kind === 'purged'),
    scope,
    keyed,
  );
  return {
    value(text) {
      const p = purged?.value(text);
      if (p) return p;
      if (inScope.length === 0) return null;
      const exact = keys.get(tombstoneKey(scope, text));
      if (exact) return exact;
      const candidate = piece(tokenize(text));
      for (const [t, r] of prepared) if (restates(r, candidate)) return t;
      return null;
    },
    passage(text) {
      const p = purged?.passage(text);
      if (p) return p;
      if (inScope.length === 0) return null;
      const tokens = tokenize(text);
      if (tokens.length === 0) return null;
      const whole = compactOf(tokens);
      let pieces: { paragraphs: Piece[]; others: Piece[] } | null = null;
      for (const [t, r] of prepared) {
        // A cheap necessary condition first: every content word of the value occurs somewhere.
        if (!r.probes.every((x) => whole.includes(x))) continue;
        pieces ??= splitPassage(tokens);
        if (pieces.others.some((c) => restates(r, c))) return t;
        for (const p of pieces.paragraphs) {
          if (restates(r, p)) return t;
          if (r.run.length < PASSAGE_RUN_MIN_WORDS || r.analysis.content.size < 2) continue;
          if (!r.probes.every((x) => p.compact.includes(x))) continue;
          if (holdsRun(contentWords(resegment(p.tokens, r.vocabulary())), r.run)) return t;
        }
      }
      return null;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Indexed lookup. Every way a text runs into a value tombstone other than its exact key passes
// the prefilter first: each of the tombstone's probes is a substring of the text's compact form
// (a passage's sentences and paragraphs are slices of its tokens, so their compact forms are
// substrings of the whole passage's). So is every window of up to TOMBSTONE_GRAM_CHARS
// characters of each probe: a tombstone's grams (tombstoneGrams). A write looks up every
// substring of up to that many characters of its texts' compact forms (their grams), plus their
// exact keys. A store indexes each tombstone under one of its grams, the one the fewest
// tombstones of its scope are indexed under when it is armed (pickTombstoneGram: the lists a
// write reads stay short whatever the vocabulary), and keeps all its grams with it: a tombstone
// found under one gram is a candidate only when the write holds every other gram of it too. The
// candidates are a superset of those the full scan could match, so the matcher built over them
// (in the store's own order) refuses exactly what the full scan refuses, at a cost set by the
// texts' length, not by how many tombstones the scope holds.
// ---------------------------------------------------------------------------------------------

/** How many characters a gram holds at most. */
export const TOMBSTONE_GRAM_CHARS = 6;

/** How many grams a tombstone keeps at most (any subset of them is a sound prefilter). */
export const TOMBSTONE_GRAMS_MAX = 32;

/**
 * The gram a tombstone was indexed under before tombstoneGrams (migration 10 of the Postgres
 * schema): the first TOMBSTONE_GRAM_CHARS characters of its longest probe; '' for a purged
 * tombstone and for a value without content words.
 */
export function tombstoneGram(t: Tombstone): string {
  if (t.kind !== 'value') return '';
  let longest: string[] = [];
  for (const p of prepareRejected(t).probes) {
    const chars = [...p];
    if (chars.length > longest.length) longest = chars;
  }
  return longest.slice(0, TOMBSTONE_GRAM_CHARS).join('');
}

/**
 * Every gram a text that could run into `t` holds (see above): each window of
 * TOMBSTONE_GRAM_CHARS characters of each probe (a shorter probe whole), the first window of
 * every probe first, at most TOMBSTONE_GRAMS_MAX, sorted. None — only its exact form, or for a
 * purged value its keyed hashes, can match, so every lookup reads it — for a purged tombstone
 * (it keeps no readable word) and for a value without content words.
 */
export function tombstoneGrams(t: Tombstone): string[] {
  if (t.kind !== 'value') return [];
  const windows = prepareRejected(t).probes.map((p) => {
    const chars = [...p];
    const n = Math.min(TOMBSTONE_GRAM_CHARS, chars.length);
    const out: string[] = [];
    for (let i = 0; i + n <= chars.length; i++) out.push(chars.slice(i, i + n).join(''));
    return out;
  });
  const grams = new Set<string>();
  for (const w of windows) if (w[0] !== undefined && w[0] !== '') grams.add(w[0]);
  for (const w of windows)
    for (const g of w) if (grams.size < TOMBSTONE_GRAMS_MAX && g !== '') grams.add(g);
  return [...grams].slice(0, TOMBSTONE_GRAMS_MAX).sort();
}

/**
 * The gram a store indexes a tombstone with these grams under: the one the fewest tombstones of
 * its scope are indexed under now (`postings`), the longer one on a tie, then the first in code
 * point order; '' (read by every lookup) when it has none.
 */
export function pickTombstoneGram(
  grams: readonly string[],
  postings: (gram: string) => number,
): string {
  let best = '';
  let bestN = Infinity;
  let bestLen = 0;
  for (const g of grams) {
    const n = postings(g);
    const len = [...g].length;
    if (n < bestN || (n === bestN && (len > bestLen || (len === bestLen && g < best)))) {
      best = g;
      bestN = n;
      bestLen = len;
    }
  }
  return best;
}

/**
 * Whether a tombstone with these grams, found in the index, is a candidate for a lookup holding
 * `probeGrams`: the write holds every one of them.
 */
export function holdsTombstoneGrams(
  grams: readonly string[],
  probeGrams: ReadonlySet<string>,
): boolean {
  return grams.every((g) => probeGrams.has(g));
}

/** What an indexed lookup is given: the texts' exact keys and their compact forms' grams. */
export interface TombstoneProbe {
  keys: string[];
  /** Every substring of up to TOMBSTONE_GRAM_CHARS characters of a compact form, '' included. */
  grams: string[];
}

/** The probe for checking `values` (as values) and `passages` (as passages) in `scope`. */
export function tombstoneProbe(
  scope: string,
  values: readonly string[],
  passages: readonly string[] = [],
): TombstoneProbe {
  const keys = new Set(values.map((v) => tombstoneKey(scope, v)));
  const grams = new Set<string>(['']);
  for (const text of [...values, ...passages]) {
    const chars = [...compactOf(tokenize(text))];
    for (let i = 0; i < chars.length; i++) {
      let g = '';
      for (let k = i; k < i + TOMBSTONE_GRAM_CHARS && k < chars.length; k++)
        grams.add((g += chars[k]));
    }
  }
  return { keys: [...keys], grams: [...grams] };
}

/**
 * The same index in memory, over one scope's armed tombstones: each under the gram
 * pickTombstoneGram picks as they are added in order, with all its grams. `candidates` answers
 * what a store's indexed lookup answers for the probe (by exact key, or found under one of the
 * probe's grams with every gram of it held), in the order the tombstones were added. Arming the
 * same key again replaces it in place; a lift deletes it. The Postgres store keeps one per scope
 * at a tombstone version, so a write whose tenant's tombstones did not move reads no index row.
 */
export class TombstoneIndex {
  private readonly byKey = new Map<string, IndexEntry>();
  private readonly byGram = new Map<string, Set<IndexEntry>>();
  private next = 0;

  constructor(readonly scope: string) {}

  get size(): number {
    return this.byKey.size;
  }

  add(t: Tombstone): void {
    if (t.scope !== this.scope) return;
    const prev = this.byKey.get(t.key);
    if (prev) this.byGram.get(prev.gram)?.delete(prev);
    const grams = tombstoneGrams(t);
    const gram = pickTombstoneGram(grams, (g) => this.byGram.get(g)?.size ?? 0);
    // Checked longest first: a write misses a long gram sooner than a short one.
    const check = [...grams].sort((x, y) => y.length - x.length);
    const entry: IndexEntry = { t, gram, check, seq: prev?.seq ?? this.next++ };
    this.byKey.set(t.key, entry);
    const list = this.byGram.get(gram);
    if (list) list.add(entry);
    else this.byGram.set(gram, new Set([entry]));
  }

  /** Forgets the tombstone of this key (lifted). */
  delete(key: string): void {
    const prev = this.byKey.get(key);
    if (!prev) return;
    this.byGram.get(prev.gram)?.delete(prev);
    this.byKey.delete(key);
  }

  candidates(probe: TombstoneProbe): Tombstone[] {
    if (this.byKey.size === 0) return [];
    const found = new Set<IndexEntry>();
    for (const key of probe.keys) {
      const a = this.byKey.get(key);
      if (a) found.add(a);
    }
    const held = new Set(probe.grams);
    for (const g of probe.grams) {
      const list = this.byGram.get(g);
      if (list) for (const a of list) if (holdsTombstoneGrams(a.check, held)) found.add(a);
    }
    return [...found].sort((a, b) => a.seq - b.seq).map((a) => a.t);
  }
}

interface IndexEntry {
  t: Tombstone;
  /** The gram it is indexed under. */
  gram: string;
  /** Its grams, longest first. */
  check: string[];
  /** Its place in the order of arming (a re-arm keeps it). */
  seq: number;
}

/** The tombstone `text` runs into in `scope`: exact key first, then a near-duplicate. */
export function matchTombstone(
  tombstones: readonly Tombstone[],
  scope: string,
  text: string,
  keyed: Keyed | null = null,
): Tombstone | null {
  return tombstoneMatcher(tombstones, scope, keyed).value(text);
}

// ---------------------------------------------------------------------------------------------
// Purged values. A purge keeps no readable form of the value: its tombstone holds keyed hashes
// (HMAC under the store's own secret, core/purge.ts) of the normalised value and of each word
// the near-duplicate check compares — content words (stemmed), connective words, and the run of
// both in order. A candidate is hashed word by word under the same key and compared the same
// way: exact once normalised; the same content words with connectives similar enough; in a
// passage, a sentence, line or paragraph that restates it, or a paragraph holding the run.
// NOT caught for a purged value (its words are not kept, so a candidate cannot be re-cut against
// them): look-alike respellings that split, join or leetspeak its words.
// ---------------------------------------------------------------------------------------------

/** A keyed hash (HMAC under the store's purge secret). */
export type Keyed = (text: string) => string;

/** What a purge tombstone keeps of one purged text: keyed hashes only. */
export interface HashedValue {
  /** keyed(scope + NUL + normalizeValue(text)). */
  exact: string;
  content: string[];
  connective: string[];
  /** Content and connective words in order, filler dropped (the passage run check). */
  run: string[];
}

export function hashValue(keyed: Keyed, scope: string, text: string): HashedValue {
  const a = analyse(text);
  return {
    exact: keyed(`${scope}\u0000${a.norm}`),
    content: [...a.content].map(keyed).sort(),
    connective: [...a.connective].map(keyed).sort(),
    run: contentWords([{ text: a.norm, brk: Break.None, normal: true }]).map((w) => keyed(w.word)),
  };
}

/** A token as core/purge.ts cuts a purged text's distinctive tokens (keys, passwords, ids). */
const KEY_TOKEN = /[\p{L}\p{N}](?:[\p{L}\p{N}_.-]*[\p{L}\p{N}])?/gu;

function purgedMatcher(
  tombstones: readonly Tombstone[],
  scope: string,
  keyed: Keyed | null,
): TombstoneMatcher | null {
  if (tombstones.length === 0) return null;
  if (keyed === null)
    throw new MnemeError('refused', 'purged values are armed but the purge secret is missing', {
      hint: "restore the store's purge secret (purge.key in the store directory, or the purge_secrets row on Postgres) from a backup; without it a purged value could be written again, so writes are refused",
    });
  const memo = new Map<string, string>();
  const h = (w: string) => {
    let v = memo.get(w);
    if (v === undefined) memo.set(w, (v = keyed(w)));
    return v;
  };
  const prepared = tombstones.flatMap((t) =>
    (t.hashed ?? []).map((v) => ({
      t,
      exact: v.exact,
      content: new Set(v.content),
      connective: new Set(v.connective),
      run: v.run,
    })),
  );
  const restatesHashed = (p: (typeof prepared)[number], a: Analysis): boolean => {
    if (h(`${scope}\u0000${a.norm}`) === p.exact) return true;
    if (p.content.size === 0 || a.content.size !== p.content.size) return false;
    for (const w of a.content) if (!p.content.has(h(w))) return false;
    const conn = new Set([...a.connective].map(h));
    let shared = p.content.size;
    for (const w of conn) if (p.connective.has(w)) shared++;
    const union = p.content.size + p.connective.size + conn.size - (shared - p.content.size);
    return shared / union >= NEAR_DUPLICATE_THRESHOLD;
  };
  // A purged key, password or identifier (a distinctive token of the purged text, or a string
  // the person named) written inside another text: refused wherever it stands.
  const keyTokens = tombstones.flatMap((t) =>
    (t.probes?.tokens ?? []).length > 0 ? [{ t, tokens: new Set(t.probes!.tokens) }] : [],
  );
  const holdsPurgedKey = (text: string): Tombstone | null => {
    if (keyTokens.length === 0) return null;
    for (const m of text.matchAll(KEY_TOKEN)) {
      const tok = m[0];
      if (tok.length < 8 || !/\p{L}/u.test(tok) || !/\p{N}/u.test(tok)) continue;
      const k = h(tok.toLowerCase());
      for (const x of keyTokens) if (x.tokens.has(k)) return x.t;
    }
    return null;
  };
  return {
    value(text) {
      const a = analyse(text);
      for (const p of prepared) if (restatesHashed(p, a)) return p.t;
      return holdsPurgedKey(text);
    },
    passage(text) {
      const key = holdsPurgedKey(text);
      if (key) return key;
      const tokens = tokenize(text);
      if (tokens.length === 0) return null;
      const pieces = splitPassage(tokens);
      for (const p of prepared) {
        if (pieces.others.some((c) => restatesHashed(p, c.analysis()))) return p.t;
        for (const para of pieces.paragraphs) {
          if (restatesHashed(p, para.analysis())) return p.t;
          if (p.run.length < PASSAGE_RUN_MIN_WORDS || p.content.size < 2) continue;
          const words = contentWords(para.tokens).map((w) => ({ ...w, word: h(w.word) }));
          if (holdsRun(words, p.run)) return p.t;
        }
      }
      return null;
    },
  };
}

/** A passage must hold at least this many content and connective words of the rejected value in
 * a row for the contiguous-run check; shorter values are matched sentence by sentence only. */
export const PASSAGE_RUN_MIN_WORDS = 3;

/** The tombstone a passage repeats (see TombstoneMatcher.passage). */
export function matchTombstoneInPassage(
  tombstones: readonly Tombstone[],
  scope: string,
  text: string,
): Tombstone | null {
  return tombstoneMatcher(tombstones, scope).passage(text);
}

// ---------------------------------------------------------------------------------------------
// Look-alike respellings. A candidate can keep the rejected words while changing how they are
// written: letters spaced out ("p a s s w o r d", "s.t.a.g.i.n.g", "s_t_a_g"), words split or
// joined ("stag-ing", "data base", "stagingdatabase"), digits or symbols for letters
// ("stag1ng", "5tag1ng", "p@ssw0rd"). Before the near-duplicate comparison the candidate is
// re-cut against the rejected value's own words: a stretch of ASCII tokens may be read as those
// words wherever every character matches, a leetspeak character matching only a letter it stands
// for and only inside a word that keeps at least one real letter. What cannot be re-cut stays
// the token it was, so a word the rejected value lacks still makes a different value.
// Numbers keep their identity: a cut never falls inside a number ("900" never holds "90"), two
// numbers are never joined ("9 00" stays two numbers; only single characters spaced out, as in
// "9 0", are read together), a number standing alone is never a letter ("plan 4" is not
// "plan a"), and a word of the value that mixes letters and digits (ec2, k8s, a commit hash) is
// an identifier that only matches character for character. A full paraphrase, or a number
// written out in words, is still not caught.
// ---------------------------------------------------------------------------------------------

/** Leetspeak: the letters a digit or symbol may stand for inside a word. */
const LEET: ReadonlyMap<string, string> = new Map([
  ['0', 'o'],
  ['1', 'il'],
  ['2', 'z'],
  ['3', 'e'],
  ['4', 'a'],
  ['5', 's'],
  ['7', 't'],
  ['8', 'b'],
  ['9', 'g'],
  ['@', 'a'],
  ['$', 's'],
  ['!', 'i'],
  ['|', 'il'],
]);

/**
 * For the prefilter only: each leetspeak character folds like every letter it may stand for, and
 * the symbols, which may also be mere separators ("p|a|s|s"), fold to nothing, and so do the
 * letters they may stand for (a, s, i, l) and those letters' digits (4, 5, 1).
 */
const LEET_FOLD: ReadonlyMap<string, string> = new Map([
  ['0', 'o'],
  ['2', 'z'],
  ['3', 'e'],
  ['7', 't'],
  ['8', 'b'],
  ['9', 'g'],
  ...[...'@$!|asil451'].map((ch): [string, string] => [ch, '']),
]);

/** A word with the leetspeak symbols kept; a dot only between digits (1.4.3). */
const LEET_WORD = /(?:[\p{L}\p{N}\p{M}@$!|]|(?<=\p{N})\.(?=\p{N}))+/gu;
/** Tokens that may be re-cut (words of other scripts stay whole). */
const SEGMENTABLE = /^[a-z0-9.@$!|]+$/;
/** Words of a rejected value that re-cutting may produce. */
const VOCABULARY_WORD = /^[a-z0-9.]+$/;
/** Leetspeak symbols: folded away as punctuation unless they stand for a letter. */
const SYMBOLS = '@$!|';
const WORD_CHAR = /[\p{L}\p{N}]/u;

/** What separates a token from the one before it. */
const enum Break {
  None = 0,
  /** , : ? ( ) " and a dash between spaces: a negation does not reach across it. */
  Clause = 1,
  Sentence = 2,
  Line = 3,
  Paragraph = 4,
}

interface Token {
  /** Canonical text (leetspeak symbols kept), or a word of the rejected value once re-cut. */
  text: string;
  brk: Break;
  /** `text` is a normalised word already (it came from the rejected value). */
  normal?: boolean;
}

/** A text (or part of one) ready to compare with rejected values. */
interface Piece {
  tokens: Token[];
  /** Every word character, separators removed, folded by LEET_FOLD: for the prefilter. */
  compact: string;
  analysis: () => Analysis;
}

interface Rejected {
  analysis: Analysis;
  /** Content words with their stem's last "y" dropped, folded by LEET_FOLD: each is a
   * substring of the compact form of any text that restates or contains the value. */
  probes: string[];
  /** Content and connective words in order, filler dropped. */
  run: string[];
  vocabulary: () => Vocabulary;
}

const foldLeet = (s: string) => {
  let out = '';
  for (const ch of s) out += LEET_FOLD.get(ch) ?? ch;
  return out;
};

function breakIn(gap: string, prev: Token | undefined): Break {
  if (prev === undefined) return Break.None;
  if (/\n\s*\n/.test(gap)) return Break.Paragraph;
  if (gap.includes('\n')) return Break.Line;
  if (/[.!?;]\s/.test(gap) || (prev.text.endsWith('!') && /\s/.test(gap))) return Break.Sentence;
  if (/[,:?()[\]{}<>"]|\s-|-\s/.test(gap)) return Break.Clause;
  return Break.None;
}

/** The canonical text cut into words, leetspeak symbols kept, with what separates them. */
function tokenize(text: string): Token[] {
  const canon = canonical(text);
  const tokens: Token[] = [];
  let last = 0;
  for (const m of canon.matchAll(LEET_WORD)) {
    tokens.push({ text: m[0], brk: breakIn(canon.slice(last, m.index), tokens.at(-1)) });
    last = m.index + m[0].length;
  }
  return tokens;
}

const compactOf = (tokens: readonly Token[]) => foldLeet(tokens.map((t) => t.text).join(''));

function piece(tokens: Token[]): Piece {
  let analysis: Analysis | null = null;
  return {
    tokens,
    compact: compactOf(tokens),
    // The tokens are canonical, so folding their punctuation is normalizeValue of the text.
    analysis: () =>
      (analysis ??= analyseNorm(foldPunctuation(tokens.map((t) => t.text).join(' ')))),
  };
}

/** Paragraphs (line breaks folded into them); and, apart, their sentences and single lines
 * (list items, headings) where these differ from the paragraph. */
function splitPassage(tokens: Token[]): { paragraphs: Piece[]; others: Piece[] } {
  const split = (at: (b: Break) => boolean) => {
    const out: [number, number][] = [];
    let start = 0;
    for (let i = 1; i <= tokens.length; i++) {
      if (i === tokens.length || at(tokens[i]!.brk)) {
        out.push([start, i]);
        start = i;
      }
    }
    return out;
  };
  const paragraphs = split((b) => b === Break.Paragraph);
  const seen = new Set(paragraphs.map(([a, b]) => `${a}:${b}`));
  const others: [number, number][] = [];
  for (const range of [
    ...split((b) => b === Break.Sentence || b === Break.Paragraph),
    ...split((b) => b >= Break.Line),
  ]) {
    const k = `${range[0]}:${range[1]}`;
    if (!seen.has(k)) {
      seen.add(k);
      others.push(range);
    }
  }
  const toPiece = ([a, b]: [number, number]) => piece(tokens.slice(a, b));
  return { paragraphs: paragraphs.map(toPiece), others: others.map(toPiece) };
}

/**
 * Prepared rejected values by value_norm (a pure function of it, so shared): a long-lived
 * process (a server, an MCP session) analyses each tombstone once, not on every write. Bounded:
 * cleared when it outgrows REJECTED_MEMO_MAX.
 */
const rejectedMemo = new Map<string, Rejected>();
const REJECTED_MEMO_MAX = 100_000;

function prepareRejected(t: Tombstone): Rejected {
  const memo = rejectedMemo.get(t.value_norm);
  if (memo) return memo;
  const analysis = analyse(t.value_norm);
  let vocab: Vocabulary | null = null;
  const r: Rejected = {
    vocabulary: () => (vocab ??= vocabulary(analysis.norm)),
    analysis,
    probes: [...analysis.content].map((w) => foldLeet(w.replace(/y$/, ''))),
    run: contentWords([{ text: analysis.norm, brk: Break.None, normal: true }]).map((w) => w.word),
  };
  if (rejectedMemo.size >= REJECTED_MEMO_MAX) rejectedMemo.clear();
  rejectedMemo.set(t.value_norm, r);
  return r;
}

/** Does the candidate restate the rejected value, as written or once respellings are undone? */
function restates(r: Rejected, c: Piece): boolean {
  if (!r.probes.every((x) => c.compact.includes(x))) return false;
  if (compare(r.analysis, c.analysis(), NEAR_DUPLICATE_THRESHOLD).match) return true;
  if (r.analysis.content.size === 0) return false;
  const vocab = r.vocabulary();
  // Nothing to re-cut when every token already is one of the value's words (or another script).
  const known = (t: Token) => vocab.get(t.text[0]!)?.some((w) => w.text === t.text) === true;
  if (c.tokens.every((t) => !SEGMENTABLE.test(t.text) || known(t))) return false;
  const recut = resegment(c.tokens, vocab);
  const norm = foldPunctuation(recut.map((u) => u.text).join(' '));
  return compare(r.analysis, analyseNorm(norm), NEAR_DUPLICATE_THRESHOLD).match;
}

/** The rejected value's words, indexed by every character that may spell their first letter. */
type Vocabulary = Map<string, VocabularyWord[]>;

interface VocabularyWord {
  text: string;
  /** Mixes letters and digits (ec2, k8s, a commit 3f2a9cb): matched character for character. */
  identifier: boolean;
}

function vocabulary(norm: string): Vocabulary {
  const byFirst: Vocabulary = new Map();
  const add = (ch: string, word: VocabularyWord) => {
    const list = byFirst.get(ch);
    if (!list) byFirst.set(ch, [word]);
    else list.push(word);
  };
  for (const text of new Set(norm.split(' '))) {
    if (!VOCABULARY_WORD.test(text)) continue;
    const word = { text, identifier: /[0-9]/.test(text) };
    const first = text[0]!;
    add(first, word);
    if (!word.identifier)
      for (const [ch, letters] of LEET) if (letters.includes(first)) add(ch, word);
  }
  return byFirst;
}

function resegment(tokens: readonly Token[], vocab: Vocabulary): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < tokens.length;) {
    let j = i;
    while (j < tokens.length && SEGMENTABLE.test(tokens[j]!.text)) j++;
    if (j === i) out.push(tokens[i++]!);
    else {
      out.push(...recutRun(tokens.slice(i, j), vocab));
      i = j;
    }
  }
  return out;
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isNumberChar = (c: string | undefined) => isDigit(c) || c === '.';
const isLetter = (c: string) => c >= 'a' && c <= 'z';

/**
 * Where a spelling of `w` that starts at s[p] can end: each character of `w` written as itself or,
 * for a letter, as a leetspeak stand-in; leetspeak symbols may also sit between its letters as
 * separators ("p|a|s|s"). A stand-in needs at least one real letter in the word, and a word that
 * mixes letters and digits (an identifier) allows no stand-in at all.
 */
function spellingEnds(s: string, p: number, w: VocabularyWord): number[] {
  const { text, identifier } = w;
  const standsFor = (c: string, x: string) =>
    !identifier && isLetter(x) && LEET.get(c)?.includes(x) === true;
  let symbols = false;
  for (let i = p; i < p + text.length && i < s.length; i++) symbols ||= SYMBOLS.includes(s[i]!);
  if (!symbols) {
    // The common case: one character for one character.
    if (p + text.length > s.length) return [];
    let letters = 0;
    let standIns = 0;
    for (let j = 0; j < text.length; j++) {
      const c = s[p + j]!;
      const x = text[j]!;
      if (c === x) letters += isLetter(x) ? 1 : 0;
      else if (standsFor(c, x)) standIns++;
      else return [];
    }
    return standIns === 0 || letters > 0 ? [p + text.length] : [];
  }
  // A symbol is a letter or a separator: follow both readings (state: j << 2 | has letter 1 |
  // has stand-in 2).
  const ends: number[] = [];
  let states = new Set([0]);
  for (let i = p; i < s.length && states.size > 0; i++) {
    const next = new Set<number>();
    const c = s[i]!;
    for (const state of states) {
      const j = state >> 2;
      const x = text[j]!;
      const step = (flags: number) => {
        if (j + 1 < text.length) next.add(((j + 1) << 2) | flags);
        else if (!(flags & 2) || flags & 1) ends.push(i + 1);
      };
      if (c === x) step((state & 3) | (isLetter(x) ? 1 : 0));
      else if (standsFor(c, x)) step((state & 3) | 2);
      if (j > 0 && SYMBOLS.includes(c)) next.add(state);
    }
    states = next;
  }
  return ends;
}

/**
 * Re-cuts a stretch of ASCII tokens into the rejected value's words where it can: a dynamic
 * programme over character positions that leaves as few tokens unexplained as possible, then
 * uses as few words as possible. Linear in the stretch's length times the words tried at each
 * position (only those whose first letter the character there may spell).
 */
function recutRun(run: readonly Token[], vocab: Vocabulary): Token[] {
  const s = run.map((t) => t.text).join('');
  const n = s.length;
  const tokenAt = new Int32Array(n + 1).fill(-1);
  const blocked = new Uint8Array(n + 1);
  let at = 0;
  run.forEach((t, k) => {
    tokenAt[at] = k;
    const prev = run[k - 1];
    // Two numbers side by side are two numbers, unless both are single characters spaced out.
    if (prev && isDigit(s[at - 1]) && isDigit(s[at]) && (prev.text.length > 1 || t.text.length > 1))
      blocked[at] = 1;
    at += t.text.length;
  });
  const nextBlocked = new Int32Array(n + 1);
  for (let q = n, next = n + 1; q >= 0; q--) {
    nextBlocked[q] = next;
    if (blocked[q]) next = q;
  }
  // A word may start or end at a token boundary, or anywhere else but inside a number.
  const cut = (p: number) =>
    p === 0 || p === n || tokenAt[p]! >= 0 || !(isNumberChar(s[p - 1]) && isNumberChar(s[p]));
  const unexplained = n + 2; // one unexplained token weighs more than any number of words
  const best = new Float64Array(n + 1).fill(Number.POSITIVE_INFINITY);
  const from = new Int32Array(n + 1).fill(-1);
  const made = new Array<Token | null>(n + 1).fill(null);
  best[0] = 0;
  const relax = (p: number, q: number, cost: number, unit: Token | null) => {
    if (cost < best[q]!) {
      best[q] = cost;
      from[q] = p;
      made[q] = unit;
    }
  };
  for (let p = 0; p < n; p++) {
    const here = best[p]!;
    if (here === Number.POSITIVE_INFINITY) continue;
    const token = run[tokenAt[p]!];
    if (token) {
      const weight = WORD_CHAR.test(token.text) ? unexplained : 0;
      relax(p, p + token.text.length, here + weight, token);
    }
    if (SYMBOLS.includes(s[p]!)) relax(p, p + 1, here, null);
    if (!cut(p)) continue;
    for (const w of vocab.get(s[p]!) ?? []) {
      for (const q of spellingEnds(s, p, w)) {
        if (nextBlocked[p]! < q || !cut(q)) continue;
        relax(p, q, here + 1, { text: w.text, brk: token?.brk ?? Break.None, normal: true });
      }
    }
  }
  const out: Token[] = [];
  for (let q = n; q > 0; q = from[q]!) {
    const unit = made[q];
    if (unit) out.push(unit);
  }
  return out.reverse();
}

interface RunWord {
  word: string;
  negation: boolean;
  /** A clause (or more) ends right before this word, or before filler dropped in front of it. */
  clause: boolean;
}

/** Content and connective words in order, filler dropped, stemmed as the comparison stems. */
function contentWords(tokens: readonly Token[]): RunWord[] {
  const out: RunWord[] = [];
  let clause = false;
  for (const t of tokens) {
    clause ||= t.brk !== Break.None;
    const norm = t.normal || !/[@$!|]/.test(t.text) ? t.text : foldPunctuation(t.text);
    for (const word of norm.split(' ')) {
      if (word === '') continue;
      for (const token of CJK_CHAR.test(word) ? [...word] : [word]) {
        if (FILLER.has(token)) continue;
        const connective = CONNECTIVE.has(token);
        out.push({ word: connective ? token : stem(token), negation: NEGATION.has(token), clause });
        clause = false;
      }
    }
  }
  return out;
}

/** Does `words` hold `run` contiguously, not right after a negation of the same clause? */
function holdsRun(words: readonly RunWord[], run: readonly string[]): boolean {
  outer: for (let i = 0; i + run.length <= words.length; i++) {
    for (let j = 0; j < run.length; j++) if (words[i + j]!.word !== run[j]) continue outer;
    if (i > 0 && words[i - 1]!.negation && !words[i]!.clause) continue;
    return true;
  }
  return false;
}
