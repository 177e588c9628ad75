// /console/orders/:orderId: an order with its items, payments, refunds and events. Changes go
// through PATCH (application/merge-patch+json) with If-Match of the ETag read: when someone changed
// the order since, the API answers 412 and the page shows what changed beside what was read, to
// reload from. Cancelling is a status change; deleting is DELETE with the same precondition.
import { type components, unwrap } from '@orderpay/client';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { describeFailure, type Failure } from '../api/failure.ts';
import { DataTable } from '../components/DataTable.tsx';
import { EventsTable } from '../components/EventsTable.tsx';
import { ActionOutcome, FailureNotice } from '../components/FailureNotice.tsx';
import { Options } from '../components/Options.tsx';
import { useConsole } from '../context.ts';
import { formatInstant, formatMoney } from '../format.ts';
import { useLoad } from '../load.ts';
import { ORDER_STATUSES } from './OrdersPage.tsx';

type Order = components['schemas']['Order'];
type OrderStatus = Order['status'];

interface Conflict {
  /** The order as this page had it when the change was sent. */
  read: Order;
  /** The order as it is now. */
  current: Order;
}

/** The members that differ between what was read and what is current, as people read them. */
function describeChanges(read: Order, current: Order): { field: string; read: string; current: string }[] {
  const shown = (order: Order) => ({
    Status: order.status,
    Total: formatMoney(order.total),
    Items: order.items.map((item) => `${item.qty} × product ${item.productId}`).join(', '),
    'Last changed': formatInstant(order.updatedAt),
  });
  const before = shown(read);
  const after = shown(current);
  return (Object.keys(before) as (keyof typeof before)[])
    .filter((field) => before[field] !== after[field])
    .map((field) => ({ field, read: before[field], current: after[field] }));
}

function OrderHistory({ orderId }: { orderId: number }) {
  const { api } = useConsole();
  const payments = useLoad(async () => {
    const page = unwrap(await api.GET('/payments', { params: { query: { orderId, pageSize: 100 } } }));
    return Promise.all(
      page.data.map(async (payment) => ({
        payment,
        refunds: unwrap(
          await api.GET('/payments/{paymentId}/refunds', { params: { path: { paymentId: payment.id }, query: { pageSize: 100 } } }),
        ).data,
      })),
    );
  }, [orderId]);
  const events = useLoad(
    async () => unwrap(await api.GET('/events', { params: { query: { objectType: 'order', objectId: orderId, pageSize: 100 } } })).data,
    [orderId],
  );
  return (
    <>
      <section aria-labelledby="order-payments">
        <h2 id="order-payments">Payments and refunds</h2>
        {payments.failure ? <FailureNotice failure={payments.failure} onRetry={payments.reload} /> : null}
        {payments.data?.length === 0 ? <p>No payments.</p> : null}
        {payments.data?.length ? (
          <DataTable
            caption="Payments of the order, each with its refunds"
            columns={['Payment', 'Status', 'Amount', 'Refunded', 'Refunds']}
            rows={payments.data.map(({ payment, refunds }) => (
              <tr key={payment.id}>
                <td>
                  <Link to={`/payments/${payment.id}`}>Payment {payment.id}</Link>
                </td>
                <td>{payment.status}</td>
                <td className="number">{formatMoney(payment.amount)}</td>
                <td className="number">{formatMoney(payment.amountRefunded)}</td>
                <td>
                  {refunds.length
                    ? refunds.map((refund) => `Refund ${refund.id}: ${formatMoney(refund.amount)} ${refund.status}`).join('; ')
                    : 'None'}
                </td>
              </tr>
            ))}
          />
        ) : null}
      </section>
      <section aria-labelledby="order-events">
        <h2 id="order-events">History</h2>
        {events.failure ? <FailureNotice failure={events.failure} onRetry={events.reload} /> : null}
        {events.data ? <EventsTable events={events.data} caption="Events of the order, newest first" /> : null}
      </section>
    </>
  );
}

