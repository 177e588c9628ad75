// The read-only daily collections the overview charts are drawn from: GET /daily-order-totals,
// /daily-payment-outcomes and /daily-webhook-deliveries (from/to as UTC days, inclusive; at most
// 92 days a request), typed by @orderpay/client like every other call.
import { unwrap } from '@orderpay/client';
import type { components, OrderpayClient } from '@orderpay/client';

export interface DayRange {
  /** YYYY-MM-DD, UTC. */
  from: string;
  to: string;
}

export type DailyOrderTotal = components['schemas']['DailyOrderTotal'];
export type DailyPaymentOutcome = components['schemas']['DailyPaymentOutcome'];
export type DailyWebhookDelivery = components['schemas']['DailyWebhookDelivery'];

export const readDailyOrderTotals = async (api: OrderpayClient, range: DayRange): Promise<DailyOrderTotal[]> =>
  unwrap(await api.GET('/daily-order-totals', { params: { query: range } })).data;

export const readDailyPaymentOutcomes = async (api: OrderpayClient, range: DayRange): Promise<DailyPaymentOutcome[]> =>
  unwrap(await api.GET('/daily-payment-outcomes', { params: { query: range } })).data;

export const readDailyWebhookDeliveries = async (api: OrderpayClient, range: DayRange): Promise<DailyWebhookDelivery[]> =>
  unwrap(await api.GET('/daily-webhook-deliveries', { params: { query: range } })).data;
