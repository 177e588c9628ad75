// The v1 representations as the v1 tests read them: src/ types the latest version only (older
// versions are rendered from it at run time), and v1's wire shapes are frozen in
// test/contract/v1.openapi.json.
import type { Payment, Refund } from '../../src/payments/payments.schemas.ts';

type Flat<T, Money extends keyof T> = Omit<T, Money> & { [K in Money]: number } & { currency: string };

export type V1Payment = Flat<Payment, 'amount' | 'amountRefunded'>;
export type V1Refund = Flat<Refund, 'amount'>;
