// A hook's answer in its host's dialect. Claude Code and Codex take
// {"hookSpecificOutput": {"hookEventName", "additionalContext"}} on stdout; the generic dialect is
// {"context": "..."}. Events with nothing to add print nothing.
import type { Host } from '../../core/transcript.js';
import { HOST_EVENT_NAME, type HookEvent } from './payload.js';

export function hookOutput(host: Host, event: HookEvent, context: string): string {
  if (context === '') return '';
  if (host === 'generic') return `${JSON.stringify({ context })}\n`;
  return `${JSON.stringify({
    hookSpecificOutput: { hookEventName: HOST_EVENT_NAME[event], additionalContext: context },
  })}\n`;
}
