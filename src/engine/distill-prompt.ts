// The distiller's prompt: a batch of archived messages numbered from 1, a reconcile sheet of
// existing memories as short handles (h1, h2, …), and the operation format. The wording is in
// distill-prompt-text.ts; this module fills it. The sheet's boundary holds only eligible current
// memories of the bound scopes (invariant 5), so a handle can never name a memory of another
// project; a lookup (distill-lookups.ts) adds a memory to the sheet only from that boundary.
// Every text put inside a fence is escaped: nothing it says can close or reopen one.
import { exclusionReason } from '../core/eligibility.js';
import { escapeForEnvelope } from '../core/inject.js';
import type { RevisionView } from '../core/types.js';
import type { TranscriptMessage } from '../core/transcript.js';
import { readableScopes, type EngineContext } from './context.js';
import {
  DISTILL_ANSWERS,
  DISTILL_HANDOFF,
  DISTILL_LAST_ROUND,
  DISTILL_NEXT_ROUND,
  DISTILL_PROMPT,
} from './distill-prompt-text.js';
import { rejectedHere } from './rejected-here.js';

export interface BatchMessage extends TranscriptMessage {
  /** 1-based number in the prompt. */
  n: number;
  /** The archive line it came from. */
  line: number;
}

export interface Sheet {
  /** Every memory the distiller may change in this batch, by handle (lookups add to it). */
  handles: Map<string, RevisionView>;
  lines: string[];
  /** The eligible current memories of the bound scopes: all a lookup may show or add. */
  boundary: Map<string, RevisionView>;
}

const words = (s: string) =>
  new Set(
    s
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length > 2),
  );

/** One memory as the sheet (and a lookup answer) shows it: `h3 [type subject=…] abstract`. */
export function sheetLine(h: string, v: RevisionView): string {
  const subject = v.fields.subject ? ` subject=${escapeForEnvelope(v.fields.subject, 80)}` : '';
  return `${h} [${escapeForEnvelope(v.type, 40)}${subject}] ${escapeForEnvelope(v.abstract, 240)}`;
}

/** The eligible current memories of the bound scopes, as recall would serve them. */
async function boundaryOf(ctx: EngineContext): Promise<RevisionView[]> {
  const now = ctx.clock().toISOString();
  const scopes = readableScopes(ctx.binding);
  const withheld = await rejectedHere(ctx);
  return (await ctx.store.listCurrent(scopes)).filter(
    (v) =>
      exclusionReason(v, {
        scopes,
        asOf: now,
        knownAt: null,
        minTrust: 'untrusted',
        includeQuarantined: false,
      }) === null && withheld(v) === null,
  );
}

export async function buildSheet(
  ctx: EngineContext,
  batchText: string,
  size: number,
): Promise<Sheet> {
  const views = await boundaryOf(ctx);
  const batchWords = words(batchText);
  const scored = views.map((v) => {
    let overlap = 0;
    for (const w of words(`${v.abstract} ${Object.values(v.fields).join(' ')}`))
      if (batchWords.has(w)) overlap++;
    return { v, overlap };
  });
  scored.sort(
    (a, b) =>
      b.overlap - a.overlap ||
      b.v.recorded_at.localeCompare(a.v.recorded_at) ||
      (a.v.id < b.v.id ? -1 : 1),
  );
  const handles = new Map<string, RevisionView>();
  const lines: string[] = [];
  scored.slice(0, Math.max(0, size)).forEach(({ v }, i) => {
    const h = `h${i + 1}`;
    handles.set(h, v);
    lines.push(sheetLine(h, v));
  });
  return { handles, lines, boundary: new Map(views.map((v) => [v.id, v])) };
}

/** Fills `{{NAME}}` slots in one pass: a filled-in text is never read for slots again. */
export function fill(template: string, slots: Record<string, string | number>): string {
  return template.replace(/\{\{([A-Z]+)\}\}/g, (whole, name: string) =>
    name in slots ? String(slots[name]) : whole,
  );
}

/**
 * A message's text inside the conversation fence: line breaks kept (continuation lines are
 * indented, so no line can pose as a message or a sheet entry), everything else escaped.
 */
function fencedMessage(text: string): string {
  return text
    .replace(/\r/g, '')
    .split('\n')
    .map((l) => {
      const indent = /^[ \t]*/.exec(l)![0].replace(/\t/g, '  ');
      return `${indent}${escapeForEnvelope(l, Number.POSITIVE_INFINITY)}`;
    })
    .join('\n    ');
}

export function buildPrompt(input: {
  messages: BatchMessage[];
  sheet: Sheet;
  types: string[];
  handoff: { session: string } | null;
  today: string;
  /** Executor rounds per batch (lookups); 1 means lookups are never answered. */
  rounds: number;
}): string {
  const msgs = input.messages.map((m) => `[${m.n}] ${m.role}: ${fencedMessage(m.text)}`);
  return fill(DISTILL_PROMPT, {
    TYPES: input.types.map((t) => escapeForEnvelope(t, 40)).join(', '),
    TODAY: input.today,
    HANDOFF: input.handoff
      ? fill(DISTILL_HANDOFF, { SESSION: escapeForEnvelope(input.handoff.session, 120) })
      : '',
    ROUNDS: input.rounds,
    SHEET: (input.sheet.lines.length ? input.sheet.lines : ['(none)']).join('\n'),
    COUNT: input.messages.length,
    MESSAGES: msgs.join('\n'),
  });
}

/** The prompt of round `round`: the first round's, every earlier round's answers, a closing line. */
export function roundPrompt(base: string, answers: string[][], round: number, rounds: number) {
  const blocks = answers.map((lines, i) =>
    fill(DISTILL_ANSWERS, {
      ROUND: i + 1,
      ANSWERS: (lines.length ? lines : ['(no lookup was answered)']).join('\n'),
    }),
  );
  return `${base}${blocks.join('')}${closing(round, rounds)}`;
}

function closing(round: number, rounds: number): string {
  if (round >= rounds) return fill(DISTILL_LAST_ROUND, { ROUND: round, ROUNDS: rounds });
  return round > 1 ? fill(DISTILL_NEXT_ROUND, { ROUND: round, ROUNDS: rounds }) : '';
}
