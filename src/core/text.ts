// Text preparation shared by every lexical index: one tokenizer (indexTokens) turns a text into
// the stemmed tokens both stores index, so the files index and Postgres count the same words;
// CJK runs are split into characters. Queries become an OR of terms (any matching term makes a
// candidate; more matching terms rank higher). Stop words are dropped from queries.
import { stemmer } from 'stemmer';

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;
const CJK_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+/gu;
const CJK_SPLIT = /([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+)/u;

/**
 * The longest token either index keeps (Postgres refuses words over 2047 bytes; longer runs of
 * letters are never words anyone searches for).
 */
const MAX_TOKEN_CHARS = 200;
const STEMS = new Map<string, string>();
// eslint-disable-next-line no-control-regex
const ASCII_ONLY = /^[\x00-\x7f]*$/;
const ASCII_WORD = /[a-z0-9]+/g;

/** A lower-cased word's stem (Porter), memoised: a vocabulary repeats. */
export function stem(word: string): string {
  let s = STEMS.get(word);
  if (s === undefined) {
    if (STEMS.size > 200_000) STEMS.clear();
    s = CJK.test(word) || /^[\p{N}]+$/u.test(word) ? word : stemmer(word);
    STEMS.set(word, s);
  }
  return s;
}

/**
 * The tokens a text is indexed and searched as: NFKC, Latin diacritics folded, lower-cased,
 * split at every character that is not a letter or a digit, CJK characters one token each, each
 * word stemmed. Both stores index these tokens space-separated (see indexText), so tokenizing,
 * stemming and therefore every count the ranking model reads is the same on both.
 */
export function indexTokens(text: string): string[] {
  const out: string[] = [];
  if (ASCII_ONLY.test(text)) {
    // Most text is ASCII, where the normal forms and the diacritic fold change nothing, the
    // only letters and digits are [a-z0-9] once lower-cased and nothing is CJK: the same tokens
    // as below without the two normalisations and the Unicode scan (a rebuild tokenizes every
    // revision).
    for (const w of text.toLowerCase().match(ASCII_WORD) ?? [])
      if (w.length <= MAX_TOKEN_CHARS) out.push(stem(w));
    return out;
  }
  const folded = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .normalize('NFKC')
    .toLowerCase();
  for (const m of folded.matchAll(/[\p{L}\p{N}]+/gu)) {
    const w = m[0];
    // In text order: a CJK run's characters, the other letters between runs as words.
    for (const part of CJK.test(w) ? w.split(CJK_SPLIT) : [w]) {
      if (part === '') continue;
      if (CJK.test(part)) out.push(...part);
      else if (part.length <= MAX_TOKEN_CHARS) out.push(stem(part));
    }
  }
  return out;
}

/** A text as its index tokens, space-separated: what both stores' full-text columns hold. */
export const indexText = (text: string): string => indexTokens(text).join(' ');

const TERM_TOKENS = new Map<string, string[]>();

/**
 * A query term's index tokens: one stem, or (a CJK run, a word with inner marks) a phrase.
 * Memoised (a search asks for them several times); never modify the returned array.
 */
export function termTokens(t: QueryTerm): string[] {
  let tokens = TERM_TOKENS.get(t.text);
  if (tokens === undefined) {
    if (TERM_TOKENS.size > 10_000) TERM_TOKENS.clear();
    tokens = indexTokens(t.text);
    TERM_TOKENS.set(t.text, tokens);
  }
  return tokens;
}

export const STOP_WORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being ' +
    'below between both but by can could did do does doing down during each few for from further ' +
    'had has have having he her here hers herself him himself his how i if in into is it its itself ' +
    'just me more most my myself no nor not now of off on once only or other our ours ourselves out ' +
    'over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which ' +
    'while who whom why will with would you your yours yourself yourselves ' +
    "i'm i've i'd did does don't didn't what's tell know remember " +
    'also am anyone anything around etc ever every get gets getting got gotten let lets like may ' +
    'might must much many one ones please really said say says still thing things think us via ' +
    'want wants wanted way whose within without yet yes okay ok oh s t d ll m re ve'
  ).split(/\s+/),
);

