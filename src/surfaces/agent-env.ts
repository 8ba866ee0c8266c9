// Is this process running inside an agent's session? Human-only surfaces (review, confirm,
// tombstone lift) refuse there, and the CLI records an agent actor instead of a human one.

const MARKERS = [
  'CLAUDECODE',
  'CLAUDE_CODE_ENTRYPOINT',
  'CLAUDE_CODE_SSE_PORT',
  'CODEX_SANDBOX',
  'CODEX_SANDBOX_NETWORK_DISABLED',
  'CODEX_SESSION_ID',
  'CODEX_THREAD_ID',
  'CODEX_CI',
];

export function agentSessionMarker(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.MNEME_AGENT === '1') return 'MNEME_AGENT=1';
  for (const m of MARKERS) if (env[m] !== undefined && env[m] !== '') return m;
  return null;
}
