// Human-only surfaces (review, confirm, tombstone lift) refuse inside an agent's session and
// without an interactive terminal, and say why. This keeps an agent from driving them by
// accident; the threat model (README) says what a determined same-user process can still do.
import { MnemeError } from '../core/errors.js';
import { agentSessionMarker } from './agent-env.js';

export function requireHumanSurface(
  what: string,
  env: NodeJS.ProcessEnv,
  tty: { stdin: boolean; stdout: boolean },
): void {
  const marker = agentSessionMarker(env);
  if (marker) {
    throw new MnemeError(
      'refused',
      `${what} refuses to run inside an agent session (${marker} is set)`,
      {
        hint: 'decisions are made by a person: run it yourself in a terminal outside the agent, or use the dashboard',
      },
    );
  }
  if (!tty.stdin || !tty.stdout) {
    throw new MnemeError('refused', `${what} needs an interactive terminal on stdin and stdout`, {
      hint: 'run it yourself in a terminal; to list proposals without deciding, use `mneme proposals`',
    });
  }
}
