// Who made a change, as its event records it (docs/webhooks.md, "Who made a change"): a user
// through a client, a client acting for itself, or orderpay on its own (a payment flagged for
// attention, a webhook endpoint disabled by its failures). An outcome that arrives later (a
// payment's, a refund's) names who asked for it, kept with the payment or refund, whoever records
// it: the request, the completer or the processor's notification.
import type { Principal } from './principal.ts';

export type Actor = { type: 'user'; userId: number; clientId: string } | { type: 'client'; clientId: string } | { type: 'system' };

/** orderpay itself: no request behind the change. */
export const SYSTEM_ACTOR: Actor = Object.freeze({ type: 'system' });

/**
 * Who asked for a payment or a refund, as its outcome's event names them: kept with it since
 * migration 0017; orderpay for one asked for before.
 */
export function requesterOf(record: { requestedBy: Actor | null }): Actor {
  return record.requestedBy ?? SYSTEM_ACTOR;
}

export function actorOf(principal: Principal): Actor {
  return principal.kind === 'user'
    ? { type: 'user', userId: principal.userId, clientId: principal.clientId }
    : { type: 'client', clientId: principal.clientId };
}
