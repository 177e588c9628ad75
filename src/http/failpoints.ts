// Test-only fault injection at named points of a write, to prove what survives a crash there.
// Configured by ORDERPAY_FAILPOINTS (only when NODE_ENV=test, see src/config.ts) or, in process,
// by AppOptions.failpoint. Every other run passes each point without cost.
import type { Config } from '../config.ts';

/** Points where an idempotent write can be made to fail. */
export const FAILPOINT_NAMES = [
  'idempotency.before-commit', // the work is done, its transaction not yet committed
  'idempotency.after-commit', // committed, the response not yet sent
] as const;
export type FailpointName = (typeof FAILPOINT_NAMES)[number];

export type Failpoint = (name: FailpointName) => void | Promise<void>;

const ACTIONS: Record<string, () => void> = {
  // SIGKILL: no shutdown hook, no ROLLBACK, no response: as if the machine lost power.
  kill: () => process.kill(process.pid, 'SIGKILL'),
  throw: () => {
    throw new Error('failpoint');
  },
};

export function createFailpoint(config: Config, inProcess?: Failpoint): Failpoint | undefined {
  const configured = Object.entries(config.failpoints);
  if (configured.length === 0) return inProcess;
  // A misspelt point would never fire, and a crash test using it would prove nothing.
  for (const [name, action] of configured) {
    if (!(FAILPOINT_NAMES as readonly string[]).includes(name)) throw new Error(`unknown failpoint "${name}"; known: ${FAILPOINT_NAMES.join(', ')}`);
    if (!ACTIONS[action]) throw new Error(`unknown failpoint action "${action}" for ${name}; known: ${Object.keys(ACTIONS).join(', ')}`);
  }
  return async function triggerFailpoint(name) {
    const action = config.failpoints[name];
    if (action) ACTIONS[action]!();
    await inProcess?.(name);
  };
}
