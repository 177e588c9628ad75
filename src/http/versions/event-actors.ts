// v3: an event says who made its change (`actor`, src/core/actor.ts): the accountability a staff
// console shows (who refunded what, and when). Readers and webhook endpoints of earlier versions
// get the envelope they always had.
import { reshape, type VersionChange, without } from './version-change.ts';

export const eventActors: VersionChange = {
  version: 3,
  description:
    'An event says who made its change: `actor` is a user (`userId`, and the `clientId` of the app they used), a client acting for itself (`clientId`), or orderpay itself (`system`: a payment flagged for attention, an endpoint disabled after its failures); an outcome of a payment or refund names who asked for it. Null for events recorded before actors were.',
  resources: {
    Event: {
      schema: (newer) => reshape(newer, (p) => without(p, ['actor'])),
      downgrade: ({ actor: _actor, ...event }) => event,
    },
  },
  requests: {},
};
