// /console/orders: GET /orders with the specification's filters (status, customerId, minTotal) and
// multi-key sort as controls, paged by cursor, with the exact total. Everything is in the URL's
// query, so a view can be linked and the browser's back button goes back a page (the controls too).
import type { FormEvent } from 'react';
import { Link } from 'react-router';
import { unwrap } from '@orderpay/client';
import { CollectionTable } from '../components/CollectionTable.tsx';
import { SortControls } from '../components/SortControls.tsx';
import { Options } from '../components/Options.tsx';
import { useConsole } from '../context.ts';
import { formatInstant, formatMoney } from '../format.ts';
import { useLoad } from '../load.ts';
import { collectionQuery, filterQuery, positiveInteger, useQueryForm, withCursor } from '../query.ts';
import { formatSort, ORDER_SORT_KEYS, parseSort } from '../sort.ts';

export const ORDER_STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'cancelled'] as const;
type OrderStatus = (typeof ORDER_STATUSES)[number];

/** The query's order filters, each valid or left out. */
function readOrderQuery(search: URLSearchParams) {
  return {
    status: ORDER_STATUSES.includes(search.get('status') as OrderStatus) ? (search.get('status') as OrderStatus) : undefined,
    customerId: positiveInteger(search.get('customerId')),
    minTotal: positiveInteger(search.get('minTotal')),
    sort: parseSort(search.get('sort'), ORDER_SORT_KEYS),
    pageSize: positiveInteger(search.get('pageSize')) ?? 20,
  };
}

/** The filter form's fields as the query sets them. */
function readOrderForm(search: URLSearchParams) {
  const query = readOrderQuery(search);
  return {
    status: query.status ?? '',
    customerId: query.customerId?.toString() ?? '',
    minTotal: query.minTotal?.toString() ?? '',
    sort: query.sort,
    pageSize: String(query.pageSize),
  };
}

export function OrdersPage() {
  const { api } = useConsole();
  const { search, form, setForm, setQuery } = useQueryForm(readOrderForm);
  const query = collectionQuery(readOrderQuery(search), search);
  const orders = useLoad(() => api.GET('/orders', { params: { query } }).then(unwrap), [search.toString()]);

  function apply(event: FormEvent) {
    event.preventDefault();
    setQuery(
      filterQuery({
        status: form.status,
        customerId: form.customerId,
        minTotal: form.minTotal,
        sort: formatSort(form.sort),
        pageSize: form.pageSize === '20' ? '' : form.pageSize,
      }),
    );
  }

  return (
    <>
      <h1>Orders</h1>
      <form onSubmit={apply} aria-label="Filter and sort orders">
        <fieldset className="grid">
          <label>
            Status
            <select value={form.status} onChange={(event) => setForm({ ...form, status: event.target.value })}>
              <option value="">Any status</option>
              <Options values={ORDER_STATUSES} />
            </select>
          </label>
          <label>
            Customer id
            <input
              type="number"
              min={1}
              inputMode="numeric"
              value={form.customerId}
              onChange={(event) => setForm({ ...form, customerId: event.target.value })}
            />
          </label>
          <label>
            Minimum total (minor units, e.g. cents)
            <input
              type="number"
              min={0}
              inputMode="numeric"
              value={form.minTotal}
              onChange={(event) => setForm({ ...form, minTotal: event.target.value })}
            />
          </label>
          <label>
            Per page
            <select value={form.pageSize} onChange={(event) => setForm({ ...form, pageSize: event.target.value })}>
              <Options values={['10', '20', '50', '100']} />
            </select>
          </label>
        </fieldset>
        <SortControls keys={form.sort} allowed={ORDER_SORT_KEYS} onChange={(sort) => setForm({ ...form, sort })} />
        <button type="submit">Apply</button>
      </form>
      <CollectionTable
        id="orders-found"
        noun={['order', 'orders']}
        caption="Orders matching the filters"
        columns={['Order', 'Status', 'Customer', 'Total', 'Created']}
        loaded={orders}
        onPage={(cursor) => setQuery(withCursor(search, cursor))}
        row={(order) => (
          <tr key={order.id}>
            <td>
              <Link to={`/orders/${order.id}`}>Order {order.id}</Link>
            </td>
            <td>{order.status}</td>
            <td>{order.customerId}</td>
            <td className="number">{formatMoney(order.total)}</td>
            <td>{formatInstant(order.createdAt)}</td>
          </tr>
        )}
      />
    </>
  );
}
