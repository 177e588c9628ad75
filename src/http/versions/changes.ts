// Every version change, oldest version first; within a version, in the order they are undone
// last-to-first when rendering an older version. Adding a version is adding its changes here (and
// its number to core/api-versions.ts); routes and services stay as they are.
import { eventActors } from './event-actors.ts';
import { moneyObjects } from './money-objects.ts';
import { orderItems } from './order-items.ts';
import { lifecycleEvents, paymentLifecycle, refundLifecycle } from './payment-lifecycle.ts';
import type { VersionChange } from './version-change.ts';
import { webhookEndpointVersions } from './webhook-endpoint-versions.ts';

export const VERSION_CHANGES: readonly VersionChange[] = [
  moneyObjects,
  orderItems,
  paymentLifecycle,
  refundLifecycle,
  lifecycleEvents,
  eventActors,
  webhookEndpointVersions,
];
