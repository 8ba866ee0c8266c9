// Measures the write-time screen's false-positive rate on a benign corpus: every message of the
// dev benchmark transcripts (LongMemEval-S haystack sessions, LoCoMo turns), deduplicated, is
// screened, and the share flagged as injection or carrying a secret is written to a result file.
// Usage: node dist/bench/src/screen-fp.js [--out FILE] [--data-dir DIR]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { screenText } from '../../src/core/screen.js';

// dist/bench/src/screen-fp.js or bench/src/screen-fp.ts: the repository root is three levels up
// from the compiled file and two from the source file; find it by its package.json.
function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
        name?: string;
      };
      if (pkg.name === 'mneme') return dir;
    } catch {
      // not here; go up
    }
    dir = path.dirname(dir);
  }
  throw new Error('screen-fp: cannot find the repository root (package.json named mneme)');
}

interface LongMemEvalItem {
  haystack_sessions: { role: string; content: string }[][];
}
type LocomoConversation = { conversation: Record<string, unknown> };

function longMemEvalTexts(file: string): string[] {
  const items = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as LongMemEvalItem[];
  return items.flatMap((item) => item.haystack_sessions.flat().map((m) => m.content));
}

function locomoTexts(file: string): string[] {
  const convs = JSON.parse(readFileSync(file, 'utf8')) as LocomoConversation[];
  const out: string[] = [];
  for (const { conversation } of convs) {
    for (const [key, value] of Object.entries(conversation)) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(value)) continue;
      for (const turn of value as { text?: unknown }[]) {
        if (typeof turn.text === 'string') out.push(turn.text);
      }
    }
  }
  return out;
}

function main(): void {
  const { values } = parseArgs({
    options: { out: { type: 'string' }, 'data-dir': { type: 'string' } },
  });
  const root = repoRoot();
  const dataDir = path.resolve(values['data-dir'] ?? path.resolve(root, '../shared/bench'));
  const day = new Date().toISOString().slice(0, 10);
  const out = path.resolve(values.out ?? path.join(root, 'bench/results', `screen-fp-${day}.json`));

  const sources = {
    longmemeval: path.join(dataDir, 'longmemeval/longmemeval_s_cleaned.dev150.json.gz'),
    locomo: path.join(dataDir, 'locomo/locomo10.dev.json'),
  };
  const lme = longMemEvalTexts(sources.longmemeval);
  const locomo = locomoTexts(sources.locomo);
  const texts = [...new Set([...lme, ...locomo])].filter((t) => t.trim() !== '');

  let injection = 0;
  let secret = 0;
  const byRule: Record<string, number> = {};
  const examples: { rule: string; kind: string; excerpt: string }[] = [];
  for (const text of texts) {
    const r = screenText(text);
    if (r.injection) injection++;
    if (r.secrets.length > 0) secret++;
    for (const f of r.findings) {
      byRule[f.rule] = (byRule[f.rule] ?? 0) + 1;
      if (examples.length < 20) examples.push({ rule: f.rule, kind: f.kind, excerpt: f.excerpt });
    }
  }
  const rate = (n: number) => Number((n / texts.length).toFixed(6));
  const result = {
    corpus: 'longmemeval_s_cleaned.dev150 haystack messages + locomo10.dev turns, deduplicated',
    sources: Object.values(sources).map((p) => path.relative(root, p)),
    messages_read: { longmemeval: lme.length, locomo: locomo.length },
    texts: texts.length,
    injection_flagged: injection,
    secret_flagged: secret,
    fp_rate_injection: rate(injection),
    fp_rate_secret: rate(secret),
    by_rule: byRule,
    examples,
  };
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(
    `screen-fp: ${texts.length} texts, injection ${injection} (${(rate(injection) * 100).toFixed(3)}%), ` +
      `secret ${secret} (${(rate(secret) * 100).toFixed(3)}%) → ${path.relative(process.cwd(), out)}`,
  );
}

main();
