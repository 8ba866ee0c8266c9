// The operations `mneme bench serve` drives and their default shares (shared by the benchmark
// and the docs, which document only runs of the default mix).
// `health` (GET /api/health, no token, no store work beyond the probe) is no part of the default
// mix: `--mix health=1` measures what the clients, HTTP and the servers cost on their own, the
// floor under every other op's latency on the same machine.
export type OpName = 'recall' | 'remember' | 'supersede' | 'forget' | 'health';
export type Mix = Record<OpName, number>;

export const DEFAULT_MIX: Mix = {
  recall: 0.8,
  remember: 0.15,
  supersede: 0.035,
  forget: 0.015,
  health: 0,
};

/** The same shares (an op a mix does not name has share 0: older result files lack `health`). */
export function sameMix(a: Partial<Mix>, b: Partial<Mix>): boolean {
  const ops = new Set([...Object.keys(a), ...Object.keys(b)]) as Set<OpName>;
  return [...ops].every((k) => (a[k] ?? 0) === (b[k] ?? 0));
}
