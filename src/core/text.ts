// Text preparation shared by every lexical index: CJK runs are split into characters so that
// word-based tokenizers can find them, and queries become an OR of quoted terms (any matching
// term makes a candidate; more matching terms rank higher). Stop words are dropped from queries.

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;
const CJK_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+/gu;

/** Space-separates CJK characters so each is a token. */
export function prepareForIndex(text: string): string {
  if (!CJK.test(text)) return text;
  return text.replace(CJK_RUN, (run) => ` ${[...run].join(' ')} `);
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
    "i'm i've i'd did does don't didn't what's tell know remember"
  ).split(/\s+/),
);

export interface QueryTerm {
  text: string;
  /** A CJK run, matched as a phrase of its characters. */
  phrase: boolean;
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

/** An FTS5 MATCH expression: OR of quoted terms, or null when the query has no terms. */
export function ftsMatchExpression(terms: readonly QueryTerm[]): string | null {
  if (terms.length === 0) return null;
  return terms
    .map((t) => (t.phrase ? `"${[...t.text].join(' ')}"` : `"${t.text.replace(/"/g, '""')}"`))
    .join(' OR ');
}
