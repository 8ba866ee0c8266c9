// Hosts speak different dialects: Claude Code and Codex take hookSpecificOutput, the generic
// dialect {"context"}; Codex names edited files inside an apply_patch command.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { hookOutput } from '../src/surfaces/hooks/output.js';
import { parsePayload } from '../src/surfaces/hooks/payload.js';
import { safeSessionName } from '../src/core/transcript.js';

it('answers in each host dialect, and prints nothing when there is nothing to add', () => {
  assert.deepEqual(JSON.parse(hookOutput('claude-code', 'pre-tool-use', 'X')), {
    hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: 'X' },
  });
  assert.deepEqual(JSON.parse(hookOutput('codex', 'session-start', 'X')), {
    hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: 'X' },
  });
  assert.deepEqual(JSON.parse(hookOutput('generic', 'session-start', 'X')), { context: 'X' });
  assert.equal(hookOutput('claude-code', 'session-start', ''), '');
});

it('reads edited files from Claude Code tool input and from a Codex apply_patch', () => {
  const cc = parsePayload(
    JSON.stringify({
      session_id: 's',
      tool_name: 'Write',
      tool_input: { file_path: '/p/src/a.ts', content: 'x' },
    }),
  );
  assert.deepEqual(cc.filePaths, ['/p/src/a.ts']);
  const codex = parsePayload(
    JSON.stringify({
      session_id: 's',
      tool_name: 'apply_patch',
      tool_input: {
        command:
          '*** Begin Patch\n*** Update File: src/billing/pay.ts\n@@\n-a\n+b\n*** Add File: src/new.ts\n+x\n*** End Patch',
      },
    }),
  );
  assert.deepEqual(codex.filePaths, ['src/billing/pay.ts', 'src/new.ts']);
  const bash = parsePayload(
    JSON.stringify({ session_id: 's', tool_name: 'Bash', tool_input: { command: 'ls' } }),
  );
  assert.deepEqual(bash.filePaths, []);
  assert.throws(() => parsePayload('[1]'));
  assert.equal(parsePayload(JSON.stringify({ session_id: 'a\u0000b' })).sessionId, null);
});

it('session ids become safe, distinct file names', () => {
  assert.equal(safeSessionName('abc-123'), 'abc-123');
  const evil = safeSessionName('../../etc/passwd');
  assert.match(evil, /^[A-Za-z0-9][A-Za-z0-9._-]*$/);
  assert.notEqual(safeSessionName('a/b'), safeSessionName('a_b'));
  assert.equal(safeSessionName(evil), evil);
});
