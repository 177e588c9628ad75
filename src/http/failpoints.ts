// Test-only fault injection at named points of a write, to prove what survives a crash there.
// Configured by ORDERPAY_FAILPOINTS (only when NODE_ENV=test, see src/config.ts) or, in process,
// by AppOptions.failpoint. Every other run passes each point without cost.
import type { Config } from '../config.ts';

/** Points where the payment write path can be made to fail. */
export type FailpointName =
  | 'idempotency.before-commit' // the work is done, its transaction not yet committed
  | 'idempotency.after-commit'; // committed, the response not yet sent

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
  for (const [name, action] of configured) if (!ACTIONS[action]) throw new Error(`unknown failpoint action "${action}" for ${name}`);
  return async function triggerFailpoint(name) {
    const action = config.failpoints[name];
    if (action) ACTIONS[action]!();
    await inProcess?.(name);
  };
}
