// /console/webhooks/:endpointId: an endpoint's settings and health, its actions (ping, rotate the
// secret, shown once; enable or disable through PUT with If-Match) and its delivery log with every
// attempt, each delivery sendable again. While a delivery is pending the log is read again every
// few seconds, so its outcome shows without a reload.
import { type components, unwrap } from '@orderpay/client';
import { useEffect, useState } from 'react';
import { Link, useParams } from 'react-router';
import { describeFailure, type Failure } from '../api/failure.ts';
import { DataTable } from '../components/DataTable.tsx';
import { ActionOutcome, FailureNotice } from '../components/FailureNotice.tsx';
import { useConsole } from '../context.ts';
import { formatInstant } from '../format.ts';
import { useLoad } from '../load.ts';

type Delivery = components['schemas']['WebhookDelivery'];
type DeliveryState = Delivery['state'];

const POLL_MS = 2000;

function Attempts({ delivery }: { delivery: Delivery }) {
  if (delivery.attempts.length === 0)
    return <p className="muted">No attempt yet{delivery.nextAttemptAt ? `; due ${formatInstant(delivery.nextAttemptAt)}` : ''}.</p>;
  return (
    <DataTable
      caption={`Attempts of delivery ${delivery.id}, oldest first`}
      columns={['Attempted', 'Status', 'Took', 'Response or error']}
      className="attempts"
      scroll={false}
      rows={delivery.attempts.map((attempt) => (
        <tr key={attempt.attemptedAt}>
          <td>{formatInstant(attempt.attemptedAt)}</td>
          <td>{attempt.statusCode ?? 'No answer'}</td>
          <td className="number">{attempt.durationMs} ms</td>
          <td>
            {attempt.error ? <p>{attempt.error}</p> : null}
            {attempt.responseBody ? (
              <pre>
                <code>{attempt.responseBody}</code>
              </pre>
            ) : null}
          </td>
        </tr>
      ))}
    />
  );
}

