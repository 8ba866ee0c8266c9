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

/**
 * Marks the environment of a model session the distiller starts (`claude -p`, `codex exec`, a
 * command executor). Its host fires mneme's hooks like any session's; `mneme hook` sees the
 * mark and leaves at once, before it reads a setting or writes a log line, so the distiller's
 * own sessions are never archived, injected, distilled again or seen in the hook status.
 * MNEME_HOOKS_DISABLED stays set too, for a mneme too old to know the mark.
 */
export const DISTILLER_SESSION_VAR = 'MNEME_DISTILLER_SESSION';

export function distillerSessionEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, [DISTILLER_SESSION_VAR]: '1', MNEME_HOOKS_DISABLED: '1' };
}

/** Whether this process runs inside a session the distiller started. */
export function isDistillerSession(env: NodeJS.ProcessEnv): boolean {
  const v = env[DISTILLER_SESSION_VAR];
  return v !== undefined && v !== '' && v !== '0';
}
