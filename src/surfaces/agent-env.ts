// Is this process running inside an agent's session? Human-only surfaces (review, confirm,
// tombstone lift, the dashboard login) refuse there, and the CLI records an agent actor instead
// of a human one. Every such check calls agentSessionMarker; nothing else reads these variables.
//
// The rule fails closed: hosts add variables from release to release (Codex's CODEX_HOME and
// CODEX_MANAGED_BY_NPM, Claude Code's CLAUDE_CODE_*), so any variable of a host's family marks a
// session, not a list of the names known today.

/** A variable an agent host sets in the processes it runs: CLAUDECODE, CLAUDE_CODE*, CODEX_*. */
export function isAgentVariable(name: string): boolean {
  return name === 'CLAUDECODE' || name.startsWith('CLAUDE_CODE') || name.startsWith('CODEX_');
}

/**
 * The variable that marks an agent session, or null: MNEME_AGENT set to anything but empty or
 * `0`, or any non-empty host variable (isAgentVariable).
 */
export function agentSessionMarker(env: NodeJS.ProcessEnv = process.env): string | null {
  const own = env.MNEME_AGENT;
  if (own !== undefined && own !== '' && own !== '0') return 'MNEME_AGENT';
  for (const name of Object.keys(env).sort())
    if (isAgentVariable(name) && env[name] !== undefined && env[name] !== '') return name;
  return null;
}
