// The write-time screen's rule tables: secret shapes (redacted in place) and prompt-injection
// shapes (the memory is quarantined). Each rule is one reviewable regex with a stable name; the
// false-positive rate on ordinary conversation is measured by bench/src/screen-fp.ts. Every
// repetition is bounded (no unbounded quantifier after a common prefix) so a hostile 64 KB body
// cannot make a rule backtrack quadratically.

export interface SecretRule {
  kind: string;
  /** Global regex. With a `secret` group only that group is redacted; else the whole match. */
  pattern: RegExp;
  /** Extra check on the secret text (e.g. looks random, not a placeholder). */
  accept?: (secret: string) => boolean;
}

export interface InjectionRule {
  rule: string;
  pattern: RegExp;
}

/** Placeholders people write in docs instead of a real secret. */
const PLACEHOLDER =
  /^(?:[*x.•#-]+|password|passw(?:or)?d|pass|pwd|pw|secret|token|changeme|example|redacted|hunter2|\d{1,6})$|^[<[{$%]|example|placeholder|your[_-]?|my[_-]?(?:pass|secret|token)|xxxx|\*\*\*/i;

const isPlaceholder = (s: string): boolean => PLACEHOLDER.test(s);

function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) h -= (n / s.length) * Math.log2(n / s.length);
  return h;
}

/** A credential-like value: long, mixed character classes, high entropy, not code or a placeholder. */
export function looksRandom(s: string): boolean {
  if (s.length < 12 || isPlaceholder(s)) return false;
  if (/[()[\]{}<>]|\.\w+\(|^(?:process|os|env|self|this|config|settings)\b/i.test(s)) return false;
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/].filter((r) => r.test(s)).length;
  return /[0-9]/.test(s) && classes >= 2 && entropy(s) >= 3;
}

