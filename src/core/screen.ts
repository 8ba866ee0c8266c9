// Write-time screening (DESIGN §2 quarantine, issue 3 part 4): secrets are redacted in place as
// [REDACTED:kind] before anything is stored; prompt-injection shapes (override instructions,
// fake system/tool tags, role markers, hidden Unicode, exfiltration asks) mark the text for
// quarantine. Pure: the caller decides what to store. Rules live in screen-rules.ts.
import { confusableSkeleton } from './confusables.js';
import { stripInvisible } from './normalize.js';
import { HIDDEN_RULES, INJECTION_RULES, SECRET_RULES } from './screen-rules.js';

export interface ScreenFinding {
  kind: 'injection' | 'secret';
  rule: string;
  /** A short excerpt around the hit; for secrets only the kind and a 4-character prefix. */
  excerpt: string;
}

export interface ScreenResult {
  /** The text with every secret redacted. */
  text: string;
  findings: ScreenFinding[];
  injection: boolean;
  /** Kinds of secret redacted, each once. */
  secrets: string[];
}

/**
 * Subdivision flags (black flag, 2–7 tag letters or digits, cancel tag) are legitimate tag
 * character use; the black flag is sometimes lost in copy-paste, so it is optional here.
 */
const FLAG_TAG_SEQUENCE = /\u{1F3F4}?[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{2,7}\u{E007F}/gu;
/** Tag characters mirror ASCII (U+E0020–E007E); decoding them shows what was smuggled. */
const TAG_CHAR = /[\u{E0020}-\u{E007E}]/gu;
const BIDI_ISOLATE_OR_EMBED = /[\u202A\u202B\u2066-\u2069]/;
const RTL_LETTER = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFC]/;

const EXCERPT_RADIUS = 40;

function excerpt(text: string, index: number, length: number): string {
  const from = Math.max(0, index - EXCERPT_RADIUS);
  const to = Math.min(text.length, index + length + EXCERPT_RADIUS);
  const body = text.slice(from, to).replace(/\s+/g, ' ').trim();
  return `${from > 0 ? '…' : ''}${body}${to < text.length ? '…' : ''}`;
}

function redactSecrets(text: string, findings: ScreenFinding[], kinds: Set<string>): string {
  let out = text;
  for (const { kind, pattern, accept } of SECRET_RULES) {
    out = out.replace(pattern, (match: string, ...args: unknown[]) => {
      // The groups object is passed last only when the pattern has named groups.
      const last = args.at(-1);
      const groups =
        typeof last === 'object' && last !== null
          ? (last as Record<string, string | undefined>)
          : undefined;
      const secret = groups?.secret ?? match;
      if (accept && !accept(secret)) return match;
      kinds.add(kind);
      findings.push({ kind: 'secret', rule: kind, excerpt: `${kind}: ${secret.slice(0, 4)}…` });
      const pre = groups?.secret === undefined ? '' : (groups.pre ?? '');
      return `${pre}[REDACTED:${kind}]`;
    });
  }
  return out;
}

function hiddenFindings(text: string): ScreenFinding[] {
  const visible = text.replace(FLAG_TAG_SEQUENCE, '');
  const found: ScreenFinding[] = [];
  for (const { rule, pattern } of HIDDEN_RULES) {
    const m = pattern.exec(visible);
    if (m) found.push({ kind: 'injection', rule, excerpt: excerpt(reveal(visible), m.index, 0) });
  }
  if (BIDI_ISOLATE_OR_EMBED.test(text) && !RTL_LETTER.test(text)) {
    const i = text.search(BIDI_ISOLATE_OR_EMBED);
    found.push({ kind: 'injection', rule: 'hidden_bidi_isolate', excerpt: excerpt(text, i, 0) });
  }
  return found;
}

/** The text as a model may read it: tag characters decoded, invisibles gone, look-alikes folded. */
function reveal(text: string): string {
  const decoded = text.replace(TAG_CHAR, (ch) =>
    String.fromCodePoint(ch.codePointAt(0)! - 0xe0000),
  );
  return confusableSkeleton(stripInvisible(decoded).normalize('NFKC'));
}

/** Screens one text: redacts secrets, reports injection shapes. */
export function screenText(text: string): ScreenResult {
  const findings: ScreenFinding[] = [];
  const kinds = new Set<string>();
  const redacted = redactSecrets(text, findings, kinds);
  findings.push(...hiddenFindings(redacted));
  const revealed = reveal(redacted);
  for (const { rule, pattern } of INJECTION_RULES) {
    const m = pattern.exec(revealed);
    if (m) {
      findings.push({ kind: 'injection', rule, excerpt: excerpt(revealed, m.index, m[0].length) });
    }
  }
  return {
    text: redacted,
    findings,
    injection: findings.some((f) => f.kind === 'injection'),
    secrets: [...kinds],
  };
}
