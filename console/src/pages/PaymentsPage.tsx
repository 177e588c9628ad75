// /console/payments: GET /payments with its filters (status, orderId, needsAttention) and sort,
// paged by cursor, with the exact total; all in the URL's query, which the controls follow.
import { type components, unwrap } from '@orderpay/client';
import type { FormEvent } from 'react';
import { Link } from 'react-router';
import { CollectionTable } from '../components/CollectionTable.tsx';
import { SortControls } from '../components/SortControls.tsx';
import { Options } from '../components/Options.tsx';
import { useConsole } from '../context.ts';
import { formatInstant, formatMoney } from '../format.ts';
import { useLoad } from '../load.ts';
import { collectionQuery, filterQuery, positiveInteger, useQueryForm, withCursor } from '../query.ts';
import { formatSort, PAYMENT_SORT_KEYS, parseSort } from '../sort.ts';

type PaymentStatus = components['schemas']['Payment']['status'];
const PAYMENT_STATUSES: PaymentStatus[] = [
  'processing',
  'requires_action',
  'succeeded',
  'declined',
  'canceled',
  'partially_refunded',
  'refunded',
];

/** The query's payment filters, each valid or left out. */
function readPaymentQuery(search: URLSearchParams) {
  return {
    status: PAYMENT_STATUSES.includes(search.get('status') as PaymentStatus) ? (search.get('status') as PaymentStatus) : undefined,
    orderId: positiveInteger(search.get('orderId')),
    needsAttention: search.get('needsAttention') === 'true' ? true : undefined,
    sort: parseSort(search.get('sort'), PAYMENT_SORT_KEYS),
  };
}

/** The filter form's fields as the query sets them. */
function readPaymentForm(search: URLSearchParams) {
  const query = readPaymentQuery(search);
  return {
    status: query.status ?? '',
    orderId: query.orderId?.toString() ?? '',
    needsAttention: query.needsAttention === true,
    sort: query.sort,
  };
}

export function PaymentsPage() {
  const { api } = useConsole();
  const { search, form, setForm, setQuery } = useQueryForm(readPaymentForm);
  const query = collectionQuery(readPaymentQuery(search), search);
  const payments = useLoad(() => api.GET('/payments', { params: { query } }).then(unwrap), [search.toString()]);

  function apply(event: FormEvent) {
    event.preventDefault();
    setQuery(
      filterQuery({
        status: form.status,
        orderId: form.orderId,
        needsAttention: form.needsAttention,
        sort: formatSort(form.sort),
      }),
    );
  }

  return (
    <>
      <h1>Payments</h1>
      <form onSubmit={apply} aria-label="Filter and sort payments">
        <fieldset className="grid">
          <label>
            Status
            <select value={form.status} onChange={(event) => setForm({ ...form, status: event.target.value })}>
              <option value="">Any status</option>
              <Options values={PAYMENT_STATUSES} />
            </select>
          </label>
          <label>
            Order id
            <input
              type="number"
              min={1}
              inputMode="numeric"
              value={form.orderId}
              onChange={(event) => setForm({ ...form, orderId: event.target.value })}
            />
          </label>
          <label className="checkbox">
            <input
              type="checkbox"
              checked={form.needsAttention}
              onChange={(event) => setForm({ ...form, needsAttention: event.target.checked })}
            />
            Needs a person only
          </label>
        </fieldset>
        <SortControls keys={form.sort} allowed={PAYMENT_SORT_KEYS} onChange={(sort) => setForm({ ...form, sort })} />
        <button type="submit">Apply</button>
      </form>
      <CollectionTable
        id="payments-found"
        noun={['payment', 'payments']}
        caption="Payments matching the filters"
        columns={['Payment', 'Status', 'Amount', 'Refunded', 'Order', 'Created']}
        loaded={payments}
        onPage={(cursor) => setQuery(withCursor(search, cursor))}
        row={(payment) => (
          <tr key={payment.id}>
            <td>
              <Link to={`/payments/${payment.id}`}>Payment {payment.id}</Link>
            </td>
            <td>
              {payment.status}
              {payment.needsAttention ? ' (needs a person)' : ''}
            </td>
            <td className="number">{formatMoney(payment.amount)}</td>
            <td className="number">{formatMoney(payment.amountRefunded)}</td>
            <td>{payment.orderId === null ? '—' : <Link to={`/orders/${payment.orderId}`}>Order {payment.orderId}</Link>}</td>
            <td>{formatInstant(payment.createdAt)}</td>
          </tr>
        )}
      />
    </>
  );
}
