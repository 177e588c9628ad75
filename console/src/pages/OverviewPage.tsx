// /console: how the days go, from the API's daily collections (src/api/aggregates.ts): orders and
// revenue per day by currency, payment outcomes and decline codes, webhook delivery success, and
// the endpoints' backlog now. Each chart loads on its own and shows its own problem in its place.
import { unwrap } from '@orderpay/client';
import { type FormEvent, type ReactNode, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { type DayRange, readDailyOrderTotals, readDailyPaymentOutcomes, readDailyWebhookDeliveries } from '../api/aggregates.ts';
import { DataTable } from '../components/DataTable.tsx';
import { Chart, type Series } from '../components/Chart.tsx';
import { FailureNotice } from '../components/FailureNotice.tsx';
import { useConsole } from '../context.ts';
import { currencyDigits, formatInstant, formatMoney, utcDay } from '../format.ts';
import { type Loaded, useLoad } from '../load.ts';

const DAY_MS = 24 * 3600 * 1000;
const isDay = (value: string | null): value is string => value !== null && /^\d{4}-\d{2}-\d{2}$/.test(value);

/** Every day of the range, so that a day without rows shows as zero rather than not at all. */
function daysOf({ from, to }: DayRange): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`) && days.length < 400; t += DAY_MS)
    days.push(utcDay(new Date(t)));
  return days;
}

/** Rows summed per day and per group: one series a group, one value a day. */
function seriesBy<Row extends { day: string }>(
  rows: Row[],
  days: string[],
  group: (row: Row) => string,
  value: (row: Row) => number,
): Series[] {
  const groups = new Map<string, number[]>();
  for (const row of rows) {
    const index = days.indexOf(row.day);
    if (index < 0) continue;
    const key = group(row);
    const values = groups.get(key) ?? days.map(() => 0);
    values[index] = (values[index] ?? 0) + value(row);
    groups.set(key, values);
  }
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([label, values]) => ({ label, values }));
}

function Panel<T>({ id, title, loaded, children }: { id: string; title: string; loaded: Loaded<T>; children: (data: T) => ReactNode }) {
  return (
    <section aria-labelledby={id} className="panel" aria-busy={loaded.loading}>
      <h2 id={id}>{title}</h2>
      {loaded.failure ? <FailureNotice failure={loaded.failure} onRetry={loaded.reload} /> : null}
      {loaded.data !== undefined ? children(loaded.data) : loaded.loading ? <p>Loading…</p> : null}
    </section>
  );
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

export function OverviewPage() {
  const { api } = useConsole();
  const [search, setSearch] = useSearchParams();
  const today = utcDay(new Date());
  const range: DayRange = {
    from: isDay(search.get('from')) ? search.get('from')! : utcDay(new Date(Date.now() - 29 * DAY_MS)),
    to: isDay(search.get('to')) ? search.get('to')! : today,
  };
  const [form, setForm] = useState(range);
  const days = daysOf(range);
  const key = `${range.from}/${range.to}`;
  const orders = useLoad(() => readDailyOrderTotals(api, range), [key]);
  const payments = useLoad(() => readDailyPaymentOutcomes(api, range), [key]);
  const deliveries = useLoad(() => readDailyWebhookDeliveries(api, range), [key]);
  const endpoints = useLoad(async () => unwrap(await api.GET('/webhook-endpoints', { params: { query: { pageSize: 100 } } })).data, []);

  function apply(event: FormEvent) {
    event.preventDefault();
    setSearch(new URLSearchParams({ from: form.from, to: form.to }));
  }

  return (
    <>
      <h1>Overview</h1>
      <form onSubmit={apply} aria-label="Days shown" className="grid range">
        <label>
          From (UTC day)
          <input
            type="date"
            value={form.from}
            max={form.to}
            onChange={(event) => setForm({ ...form, from: event.target.value })}
            required
          />
        </label>
        <label>
          To (UTC day)
          <input type="date" value={form.to} min={form.from} onChange={(event) => setForm({ ...form, to: event.target.value })} required />
        </label>
        <button type="submit">Show</button>
      </form>

      <div className="panels">
        <Panel id="overview-orders" title="Orders and revenue" loaded={orders}>
          {(rows) => {
            const counts = seriesBy(
              rows,
              days,
              (row) => row.total.currency,
              (row) => row.orders,
            );
            const currencies = [...new Set(rows.map((row) => row.total.currency))].sort();
            return (
              <>
                <Chart
                  kind="bar"
                  stacked
                  title="Orders per day"
                  summary={`${sum(counts.flatMap((s) => s.values))} orders from ${range.from} to ${range.to}, by currency.`}
                  labels={days}
                  series={counts}
                />
                {currencies.map((currency) => {
                  const digits = currencyDigits(currency);
                  const revenue = seriesBy(
                    rows.filter((row) => row.total.currency === currency),
                    days,
                    () => currency,
                    (row) => row.total.value,
                  );
                  const total = sum(revenue.flatMap((s) => s.values));
                  return (
                    <Chart
                      key={currency}
                      kind="line"
                      title={`Revenue per day in ${currency}`}
                      summary={`${formatMoney({ value: total, currency })} placed from ${range.from} to ${range.to}.`}
                      labels={days}
                      series={revenue.map((s) => ({ label: currency, values: s.values.map((v) => v / 10 ** digits) }))}
                      format={(value) => formatMoney({ value: Math.round(value * 10 ** digits), currency })}
                    />
                  );
                })}
                {rows.length === 0 ? <p>No orders in these days.</p> : null}
              </>
            );
          }}
        </Panel>

        <Panel id="overview-payments" title="Payment outcomes" loaded={payments}>
          {(rows) => {
            const byStatus = seriesBy(
              rows,
              days,
              (row) => row.status,
              (row) => row.payments,
            );
            const declines = new Map<string, number>();
            for (const row of rows) if (row.declineCode) declines.set(row.declineCode, (declines.get(row.declineCode) ?? 0) + row.payments);
            const codes = [...declines.entries()].sort((a, b) => b[1] - a[1]);
            return (
              <>
                <Chart
                  kind="bar"
                  stacked
                  title="Payments per day by outcome"
                  summary={`${sum(byStatus.flatMap((s) => s.values))} payments, by status.`}
                  labels={days}
                  series={byStatus}
                />
                <h3>Decline codes</h3>
                {codes.length ? (
                  <DataTable
                    caption="Declined payments by decline code"
                    columns={['Decline code', 'Payments']}
                    scroll={false}
                    rows={codes.map(([code, count]) => (
                      <tr key={code}>
                        <td>
                          <code>{code}</code>
                        </td>
                        <td className="number">{count}</td>
                      </tr>
                    ))}
                  />
                ) : (
                  <p>No declined payments in these days.</p>
                )}
              </>
            );
          }}
        </Panel>

        <Panel id="overview-webhooks" title="Webhook deliveries" loaded={deliveries}>
          {(rows) => {
            const delivered = seriesBy(
              rows,
              days,
              () => 'Delivered',
              (row) => row.succeeded,
            );
            const failed = seriesBy(
              rows,
              days,
              () => 'Failed',
              (row) => row.failed,
            );
            const ok = sum(delivered.flatMap((s) => s.values));
            const bad = sum(failed.flatMap((s) => s.values));
            return (
              <>
                <p>
                  {ok + bad
                    ? `${Math.round((ok / (ok + bad)) * 1000) / 10}% of ${ok + bad} deliveries succeeded.`
                    : 'No deliveries finished in these days.'}
                </p>
                <Chart
                  kind="bar"
                  stacked
                  title="Deliveries per day"
                  summary={`${ok} delivered and ${bad} failed.`}
                  labels={days}
                  series={[
                    { label: 'Delivered', values: delivered[0]?.values ?? days.map(() => 0) },
                    { label: 'Failed', values: failed[0]?.values ?? days.map(() => 0) },
                  ]}
                />
              </>
            );
          }}
        </Panel>

        <Panel id="overview-backlog" title="Webhook backlog now" loaded={endpoints}>
          {(list) =>
            list.length ? (
              <DataTable
                caption="Deliveries waiting per endpoint"
                columns={['Endpoint', 'Pending', 'Oldest due', 'Failing since']}
                scroll={false}
                rows={list.map((endpoint) => (
                  <tr key={endpoint.id}>
                    <td>
                      <Link to={`/webhooks/${endpoint.id}`}>Endpoint {endpoint.id}</Link>
                    </td>
                    <td className="number">{endpoint.backlog?.pending ?? 0}</td>
                    <td>{formatInstant(endpoint.backlog?.oldestDueAt)}</td>
                    <td>{formatInstant(endpoint.failingSince)}</td>
                  </tr>
                ))}
              />
            ) : (
              <p>No webhook endpoints.</p>
            )
          }
        </Panel>
      </div>
    </>
  );
}
