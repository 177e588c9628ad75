// An object's history from GET /events?objectType=…&objectId=…: each change, when, and who made it
// (v3's actor: a user through an app, a client acting for itself, orderpay itself).
import type { components } from '@orderpay/client';
import { formatInstant } from '../format.ts';
import { DataTable } from './DataTable.tsx';

type Event = components['schemas']['Event'];

export function describeActor(actor: Event['actor']): string {
  if (!actor) return 'Not recorded';
  switch (actor.type) {
    case 'user':
      return `User ${actor.userId} via ${actor.clientId}`;
    case 'client':
      return `Client ${actor.clientId}`;
    default:
      return 'orderpay (automatic)';
  }
}

export function EventsTable({ events, caption }: { events: Event[]; caption: string }) {
  return (
    <DataTable
      caption={caption}
      showCaption
      columns={['When', 'Event', 'Who', 'Id']}
      empty="No events (events are kept for a limited time)."
      rows={events.map((event) => (
        <tr key={event.id}>
          <td>{formatInstant(event.createdAt)}</td>
          <td>{event.type}</td>
          <td>{describeActor(event.actor)}</td>
          <td>
            <code>{event.id}</code>
          </td>
        </tr>
      ))}
    />
  );
}
