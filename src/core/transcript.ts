// Reading host transcripts (JSONL, one event per line) without trusting their shape: Claude Code
// lines carry `{type, message: {role, content}}`, Codex rollouts `{type, payload: {role,
// content}}`, the generic dialect `{role, content}`. Anything else is not a message.
import { sha256 } from './hash.js';

export const HOSTS = ['claude-code', 'codex', 'generic'] as const;
export type Host = (typeof HOSTS)[number];

export interface TranscriptMessage {
  role: 'user' | 'assistant';
  text: string;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const p of content) {
    if (typeof p === 'string') parts.push(p);
    else if (p && typeof p === 'object') {
      const o = p as Record<string, unknown>;
      const kind = typeof o.type === 'string' ? o.type : 'text';
      // Tool calls and tool results are not what was said; thinking is not either.
      if (!['text', 'input_text', 'output_text'].includes(kind)) continue;
      if (typeof o.text === 'string') parts.push(o.text);
    }
  }
  return parts.join('\n');
}

/** The role and spoken text of one raw transcript line, or null when it is not a message. */
export function messageOf(raw: string): TranscriptMessage | null {
  let o: unknown;
  try {
    o = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!o || typeof o !== 'object' || Array.isArray(o)) return null;
  const rec = o as Record<string, unknown>;
  if (rec.isMeta === true || rec.isSidechain === true) return null;
  const inner = (
    rec.message && typeof rec.message === 'object'
      ? rec.message
      : rec.payload && typeof rec.payload === 'object'
        ? rec.payload
        : rec
  ) as Record<string, unknown>;
  const role = inner.role ?? rec.role ?? rec.type;
  if (role !== 'user' && role !== 'assistant') return null;
  const text = textOf(inner.content).trim();
  if (text === '') return null;
  return { role, text };
}

/** A session id as a safe file name: unsafe characters replaced, a hash keeps it unique. */
export function safeSessionName(id: string): string {
  const cleaned = id
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^[._-]+/, '')
    .slice(0, 80);
  if (cleaned === id && cleaned !== '') return cleaned;
  return `${cleaned || 's'}-${sha256(id).slice(0, 10)}`;
}

export const isHost = (h: unknown): h is Host =>
  typeof h === 'string' && (HOSTS as readonly string[]).includes(h);
