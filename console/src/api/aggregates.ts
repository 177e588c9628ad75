// The read-only daily collections the overview charts are drawn from: GET /daily-order-totals,
// /daily-payment-outcomes and /daily-webhook-deliveries (from/to as UTC days, inclusive). Their
// shapes are written here by hand until the typed client is regenerated from a document that has
// them; this module is the one place that then changes (the casts go, the types come from
// @orderpay/client's components).
import { unwrap } from '@orderpay/client';
import type { OrderpayClient } from '@orderpay/client';
import type { Money } from '../format.ts';

export interface DayRange {
  /** YYYY-MM-DD, UTC. */
  from: string;
  to: string;
}

export interface DailyOrderTotal {
  day: string;
  orders: number;
  total: Money;
}

export interface DailyPaymentOutcome {
  day: string;
  status: string;
  declineCode: string | null;
  payments: number;
  amount: Money;
}

export interface DailyWebhookDeliveries {
  day: string;
  endpointId: number;
  delivered: number;
  failed: number;
  attempts: number;
}

type AggregatePath = '/daily-order-totals' | '/daily-payment-outcomes' | '/daily-webhook-deliveries';

async function readDaily<Row>(api: OrderpayClient, path: AggregatePath, range: DayRange): Promise<Row[]> {
  // Not in the typed client yet: its GET is typed per known path.
  const get = api.GET as unknown as (path: string, init: { params: { query: DayRange } }) => ReturnType<OrderpayClient['GET']>;
  const page = unwrap(await get(path, { params: { query: range } })) as unknown as { data: Row[] };
  return page.data;
}

export const readDailyOrderTotals = (api: OrderpayClient, range: DayRange) => readDaily<DailyOrderTotal>(api, '/daily-order-totals', range);
export const readDailyPaymentOutcomes = (api: OrderpayClient, range: DayRange) =>
  readDaily<DailyPaymentOutcome>(api, '/daily-payment-outcomes', range);
export const readDailyWebhookDeliveries = (api: OrderpayClient, range: DayRange) =>
  readDaily<DailyWebhookDeliveries>(api, '/daily-webhook-deliveries', range);
