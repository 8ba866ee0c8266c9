// Tool errors as agents see them: `{code, message, hint}` JSON with isError set. Domain errors
// keep their string code; anything else becomes `internal` without leaking a stack. Text that
// would tell an agent how to reach a human-only action (review, confirm, lift, trust) is removed.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MnemeError, type ErrorCode } from '../../core/errors.js';

export interface ToolErrorBody {
  code: ErrorCode;
  message: string;
  hint?: string;
  /** The payload field a refusal is about (the engine's payload refusals name one). */
  field?: string;
}

// A backticked command naming a human-only verb, e.g. `mneme review` or `mneme tombstone lift X`.
const HUMAN_ONLY_COMMAND =
  /`[^`]*\b(review|confirm|accept|approve|reject-proposal|lift|unquarantine|trust)\b[^`]*`/gi;
const HUMAN_ONLY_WORDS = /\b(mneme (review|confirm|tombstone|trust)|dashboard|passphrase)\b/i;

/** Removes instructions for human-only actions from text an agent will read. */
export function agentSafe(text: string): string {
  return text.replace(HUMAN_ONLY_COMMAND, 'a person').replace(/\s+/g, ' ').trim();
}

export function toErrorBody(e: unknown): ToolErrorBody {
  if (e instanceof MnemeError) {
    const hint = e.hint === undefined || HUMAN_ONLY_WORDS.test(e.hint) ? undefined : e.hint;
    const body: ToolErrorBody = { code: e.code, message: agentSafe(e.message) };
    if (hint !== undefined) body.hint = agentSafe(hint);
    if (typeof e.details?.field === 'string') body.field = e.details.field;
    return body;
  }
  return { code: 'internal', message: 'internal error in the mneme MCP server' };
}

export function errorResult(body: ToolErrorBody): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: { error: body },
    isError: true,
  };
}

export function okResult(value: object): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(value) }],
    structuredContent: value as Record<string, unknown>,
  };
}
