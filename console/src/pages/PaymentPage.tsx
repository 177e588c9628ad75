// /console/payments/:paymentId: a payment with its refunds and events, and the refund form. A
// refund is one intent with one Idempotency-Key, made when the form is opened or reset and kept
// through every click and retry of it: a double click, or a retry after a lost answer, replays the
// refund made instead of making a second (docs/payments.md, "Idempotency keys").
import { type components, unwrap } from '@orderpay/client';
import { type FormEvent, useState } from 'react';
import { Link, useParams } from 'react-router';
import { describeFailure, type Failure } from '../api/failure.ts';
import { DataTable } from '../components/DataTable.tsx';
import { EventsTable } from '../components/EventsTable.tsx';
import { FailureNotice } from '../components/FailureNotice.tsx';
import { useConsole } from '../context.ts';
import { amountText, formatInstant, formatMoney, parseAmount } from '../format.ts';
import { useLoad } from '../load.ts';

type Payment = components['schemas']['Payment'];
type Refund = components['schemas']['Refund'];

const REFUNDABLE: Payment['status'][] = ['succeeded', 'partially_refunded'];

interface RefundMade {
  refund: Refund;
  /** The API answered with the refund made before for this key (Idempotent-Replayed). */
  replayed: boolean;
}

/** The form of one refund: mounted afresh (a new key) for each. */
function RefundForm({ payment, onRefunded }: { payment: Payment; onRefunded: (made: RefundMade) => void }) {
  const { api } = useConsole();
  const remaining = { value: payment.amount.value - payment.amountRefunded.value, currency: payment.amount.currency };
  // One key per intent: made when the form opens, kept for every send of this refund.
  const [key, setKey] = useState(() => crypto.randomUUID());
  const [mode, setMode] = useState<'full' | 'partial'>('full');
  const [amount, setAmount] = useState(amountText(remaining));
  const [sending, setSending] = useState(false);
  const [failure, setFailure] = useState<Failure>();
  const [done, setDone] = useState(false);

  const minor = mode === 'partial' ? parseAmount(amount, payment.amount.currency) : undefined;
  const amountInvalid = mode === 'partial' && (minor === undefined || minor < 1 || minor > remaining.value);

  async function send(event: FormEvent) {
    event.preventDefault();
    if (sending || done || amountInvalid) return;
    setSending(true);
    setFailure(undefined);
    try {
      const result = await api.POST('/payments/{paymentId}/refunds', {
        params: { path: { paymentId: payment.id }, header: { 'idempotency-key': key } },
        body: mode === 'full' ? {} : { amount: { value: minor!, currency: payment.amount.currency } },
      });
      const refund = unwrap(result);
      setDone(true);
      onRefunded({ refund, replayed: result.response.headers.get('idempotent-replayed') === 'true' });
    } catch (error) {
      // The key stays: trying again sends the same refund, which the API makes at most once.
      setFailure(describeFailure(error));
    } finally {
      setSending(false);
    }
  }

  return (
    <form onSubmit={send} aria-label="Refund this payment">
      <fieldset>
        <legend>Amount</legend>
        <label className="checkbox">
          <input
            type="radio"
            name="refund-mode"
            value="full"
            checked={mode === 'full'}
            onChange={() => setMode('full')}
            disabled={sending}
          />
          Everything left: {formatMoney(remaining)}
        </label>
        <label className="checkbox">
          <input
            type="radio"
            name="refund-mode"
            value="partial"
            checked={mode === 'partial'}
            onChange={() => setMode('partial')}
            disabled={sending}
          />
          Part of it
        </label>
        {mode === 'partial' ? (
          <label>
            Amount to refund ({payment.amount.currency})
            <input
              inputMode="decimal"
              value={amount}
              onChange={(event) => {
                // Another amount is another intent: a new key, so the API does not refuse the reuse.
                setAmount(event.target.value);
                setKey(crypto.randomUUID());
              }}
              aria-invalid={amountInvalid}
              aria-describedby="refund-amount-help"
              disabled={sending}
            />
            <small id="refund-amount-help">At most {formatMoney(remaining)}.</small>
          </label>
        ) : null}
      </fieldset>
      {failure ? <FailureNotice failure={failure} /> : null}
      <button type="submit" disabled={sending || amountInvalid} aria-busy={sending}>
        Refund{' '}
        {mode === 'full'
          ? formatMoney(remaining)
          : minor !== undefined
            ? formatMoney({ value: minor, currency: payment.amount.currency })
            : ''}
      </button>
    </form>
  );
}