export interface QueryTerm {
  text: string;
  /** A CJK run, matched as a phrase of its characters. */
  phrase: boolean;
}

// Words that shape a question's answer (a count, an order, a total) rather than name what it
// is about: a memory of the things asked for seldom contains them ("in total", "from earliest to
// latest", "how many different…"). "lately" asks for recency, which the ranker's recency factor
// and time windows carry; searched, its stem ("late") matches every "late" ("stayed up late").
// General English; never tuned to a data set's questions.
export const FRAME_WORDS = new Set(
  'total overall altogether order ordered earliest latest different various number amount lately'.split(
    /\s+/,
  ),
);

const COUNT =
  '\\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple of|few|several';
// Counted spans of time ("five days ago", "in the past three months") and bounds ("before
// today"): the memory of the event says "today" or names a date, never the span from now, so
// the span's words only match memories that happen to use them. The time window still applies.
const COUNTED_SPANS = new RegExp(
  `\\b(?:(?:${COUNT})\\s+(?:day|week|month|year)s?\\s+ago|(?:past|last|previous)\\s+(?:${COUNT})\\s+(?:day|week|month|year)s?|(?:before|until|till|prior to|up to)\\s+(?:today|now))\\b`,
  'g',
);

/**
 * The words a query is about: its search terms without counted spans of time and framing
 * words; the plain search terms when nothing else would be left.
 */
export function contentTerms(query: string): QueryTerm[] {
  const rest = query.toLowerCase().replace(COUNTED_SPANS, ' ');
  const terms = queryTerms(rest).filter((t) => !FRAME_WORDS.has(t.text) && !STOP_WORDS.has(t.text));
  return terms.length > 0 ? terms : queryTerms(query);
}

const SEVERAL =
  /\b(?:how many|in total|total|altogether|combined|order of|all (?:the|of the|my)|every|each)\b/;

/**
 * Whether a question gathers several memories: a count ("how many"), a total, an order, "all
 * the …". Its answer is spread over several events, so evidence shared between the best matches
 * (feedback) is worth more than for a question one memory answers.
 */
export function asksForSeveral(query: string): boolean {
  return SEVERAL.test(query.toLowerCase());
}

/**
 * Terms as a store searches them: the distinct words that have index tokens. Two words with one
 * stem stay two terms: BM25 sums over the query's words (query term frequency), so a word asked
 * in two forms ("artists … artist", as feedback terms often are) weighs twice, as FTS5 counts
 * each phrase of a MATCH and Postgres each term of the request.
 */
