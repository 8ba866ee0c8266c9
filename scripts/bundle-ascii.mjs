// The bundle as ASCII (scripts/bundle.mjs). bin/mneme.js reads the bundle as one string at every
// start, and node decodes a file holding any non-ASCII byte character by character into a
// two-byte string: about 17M instructions for a 700 KB bundle, against 2M for ASCII. esbuild
// already escapes string literals; what it leaves (in comments, regular expressions and tagged
// templates) becomes a \uXXXX escape, which means the same character in a regular expression, a
// string or a template's cooked text (an astral character becomes its two surrogates, which is
// what it was in the source's UTF-16 too). Only a template's raw text would differ, and a
// character escaped with a backslash (`\→` would become `\\u2192`, a backslash and five letters):
// asciiOnly refuses both rather than change what the code means.
const NON_ASCII = /[\u0080-\uffff]/;

/** `code` with every non-ASCII character written as a \uXXXX escape; throws where that is unsafe. */
export function asciiOnly(code) {
  const raw = [...code.matchAll(/String\.raw`([^`]*)`/g)].find((m) => NON_ASCII.test(m[1]));
  const escaped = /\\[\u0080-\uffff]/.exec(code);
  if (raw || escaped)
    throw new Error(
      `cannot write as ASCII the non-ASCII text in ${raw ? raw[0].slice(0, 60) : escaped[0]}`,
    );
  return code.replace(
    /[\u0080-\uffff]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