export function PaymentPage() {
  const { api, session } = useConsole();
  const paymentId = Number(useParams().paymentId);
  const [made, setMade] = useState<RefundMade>();
  const loaded = useLoad(async () => {
    const payment = unwrap(await api.GET('/payments/{paymentId}', { params: { path: { paymentId } } }));
    const refunds = unwrap(
      await api.GET('/payments/{paymentId}/refunds', { params: { path: { paymentId }, query: { pageSize: 100 } } }),
    ).data;
    return { payment, refunds };
  }, [paymentId]);
  const events = useLoad(async () => {
    const ofPayment = unwrap(
      await api.GET('/events', { params: { query: { objectType: 'payment', objectId: paymentId, pageSize: 100 } } }),
    ).data;
    const refunds = loaded.data?.refunds ?? [];
    const ofRefunds = await Promise.all(
      refunds.map(
        async (refund) =>
          unwrap(await api.GET('/events', { params: { query: { objectType: 'refund', objectId: refund.id, pageSize: 100 } } })).data,
      ),
    );
    return [...ofPayment, ...ofRefunds.flat()].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }, [paymentId, loaded.data]);

  if (!loaded.data) {
    return (
      <>
        <h1>Payment {paymentId}</h1>
        {loaded.failure ? <FailureNotice failure={loaded.failure} onRetry={loaded.reload} /> : <p aria-busy="true">Loading…</p>}
      </>
    );
  }
  const { payment, refunds } = loaded.data;
  return (
    <>
      <p>
        <Link to="/payments">All payments</Link>
      </p>
      <h1>Payment {payment.id}</h1>
      <dl className="facts">
        <dt>Status</dt>
        <dd>{payment.status}</dd>
        <dt>Amount</dt>
        <dd>{formatMoney(payment.amount)}</dd>
        <dt>Refunded</dt>
        <dd>{formatMoney(payment.amountRefunded)}</dd>
        <dt>Order</dt>
        <dd>{payment.orderId === null ? '—' : <Link to={`/orders/${payment.orderId}`}>Order {payment.orderId}</Link>}</dd>
        <dt>Customer</dt>
        <dd>{payment.customerId ?? '—'}</dd>
        {payment.declineCode ? (
          <>
            <dt>Decline code</dt>
            <dd>{payment.declineCode}</dd>
          </>
        ) : null}
        {payment.needsAttention ? (
          <>
            <dt>Needs a person</dt>
            <dd>
              Since {formatInstant(payment.needsAttention.since)}: {payment.needsAttention.reason}
            </dd>
          </>
        ) : null}
        <dt>Mode</dt>
        <dd>{payment.livemode ? 'Live' : 'Test'}</dd>
        <dt>Created</dt>
        <dd>{formatInstant(payment.createdAt)}</dd>
      </dl>

      <section aria-labelledby="payment-refunds">
        <h2 id="payment-refunds">Refunds</h2>
        <DataTable
          caption="Refunds of the payment, oldest first"
          columns={['Refund', 'Status', 'Amount', 'Created', 'Failure']}
          empty="No refunds."
          rows={refunds.map((refund) => (
            <tr key={refund.id}>
              <td>Refund {refund.id}</td>
              <td>{refund.status}</td>
              <td className="number">{formatMoney(refund.amount)}</td>
              <td>{formatInstant(refund.createdAt)}</td>
              <td>{refund.failureReason ?? '—'}</td>
            </tr>
          ))}
        />
      </section>

      <section aria-labelledby="payment-refund">
        <h2 id="payment-refund">Refund</h2>
        {made ? (
          <div role="status" className="success">
            <p>
              Refund {made.refund.id} of {formatMoney(made.refund.amount)}: {made.refund.status}
              {made.replayed ? ' (already made: this was the same refund sent again, not a second one)' : ''}.
            </p>
            {REFUNDABLE.includes(payment.status) ? (
              <button type="button" className="secondary" onClick={() => setMade(undefined)}>
                New refund
              </button>
            ) : null}
          </div>
        ) : !session.has('payments:refund') ? (
          <p>Refunds need the payments:refund scope, which this session was not granted.</p>
        ) : REFUNDABLE.includes(payment.status) ? (
          <RefundForm
            payment={payment}
            onRefunded={(refund) => {
              setMade(refund);
              loaded.reload();
            }}
          />
        ) : (
          <p>A {payment.status} payment has nothing to refund.</p>
        )}
      </section>

      <section aria-labelledby="payment-events">
        <h2 id="payment-events">History</h2>
        {events.failure ? <FailureNotice failure={events.failure} onRetry={events.reload} /> : null}
        {events.data ? <EventsTable events={events.data} caption="Events of the payment and its refunds, newest first" /> : null}
      </section>
    </>
  );
}
