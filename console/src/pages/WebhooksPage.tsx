// /console/webhooks: the webhook endpoints with their health (failing since, last success) and
// backlog, as GET /webhook-endpoints reads them live.
import { unwrap } from '@orderpay/client';
import { Link } from 'react-router';
import { DataTable } from '../components/DataTable.tsx';
import { FailureNotice } from '../components/FailureNotice.tsx';
import { useConsole } from '../context.ts';
import { formatInstant } from '../format.ts';
import { useLoad } from '../load.ts';

export function WebhooksPage() {
  const { api } = useConsole();
  const endpoints = useLoad(async () => unwrap(await api.GET('/webhook-endpoints', { params: { query: { pageSize: 100 } } })), []);
  return (
    <>
      <h1>Webhooks</h1>
      <p>
        Where orderpay sends its events. An endpoint's page has its delivery log, with each attempt, and lets you send an event again, ping
        it, rotate its secret or turn it off.
      </p>
      {endpoints.failure ? <FailureNotice failure={endpoints.failure} onRetry={endpoints.reload} /> : null}
      {endpoints.data ? (
        <section aria-labelledby="endpoints-found">
          <h2 id="endpoints-found">
            {endpoints.data.meta.total} {endpoints.data.meta.total === 1 ? 'endpoint' : 'endpoints'}
          </h2>
          <DataTable
            caption="Webhook endpoints with their health"
            columns={['Endpoint', 'URL', 'State', 'Failing since', 'Last success', 'Backlog', 'Oldest due']}
            rows={endpoints.data.data.map((endpoint) => (
              <tr key={endpoint.id}>
                <td>
                  <Link to={`/webhooks/${endpoint.id}`}>Endpoint {endpoint.id}</Link>
                  {endpoint.description ? <div className="muted">{endpoint.description}</div> : null}
                </td>
                <td>
                  <code>{endpoint.url}</code>
                </td>
                <td>{endpoint.disabled ? `Disabled (${endpoint.disabledReason ?? 'requested'})` : 'Enabled'}</td>
                <td>{formatInstant(endpoint.failingSince)}</td>
                <td>{formatInstant(endpoint.lastSucceededAt)}</td>
                <td className="number">{endpoint.backlog?.pending ?? 0}</td>
                <td>{formatInstant(endpoint.backlog?.oldestDueAt)}</td>
              </tr>
            ))}
          />
        </section>
      ) : endpoints.loading ? (
        <p aria-busy="true">Loading endpoints…</p>
      ) : null}
    </>
  );
}