function DeliveryLog({ endpointId, writable, refreshKey }: { endpointId: number; writable: boolean; refreshKey: number }) {
  const { api } = useConsole();
  const [state, setState] = useState<DeliveryState | ''>('');
  const [cursor, setCursor] = useState<{ after?: string; before?: string }>({});
  const [notice, setNotice] = useState<string>();
  const [failure, setFailure] = useState<Failure>();
  const log = useLoad(
    async () =>
      unwrap(
        await api.GET('/webhook-endpoints/{webhookEndpointId}/deliveries', {
          params: { path: { webhookEndpointId: endpointId }, query: { state: state || undefined, pageSize: 20, ...cursor } },
        }),
      ),
    [endpointId, state, cursor, refreshKey],
  );
  const pending = log.data?.data.some((delivery) => delivery.state === 'pending') ?? false;
  const { reload, loading } = log;
  useEffect(() => {
    if (!pending || loading) return;
    const timer = setTimeout(reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [pending, loading, reload]);

  async function redeliver(delivery: Delivery) {
    setFailure(undefined);
    setNotice(undefined);
    try {
      const queued = unwrap(
        await api.POST('/webhook-endpoints/{webhookEndpointId}/deliveries', {
          params: { path: { webhookEndpointId: endpointId } },
          body: { eventId: delivery.eventId },
        }),
      );
      setNotice(`Event ${delivery.eventId} is queued again as delivery ${queued.id}.`);
      setCursor({});
      reload();
    } catch (error) {
      setFailure(describeFailure(error));
    }
  }

  return (
    <section aria-labelledby="delivery-log">
      <h2 id="delivery-log">Delivery log</h2>
      <div className="toolbar">
        <label>
          Deliveries
          <select
            value={state}
            onChange={(event) => {
              setState(event.target.value as DeliveryState | '');
              setCursor({});
            }}
          >
            <option value="">All</option>
            <option value="pending">Pending</option>
            <option value="succeeded">Succeeded</option>
            <option value="failed">Failed</option>
          </select>
        </label>
        <button type="button" className="secondary" onClick={reload}>
          Refresh
        </button>
      </div>
      <ActionOutcome notice={notice} failure={failure} />
      {log.failure ? <FailureNotice failure={log.failure} onRetry={reload} /> : null}
      {log.data ? (
        <>
          <p>
            {log.data.meta.total} {log.data.meta.total === 1 ? 'delivery' : 'deliveries'}, newest first.
          </p>
          <ol className="deliveries">
            {log.data.data.map((delivery) => (
              <li key={delivery.id}>
                <article aria-label={`Delivery ${delivery.id}`}>
                  <header>
                    <strong>Delivery {delivery.id}</strong>: {delivery.eventType} <code>{delivery.eventId}</code> —{' '}
                    <span className={`state state-${delivery.state}`}>{delivery.state}</span>, {delivery.attemptCount}{' '}
                    {delivery.attemptCount === 1 ? 'attempt' : 'attempts'}
                    {delivery.nextAttemptAt ? `, next ${formatInstant(delivery.nextAttemptAt)}` : ''}
                  </header>
                  <Attempts delivery={delivery} />
                  {writable ? (
                    <button
                      type="button"
                      className="secondary"
                      onClick={() => void redeliver(delivery)}
                      aria-label={`Send again: event ${delivery.eventId} (delivery ${delivery.id})`}
                    >
                      Send again
                    </button>
                  ) : null}
                </article>
              </li>
            ))}
          </ol>
          <nav aria-label="Delivery log pages" className="pager">
            <button
              type="button"
              className="secondary"
              disabled={log.data.meta.prevCursor === null}
              onClick={() => setCursor({ before: log.data!.meta.prevCursor! })}
            >
              Newer
            </button>
            <button
              type="button"
              className="secondary"
              disabled={log.data.meta.nextCursor === null}
              onClick={() => setCursor({ after: log.data!.meta.nextCursor! })}
            >
              Older
            </button>
          </nav>
        </>
      ) : null}
    </section>
  );
}

export function WebhookEndpointPage() {
  const { api, session } = useConsole();
  const endpointId = Number(useParams().endpointId);
  const loaded = useLoad(async () => {
    const result = await api.GET('/webhook-endpoints/{webhookEndpointId}', { params: { path: { webhookEndpointId: endpointId } } });
    return { endpoint: unwrap(result), etag: result.response.headers.get('etag') ?? '*' };
  }, [endpointId]);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Failure>();
  const [notice, setNotice] = useState<string>();
  const [secret, setSecret] = useState<string>();
  const [logKey, setLogKey] = useState(0);

  if (!loaded.data) {
    return (
      <>
        <h1>Webhook endpoint {endpointId}</h1>
        {loaded.failure ? <FailureNotice failure={loaded.failure} onRetry={loaded.reload} /> : <p aria-busy="true">Loading…</p>}
      </>
    );
  }
  const { endpoint, etag } = loaded.data;
  const writable = session.has('webhooks:write');

  async function act(work: () => Promise<string>) {
    setBusy(true);
    setFailure(undefined);
    setNotice(undefined);
    try {
      setNotice(await work());
    } catch (error) {
      setFailure(describeFailure(error));
    } finally {
      setBusy(false);
    }
  }

  const ping = () =>
    act(async () => {
      const delivery = unwrap(
        await api.POST('/webhook-endpoints/{webhookEndpointId}/pings', { params: { path: { webhookEndpointId: endpointId } } }),
      );
      setLogKey((key) => key + 1);
      return `Ping sent as delivery ${delivery.id}; its outcome shows in the log.`;
    });

  const rotate = () =>
    act(async () => {
      const rotated = unwrap(
        await api.POST('/webhook-endpoints/{webhookEndpointId}/secret-rotations', { params: { path: { webhookEndpointId: endpointId } } }),
      );
      setSecret(rotated.secret);
      loaded.reload();
      return 'The secret was rotated.';
    });

  const toggle = () =>
    act(async () => {
      const replaced = unwrap(
        await api.PUT('/webhook-endpoints/{webhookEndpointId}', {
          params: { path: { webhookEndpointId: endpointId }, header: { 'if-match': etag } },
          body: {
            url: endpoint.url,
            enabledEvents: endpoint.enabledEvents,
            apiVersion: endpoint.apiVersion,
            description: endpoint.description,
            disabled: !endpoint.disabled,
          },
        }),
      );
      loaded.reload();
      return replaced.disabled ? 'The endpoint is disabled: nothing is sent to it.' : 'The endpoint is enabled again.';
    });

  return (
    <>
      <p>
        <Link to="/webhooks">All endpoints</Link>
      </p>
      <h1>Webhook endpoint {endpoint.id}</h1>
      <dl className="facts">
        <dt>URL</dt>
        <dd>
          <code>{endpoint.url}</code>
        </dd>
        <dt>Description</dt>
        <dd>{endpoint.description || '—'}</dd>
        <dt>Events</dt>
        <dd>{endpoint.enabledEvents.join(', ')}</dd>
        <dt>API version</dt>
        <dd>v{endpoint.apiVersion}</dd>
        <dt>State</dt>
        <dd>{endpoint.disabled ? `Disabled (${endpoint.disabledReason ?? 'requested'})` : 'Enabled'}</dd>
        <dt>Failing since</dt>
        <dd>{formatInstant(endpoint.failingSince)}</dd>
        <dt>Last success</dt>
        <dd>{formatInstant(endpoint.lastSucceededAt)}</dd>
        <dt>Backlog</dt>
        <dd>
          {endpoint.backlog?.pending ?? 0} pending
          {endpoint.backlog?.oldestDueAt ? `, the oldest due since ${formatInstant(endpoint.backlog.oldestDueAt)}` : ''}
        </dd>
        <dt>Previous secret signs until</dt>
        <dd>{formatInstant(endpoint.previousSecretExpiresAt)}</dd>
      </dl>
      {writable ? (
        <section aria-labelledby="endpoint-actions">
          <h2 id="endpoint-actions">Actions</h2>
          <div className="actions">
            <button type="button" onClick={() => void ping()} disabled={busy || endpoint.disabled}>
              Ping
            </button>
            <button type="button" className="secondary" onClick={() => void rotate()} disabled={busy}>
              Rotate the secret
            </button>
            <button type="button" className="secondary" onClick={() => void toggle()} disabled={busy}>
              {endpoint.disabled ? 'Enable' : 'Disable'}
            </button>
          </div>
          <ActionOutcome notice={notice} failure={failure} />
          {secret ? (
            <div className="secret" role="alert">
              <p>
                <strong>The new signing secret, shown this once.</strong> Store it with the receiver now; the previous one signs too until{' '}
                {formatInstant(endpoint.previousSecretExpiresAt)}.
              </p>
              <label>
                New secret
                <input readOnly value={secret} onFocus={(event) => event.target.select()} />
              </label>
              <button type="button" className="secondary" onClick={() => setSecret(undefined)}>
                I have stored it
              </button>
            </div>
          ) : null}
        </section>
      ) : (
        <p>Acting on endpoints needs the webhooks:write scope, which this session was not granted.</p>
      )}
      <DeliveryLog endpointId={endpointId} writable={writable} refreshKey={logKey} />
    </>
  );
}
