// Webhook endpoints of a retired API version (docs/webhooks.md, "Versions"; decision 0117): at the
// version's sunset they are disabled, each with a webhook_endpoint.disabled event, rather than moved
// to a later version whose objects their receivers do not read. Every process looks, every second
// (a background job) and as it starts: the state is in the database, so processes started later,
// restarts and many processes at once all come to the same rows, and each is disabled once.
import { SYSTEM_ACTOR } from '../core/actor.ts';
import { type Clock, systemClock } from '../core/clock.ts';
import { retiredApiVersions } from '../core/api-versions.ts';
import type { Db } from '../db/db.ts';
import { recordEvent } from '../events/events.store.ts';
import { disableEndpointsPinnedTo } from './endpoints.store.ts';

/**
 * Once a look finds nothing left to disable, the next waits this long: creating or enabling an
 * endpoint of a retired version is refused, so only a write that began before the sunset and
 * committed after it can leave one.
 */
const QUIET_LOOK_INTERVAL_MS = 60_000;

export interface EndpointRetirementOptions {
  db: Db;
  deprecations: readonly { version: number; sunset: Date }[];
  now?: Clock;
  log: { warn(object: object, message: string): void };
}

export interface EndpointRetirement {
  /** Disables the enabled endpoints of every version retired by now; resolves with how many. */
  disableRetiredEndpoints(): Promise<number>;
}

export function createEndpointRetirement({ db, deprecations, now = systemClock, log }: EndpointRetirementOptions): EndpointRetirement {
  let quietUntil = 0;
  return {
    async disableRetiredEndpoints() {
      const at = now();
      const retired = retiredApiVersions(deprecations, at);
      // Before any sunset (most of a version's life) this asks the database nothing.
      if (retired.length === 0 || at.getTime() < quietUntil) return 0;
      const disabled = await db.transaction(async (tx) => {
        const endpoints = await disableEndpointsPinnedTo(tx, retired);
        // Disabled first: each event goes to the endpoints still enabled, not to these.
        for (const endpoint of endpoints) await recordEvent(tx, 'webhook_endpoint.disabled', endpoint, SYSTEM_ACTOR);
        return endpoints;
      });
      quietUntil = disabled.length === 0 ? at.getTime() + QUIET_LOOK_INTERVAL_MS : 0;
      if (disabled.length > 0) {
        log.warn(
          { endpointIds: disabled.map((endpoint) => endpoint.id), apiVersions: retired },
          'webhook endpoints disabled: the API version they are pinned to was retired',
        );
      }
      return disabled.length;
    },
  };
}
