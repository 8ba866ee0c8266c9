// Write-time screening (interim version): secrets are redacted in place, prompt-injection
// patterns quarantine the memory. The full pattern table lands separately.
export interface ScreenFinding {
  kind: 'injection' | 'secret';
  rule: string;
  excerpt: string;
}

const SECRETS: [string, RegExp][] = [
  ['aws_access_key', /\bAKIA[0-9A-Z]{16}\b/g],
  ['github_token', /\bgh[pousr]_[A-Za-z0-9]{36,}\b/g],
  ['private_key', /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g],
];
const INJECTION: [string, RegExp][] = [
  [
    'ignore_previous',
    /\b(ignore|disregard|forget)\s+(all\s+)?(the\s+)?(previous|prior|above|earlier)\s+(instructions|context|prompts?)/i,
  ],
  ['fake_system_tag', /<\/?(system|mneme-memory)>|<\|im_start\|>/i],
];

export function screenText(text: string): {
  text: string;
  findings: ScreenFinding[];
  injection: boolean;
  secrets: string[];
} {
  const findings: ScreenFinding[] = [];
  let out = text;
  for (const [rule, re] of SECRETS) {
    out = out.replace(re, (m) => {
      findings.push({ kind: 'secret', rule, excerpt: `${m.slice(0, 4)}…` });
      return `[REDACTED:${rule}]`;
    });
  }
  for (const [rule, re] of INJECTION) {
    const m = re.exec(out);
    if (m) findings.push({ kind: 'injection', rule, excerpt: m[0].slice(0, 80) });
  }
  return {
    text: out,
    findings,
    injection: findings.some((f) => f.kind === 'injection'),
    secrets: [...new Set(findings.filter((f) => f.kind === 'secret').map((f) => f.rule))],
  };
}