export function OrderPage() {
  const { api, session } = useConsole();
  const navigate = useNavigate();
  const orderId = Number(useParams().orderId);
  const loaded = useLoad(async () => {
    const result = await api.GET('/orders/{orderId}', { params: { path: { orderId } } });
    return { order: unwrap(result), etag: result.response.headers.get('etag') ?? '*' };
  }, [orderId]);
  const [status, setStatus] = useState<OrderStatus>();
  const [saving, setSaving] = useState(false);
  const [failure, setFailure] = useState<Failure>();
  const [conflict, setConflict] = useState<Conflict>();
  const [message, setMessage] = useState<string>();
  const [confirm, setConfirm] = useState<'cancel' | 'delete'>();
  const [historyKey, setHistoryKey] = useState(0);

  if (!loaded.data) {
    return (
      <>
        <h1>Order {orderId}</h1>
        {loaded.failure ? <FailureNotice failure={loaded.failure} onRetry={loaded.reload} /> : <p aria-busy="true">Loading…</p>}
      </>
    );
  }
  const { order, etag } = loaded.data;
  const chosen = status ?? order.status;

  async function change(next: OrderStatus) {
    setSaving(true);
    setFailure(undefined);
    setMessage(undefined);
    try {
      const result = await api.PATCH('/orders/{orderId}', {
        params: { path: { orderId }, header: { 'if-match': etag } },
        headers: { 'content-type': 'application/merge-patch+json' },
        body: { status: next },
      });
      if (result.response.status === 412) {
        // Precondition failed (RFC 9110 §13.1.1): read the order as it is now, to show what changed.
        setConflict({ read: order, current: unwrap(await api.GET('/orders/{orderId}', { params: { path: { orderId } } })) });
      }
      unwrap(result);
      setMessage(`Order ${orderId} is now ${next}.`);
      setStatus(undefined);
      setConflict(undefined);
      setHistoryKey((key) => key + 1);
      loaded.reload();
    } catch (error) {
      setFailure(describeFailure(error));
    } finally {
      setSaving(false);
      setConfirm(undefined);
    }
  }

  async function remove() {
    setSaving(true);
    setFailure(undefined);
    try {
      unwrap(await api.DELETE('/orders/{orderId}', { params: { path: { orderId }, header: { 'if-match': etag } } }));
      navigate('/orders', { replace: true });
    } catch (error) {
      setFailure(describeFailure(error));
    } finally {
      setSaving(false);
      setConfirm(undefined);
    }
  }

  function save(event: FormEvent) {
    event.preventDefault();
    void change(chosen);
  }

  function reloadCurrent() {
    setConflict(undefined);
    setFailure(undefined);
    setStatus(undefined);
    setHistoryKey((key) => key + 1);
    loaded.reload();
  }

  const mayWrite = session.has('orders:write');
  return (
    <>
      <p>
        <Link to="/orders">All orders</Link>
      </p>
      <h1>Order {order.id}</h1>
      <dl className="facts">
        <dt>Status</dt>
        <dd>{order.status}</dd>
        <dt>Customer</dt>
        <dd>
          <Link to={`/orders?customerId=${order.customerId}`}>Customer {order.customerId}</Link>
        </dd>
        <dt>Total</dt>
        <dd>{formatMoney(order.total)}</dd>
        <dt>Created</dt>
        <dd>{formatInstant(order.createdAt)}</dd>
        <dt>Last changed</dt>
        <dd>{formatInstant(order.updatedAt)}</dd>
      </dl>

      <section aria-labelledby="order-items">
        <h2 id="order-items">Items</h2>
        <DataTable
          caption="Items of the order"
          columns={['Product', 'Quantity', 'Unit price', 'Line total']}
          rows={order.items.map((item) => (
            <tr key={item.id}>
              <td>Product {item.productId}</td>
              <td className="number">{item.qty}</td>
              <td className="number">{formatMoney(item.unitPrice)}</td>
              <td className="number">{formatMoney(item.lineTotal)}</td>
            </tr>
          ))}
        />
      </section>

      <section aria-labelledby="order-change">
        <h2 id="order-change">Change</h2>
        {!mayWrite ? <p>Changing orders needs the orders:write scope, which this session was not granted.</p> : null}
        <ActionOutcome notice={message} failure={failure} />
        {conflict ? (
          <div className="conflict">
            <h3>Someone changed this order after you opened it</h3>
            <p>Nothing was saved. This is what changed; reload to see the order as it is now, then make your change again.</p>
            <DataTable
              caption="What changed since the order was read"
              columns={['Field', 'When you opened it', 'Now']}
              scroll={false}
              rows={describeChanges(conflict.read, conflict.current).map((row) => (
                <tr key={row.field}>
                  <th scope="row">{row.field}</th>
                  <td>{row.read}</td>
                  <td>{row.current}</td>
                </tr>
              ))}
            />
            <button type="button" onClick={reloadCurrent}>
              Reload the order
            </button>
          </div>
        ) : null}
        {mayWrite ? (
          <form onSubmit={save} aria-label="Change the order's status">
            <label>
              New status
              <select
                value={chosen}
                onChange={(event) => setStatus(event.target.value as OrderStatus)}
                disabled={saving || conflict !== undefined}
              >
                <Options values={ORDER_STATUSES} />
              </select>
            </label>
            <div className="actions">
              <button type="submit" disabled={saving || conflict !== undefined || chosen === order.status}>
                Save status
              </button>
              {order.status === 'pending' || order.status === 'paid' ? (
                <button
                  type="button"
                  className="secondary"
                  disabled={saving || conflict !== undefined}
                  onClick={() => setConfirm('cancel')}
                >
                  Cancel order…
                </button>
              ) : null}
              <button
                type="button"
                className="secondary outline"
                disabled={saving || conflict !== undefined}
                onClick={() => setConfirm('delete')}
              >
                Delete order…
              </button>
            </div>
            {confirm ? (
              <fieldset className="confirm">
                <legend>Are you sure?</legend>
                <p>
                  {confirm === 'cancel'
                    ? order.status === 'paid'
                      ? 'Cancelling a paid order refunds what is left of its payment (this needs payments:refund).'
                      : 'The order will be cancelled.'
                    : 'The order will be deleted: it disappears from the lists; its payments and events stay.'}
                </p>
                <button type="button" disabled={saving} onClick={() => void (confirm === 'cancel' ? change('cancelled') : remove())}>
                  {confirm === 'cancel' ? 'Yes, cancel the order' : 'Yes, delete the order'}
                </button>{' '}
                <button type="button" className="secondary" onClick={() => setConfirm(undefined)}>
                  Keep it
                </button>
              </fieldset>
            ) : null}
          </form>
        ) : null}
      </section>
      <OrderHistory key={historyKey} orderId={orderId} />
    </>
  );
}
