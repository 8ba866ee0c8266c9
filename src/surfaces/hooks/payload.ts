// What a host sends a hook on stdin, read defensively: Claude Code and Codex send
// {session_id, transcript_path, cwd, hook_event_name, tool_name, tool_input, prompt, source};
// the generic dialect uses the same names. Nothing here trusts a field's type or presence.
export const HOOK_EVENTS = [
  'session-start',
  'user-prompt-submit',
  'pre-tool-use',
  'stop',
  'session-end',
  'pre-compact',
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export const HOST_EVENT_NAME: Record<HookEvent, string> = {
  'session-start': 'SessionStart',
  'user-prompt-submit': 'UserPromptSubmit',
  'pre-tool-use': 'PreToolUse',
  stop: 'Stop',
  'session-end': 'SessionEnd',
  'pre-compact': 'PreCompact',
};

export interface HookPayload {
  sessionId: string | null;
  transcriptPath: string | null;
  cwd: string | null;
  toolName: string | null;
  /** Files the tool is about to write. */
  filePaths: string[];
  prompt: string | null;
  source: string | null;
}

const str = (v: unknown, max = 4096): string | null =>
  typeof v === 'string' && v !== '' && v.length <= max && !v.includes('\u0000') ? v : null;

/** File paths named by an edit: Claude Code's file_path / notebook_path, Codex apply_patch. */
function filesOf(tool: string | null, input: unknown): string[] {
  if (!input || typeof input !== 'object') return [];
  const o = input as Record<string, unknown>;
  const out: string[] = [];
  for (const k of ['file_path', 'notebook_path', 'path']) {
    const v = str(o[k]);
    if (v) out.push(v);
  }
  const patch = str(o.command, 1_000_000) ?? str(o.patch, 1_000_000) ?? str(o.input, 1_000_000);
  if (patch && (tool === 'apply_patch' || patch.includes('*** Begin Patch'))) {
    for (const m of patch.matchAll(/^\*\*\* (?:Update|Add|Delete) File: (.+)$/gm))
      out.push(m[1]!.trim());
  }
  return [...new Set(out)].slice(0, 8);
}

export function parsePayload(text: string): HookPayload {
  const trimmed = text.trim();
  if (trimmed === '') throw new Error('no hook payload on stdin');
  const value: unknown = JSON.parse(trimmed);
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new Error('the hook payload is not a JSON object');
  const o = value as Record<string, unknown>;
  const toolName = str(o.tool_name, 200);
  return {
    sessionId: str(o.session_id, 500),
    transcriptPath: str(o.transcript_path),
    cwd: str(o.cwd),
    toolName,
    filePaths: filesOf(toolName, o.tool_input),
    prompt: str(o.prompt, 100_000),
    source: str(o.source, 100),
  };
}