export const SECRET_RULES: readonly SecretRule[] = [
  {
    kind: 'private_key',
    pattern:
      /-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)/g,
  },
  { kind: 'anthropic_key', pattern: /\bsk-ant-[a-z]{2,8}\d{0,4}-[A-Za-z0-9_-]{20,400}/g },
  {
    kind: 'openai_key',
    pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,400}/g,
    accept: looksRandom,
  },
  { kind: 'aws_access_key', pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g },
  {
    kind: 'aws_secret_key',
    pattern:
      /(?<pre>\baws_?secret_?access_?key["']?\s*[:=]\s*["']?)(?<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
  },
  {
    kind: 'github_token',
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g,
  },
  { kind: 'gitlab_token', pattern: /\bglpat-[A-Za-z0-9_-]{20,100}/g },
  { kind: 'slack_token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,200}/g },
  {
    kind: 'slack_webhook',
    pattern: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9_-]+\/[A-Za-z0-9_-]+\/[A-Za-z0-9]+/g,
  },
  { kind: 'stripe_key', pattern: /\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,200}\b/g },
  { kind: 'google_api_key', pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { kind: 'npm_token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  {
    kind: 'jwt',
    pattern: /\beyJ[A-Za-z0-9_-]{10,1024}\.eyJ[A-Za-z0-9_-]{10,8192}\.[A-Za-z0-9_-]{10,1024}/g,
  },
  {
    // scheme://user:pass@host → scheme://user:[REDACTED:password_in_url]@host
    kind: 'password_in_url',
    pattern:
      /(?<pre>\b[a-z][a-z0-9+.-]{0,30}:\/\/[^\s:/@'"<>]{1,200}:)(?<secret>[^\s@/'"<>]{1,200})(?=@)/gi,
    accept: (s) => !isPlaceholder(s),
  },
  {
    // DB_PASSWORD=..., "api_key": "...", token: ... — only long random-looking values.
    kind: 'secret_assignment',
    pattern:
      /(?<pre>\b[\w-]{0,40}?(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|client[_-]?secret)["']?\s*[:=]\s*["']?)(?<secret>[^\s"'`,;]{12,400})/gi,
    accept: looksRandom,
  },
];

/** Words that make a request to send something an exfiltration, not an API call. */
const SENSITIVE = String.raw`(?:secrets?|credentials?|api[ _-]?keys?|access[ _-]?tokens?|passwords?|env(?:ironment)?\s+variables|\.env\b|ssh\s+keys?|private\s+keys?|system\s+prompt|(?:this|the|our|entire|whole)\s+(?:conversation|chat(?:\s+history)?)|(?:your|the|all)\s+memor(?:y|ies))`;

export const INJECTION_RULES: readonly InjectionRule[] = [
  {
    rule: 'ignore_previous',
    pattern:
      /\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|the|your|my|these|those|every|of)\s+){0,4}(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system|existing)\s+(?:instructions?|directions?|prompts?|context|rules|guidelines|messages|commands?|directives?|constraints|programming)\b/i,
  },
  {
    rule: 'ignore_your_instructions',
    pattern:
      /\b(?:ignore|disregard|forget|override)\s+(?:all\s+)?(?:of\s+)?(?:your\s+(?:instructions|system\s+prompt|guidelines|rules|programming)|the\s+(?:instructions|text|rules|prompt)\s+above)\b/i,
  },
  {
    rule: 'ignore_everything',
    pattern:
      /\b(?:ignore|disregard|forget)\s+(?:everything|all(?:\s+of)?(?:\s+the)?)\s+(?:above|before\s+this|prior|(?:that\s+)?you(?:'ve|\s+have|\s+were|\s+had)?\s+(?:been\s+)?told)\b/i,
  },
  {
    rule: 'new_persona',
    pattern:
      /\byou\s+are\s+(?:now|no\s+longer)\s+(?:an?\s+|the\s+|my\s+)?(?:(?:new|different|unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|free)\s+){0,4}(?:ai|assistant|model|chatbot|bot|persona|character|agent|dan|llm|gpt|claude|administrator|admin|root)\b/i,
  },
  {
    rule: 'unbound_persona',
    pattern:
      /\b(?:you\s+are\s+no\s+longer\s+(?:bound|restricted|limited|constrained)|(?:act|pretend|behave)\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken)|(?:developer|dan|god)\s+mode\s+(?:enabled|activated|on)\b)/i,
  },
  {
    rule: 'from_now_on',
    pattern:
      /\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must|shall)\s+(?:act|respond|behave|pretend|ignore|obey|only|always|never|answer\s+as)\b/i,
  },
  {
    rule: 'conceal_from_user',
    pattern:
      /\b(?:do\s+not|don't|never)\s+(?:(?:tell|inform|alert|notify)\s+the\s+user\s+(?:about|of)\s+(?:this|these|it)\b|mention\s+(?:this|these\s+instructions|it)\s+to\s+the\s+user\b)/i,
  },
  {
    // Not after an identifier character, so generics like Array<System> pass.
    rule: 'fake_tag',
    pattern:
      /(?<![\w$.])<\/?\s*(?:system|system[-_](?:prompt|message|instructions?)|tool[-_]?(?:result|call|use|output|response)s?|function[-_](?:results?|calls?)|mneme[-_]memory)(?:\s[^<>]{0,200})?>/i,
  },
  {
    rule: 'chat_template',
    pattern:
      /<\|(?:im_start|im_end|system|user|assistant|endoftext|begin_of_text|start_header_id|end_header_id|eot_id)\|>|\[\/?INST\]|<<\/?SYS>>/i,
  },
  {
    rule: 'role_marker',
    pattern:
      /^[ \t>*#-]{0,8}(?:system|assistant|developer)\s*:[^\n]{0,300}?\b(?:ignore|disregard|you\s+(?:must|will|are\s+now|shall)|from\s+now\s+on|new\s+instructions?|override|do\s+not\s+(?:tell|reveal|mention))\b/im,
  },
  {
    rule: 'exfil_send',
    pattern: new RegExp(
      String.raw`\b(?:send|post|upload|forward|transmit|exfiltrate|leak|email|submit)\b[^\n]{0,60}?\b` +
        SENSITIVE +
        String.raw`[^\n]{0,60}?\b(?:to|at|into)\s+(?:(?:https?|ftp):\/\/|[\w-]{1,63}(?:\.[\w-]{1,63}){0,6}\.(?:com|net|org|io|xyz|ru|cn|top|site|app|dev)\b)`,
      'i',
    ),
  },
  {
    rule: 'exfil_upload',
    pattern:
      /\b(?:curl|wget)\b[^\n]{0,200}?(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T|--upload-file|--post-file)[\s=][^\n]{0,200}?(?:~\/\.ssh|\.aws\/credentials|\.env\b|id_(?:rsa|ed25519|ecdsa)\b|\/etc\/(?:passwd|shadow)|\$\(\s*(?:cat|env|printenv)\b)/i,
  },
  {
    rule: 'pipe_to_shell',
    pattern: /\b(?:curl|wget)\b[^\n|;]{0,300}\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b/i,
  },
  {
    rule: 'read_secrets',
    pattern:
      /\b(?:include|print|reveal|output|dump|paste|attach|leak|send|upload|exfiltrate|post|share|email)\b[^\n]{0,40}?(?:~\/\.ssh\b(?!\/(?:config|known_hosts|authorized_keys|id_\w+\.pub))|\bid_(?:rsa|ed25519|ecdsa|dsa)\b(?!\.pub)|\.aws\/credentials|\/etc\/shadow|\.netrc\b|contents\s+of\s+(?:the\s+|your\s+)?\.env\b)/i,
  },
  {
    rule: 'reveal_prompt',
    pattern:
      /\b(?:print|reveal|show|output|repeat|leak|dump|display|disclose|tell\s+me|give\s+me|write\s+out|recite)\s+(?:me\s+)?(?:your|the\s+(?:hidden|secret|original|initial))\s+(?:(?:full|entire|complete|original|hidden|initial|exact|secret|verbatim)\s+){0,4}(?:system\s+prompt|system\s+message|(?:hidden|initial|original|secret|system)\s+instructions|developer\s+message)\b|\brepeat\s+(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:words|text|everything)\s+above\b/i,
  },
];

/** Characters that hide text: tag characters, bidi overrides, long invisible runs. */
export const HIDDEN_RULES: readonly InjectionRule[] = [
  { rule: 'hidden_tag_chars', pattern: /[\u{E0000}-\u{E007F}]/u },
  { rule: 'hidden_bidi_override', pattern: /[\u202D\u202E]/ },
  { rule: 'hidden_zero_width_run', pattern: /[\u200B-\u200D\u2060-\u2064\uFEFF\u180E]{4,}/ },
  { rule: 'hidden_variation_run', pattern: /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]{4,}/u },
];