export function uniqueTerms(terms: readonly QueryTerm[]): QueryTerm[] {
  const seen = new Set<string>();
  return terms.filter((t) => {
    const key = t.text;
    if (termTokens(t).length === 0 || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A query as the ranking model scores it: its distinct terms, their tokens, which are phrases. */
export function queryShape(terms: readonly QueryTerm[]) {
  const distinct = uniqueTerms(terms);
  const tokens = distinct.map(termTokens);
  return { terms: distinct, tokens, phrase: tokens.map((t) => t.length > 1) };
}

/** Extracts search terms; falls back to stop words when the query is nothing but stop words. */
export function queryTerms(query: string): QueryTerm[] {
  const out: QueryTerm[] = [];
  const all: QueryTerm[] = [];
  const seen = new Set<string>();
  for (const m of query.normalize('NFKC').matchAll(/[\p{L}\p{N}_]+/gu)) {
    const word = m[0].toLowerCase();
    const parts = CJK.test(word)
      ? word
          .split(CJK_RUN)
          .filter(Boolean)
          .concat(word.match(CJK_RUN) ?? [])
      : [word];
    for (const p of parts) {
      if (seen.has(p)) continue;
      seen.add(p);
      const term = { text: p, phrase: CJK.test(p) };
      all.push(term);
      if (!STOP_WORDS.has(p)) out.push(term);
    }
  }
  return out.length > 0 ? out : all;
}

const quote = (t: QueryTerm): string | null => {
  const tokens = termTokens(t);
  return tokens.length > 0 ? `"${tokens.join(' ')}"` : null;
};

/**
 * An FTS5 MATCH expression over the index tokens (see indexText): an OR of one quoted phrase per
 * term (a word is a phrase of one stem), or null when the query has no terms.
 */
export function ftsMatchExpression(terms: readonly QueryTerm[]): string | null {
  const parts = terms.map(quote).filter((q): q is string => q !== null);
  return parts.length === 0 ? null : parts.join(' OR ');
}

/** Lower-case word tokens of a text, for feedback terms (CJK runs become characters). */
export function wordTokens(text: string): string[] {
  const out: string[] = [];
  for (const m of text.normalize('NFKC').matchAll(/[\p{L}\p{N}_]+/gu)) {
    const w = m[0].toLowerCase();
    if (CJK.test(w)) out.push(...[...w].filter((ch) => CJK.test(ch)));
    else out.push(w);
  }
  return out;
}

// ---- time expressions in queries ------------------------------------------------------------

const DAY = 86_400_000;
const UNIT_DAYS: Record<string, number> = { day: 1, week: 7, month: 30, year: 365 };
const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  couple: 2,
  few: 3,
  several: 3,
};
export const MONTH_NAMES = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

export interface TimeWindow {
  from: string;
  to: string;
}

/**
 * The period a query points at, relative to now: "3 weeks ago", "yesterday", "last month",
 * "in the past two months", "this week", "in March" (the latest March not after now).
 * Returns null when the query names no period. Windows are generous: a period ± half its size.
 */
export function timeWindow(query: string, now: string): TimeWindow | null {
  const q = query.toLowerCase();
  const t = Date.parse(now);
  if (Number.isNaN(t)) return null;
  const win = (fromMs: number, toMs: number): TimeWindow => ({
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
  });
  const num = (w: string) => (/^\d+$/.test(w) ? Number(w) : (NUMBER_WORDS[w] ?? null));
  let m =
    /\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple of|few|several)\s+(day|week|month|year)s?\s+ago\b/.exec(
      q,
    );
  if (m) {
    const n = num(m[1]!.replace(' of', '')) ?? 1;
    const d = UNIT_DAYS[m[2]!]! * DAY;
    const center = t - n * d;
    const slack = Math.max(2 * DAY, d / 2);
    return win(center - slack, center + slack);
  }
  m =
    /\b(?:past|last|previous)\s+(\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple of|few|several)\s+(day|week|month|year)s?\b/.exec(
      q,
    );
  if (m) {
    const n = num(m[1]!.replace(' of', '')) ?? 2;
    return win(t - n * UNIT_DAYS[m[2]!]! * DAY - DAY, t + DAY);
  }
  if (/\byesterday\b/.test(q)) return win(t - 2 * DAY, t);
  // "before today" / "until today" bound a span that ends now; they do not name today.
  if (/(?<!\b(?:before|until|till|prior to|up to)\s+)\b(?:today|tonight|this morning)\b/.test(q))
    return win(t - DAY, t + DAY);
  m = /\b(?:last|past|previous|this)\s+(week|month|year|weekend)\b/.exec(q);
  if (m) {
    const d = m[1] === 'weekend' ? 7 : UNIT_DAYS[m[1]!]!;
    const back = /\bthis\b/.test(m[0]) ? d : 2 * d;
    return win(t - back * DAY, t + DAY);
  }
  m = new RegExp(`\\b(?:in|during|since|of)\\s+(${MONTH_NAMES.join('|')})\\b`).exec(q);
  if (m) {
    const month = MONTH_NAMES.indexOf(m[1]!);
    const nowD = new Date(t);
    let year = nowD.getUTCFullYear();
    if (month > nowD.getUTCMonth()) year--;
    return win(Date.UTC(year, month, 1), Date.UTC(year, month + 1, 1));
  }
  return null;
}
