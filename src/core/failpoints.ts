// Test-only fault injection at named points of an idempotent write, a payment or a webhook delivery, to
// prove what survives a crash there. Set in process by AppOptions.failpoint, or for a whole process by
// ORDERPAY_FAILPOINTS, which is read only when NODE_ENV=test (src/main.ts) and is no part of the
// configuration. Every other run passes each point without cost.

/** Points where an idempotent write or a webhook delivery can be made to fail. */
export const FAILPOINT_NAMES = [
  'idempotency.after-recovery-point', // phase 1 committed (a payment recorded), the outside world not yet asked
  'payments.before-confirm', // the processor named the charge and its id is committed; not yet confirmed (src/flows/settle-payment.ts)
  'payments.before-outcome', // the processor answered; its answer not yet committed
  'idempotency.before-commit', // the work is done, its transaction not yet committed
  'idempotency.after-commit', // committed, the response not yet sent
  'webhooks.before-send', // a delivery claimed (leased), nothing sent (src/webhooks/dispatcher.ts)
  'webhooks.before-record', // the endpoint answered, the attempt not yet recorded
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

/** Thrown for an ORDERPAY_FAILPOINTS value that names no point or action. */
export class FailpointError extends Error {}

/**
 * ORDERPAY_FAILPOINTS ("name=action,…", e.g. "idempotency.before-commit=kill") as a failpoint;
 * undefined when unset. A misspelt point would never fire, and a crash test using it would prove
 * nothing: unknown names and actions are refused.
 */
export function failpointFromEnv(raw: string | undefined): Failpoint | undefined {
  const entries = raw?.trim() ? raw.split(',').map((entry) => entry.trim().split('=')) : [];
  if (entries.length === 0) return undefined;
  if (entries.some((e) => e.length !== 2 || !e[0] || !e[1])) {
    throw new FailpointError(`ORDERPAY_FAILPOINTS must be name=action pairs separated by commas, got "${raw}"`);
  }
  const configured = Object.fromEntries(entries) as Record<string, string>;
  for (const [name, action] of Object.entries(configured)) {
    if (!(FAILPOINT_NAMES as readonly string[]).includes(name))
      throw new FailpointError(`unknown failpoint "${name}"; known: ${FAILPOINT_NAMES.join(', ')}`);
    if (!ACTIONS[action])
      throw new FailpointError(`unknown failpoint action "${action}" for ${name}; known: ${Object.keys(ACTIONS).join(', ')}`);
  }
  return function triggerFailpoint(name) {
    const action = configured[name];
    if (action) ACTIONS[action]!();
  };
}
