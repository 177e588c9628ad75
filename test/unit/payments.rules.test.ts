// The payment rules, pure: what an order's payment must match, what a refund may take, and the
// simulator's documented test amounts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError } from '../../src/core/errors.ts';
import { checkOrderAmount, decideRefund, PAYMENT_STATUSES, type PaymentStatus } from '../../src/payments/payments.rules.ts';
import { createSimulatedProcessor, ProcessorUnavailableError, TEST_AMOUNTS } from '../../src/payments/processor.ts';

function problemOf(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof DomainError, String(error));
    return error;
  }
  return assert.fail('expected a DomainError');
}

describe('checkOrderAmount', () => {
  test('accepts exactly the total in the order currency', () => {
    assert.doesNotThrow(() => checkOrderAmount({ total: 2500, currency: 'EUR' }, { amount: 2500, currency: 'EUR' }));
  });

  test('names the expected amount and currency, and each field that differs', () => {
    const amount = problemOf(() => checkOrderAmount({ total: 2500, currency: 'EUR' }, { amount: 2499, currency: 'EUR' }));
    assert.equal(amount.code, 'PAYMENT_AMOUNT_MISMATCH');
    assert.deepEqual(amount.options.extensions, { expectedAmount: 2500, expectedCurrency: 'EUR' });
    assert.deepEqual(
      amount.options.errors?.map((e) => e.pointer),
      ['/amount/value'],
    );
    const both = problemOf(() => checkOrderAmount({ total: 2500, currency: 'EUR' }, { amount: 1, currency: 'USD' }));
    assert.deepEqual(
      both.options.errors?.map((e) => e.pointer),
      ['/amount/value', '/amount/currency'],
    );
  });
});

describe('decideRefund', () => {
  const payment = (status: PaymentStatus, amountRefunded = 0) => ({ status, amount: 1000, amountRefunded });

  test('a partial refund leaves the payment partially refunded; the rest refunds it', () => {
    assert.deepEqual(decideRefund(payment('succeeded'), 300), { amount: 300, amountRefunded: 300, status: 'partially_refunded' });
    assert.deepEqual(decideRefund(payment('partially_refunded', 300), 700), { amount: 700, amountRefunded: 1000, status: 'refunded' });
  });

  test('without an amount, refunds all that is left', () => {
    assert.deepEqual(decideRefund(payment('succeeded'), undefined), { amount: 1000, amountRefunded: 1000, status: 'refunded' });
    assert.deepEqual(decideRefund(payment('partially_refunded', 999), undefined), { amount: 1, amountRefunded: 1000, status: 'refunded' });
  });

  test('never more than what is left', () => {
    const problem = problemOf(() => decideRefund(payment('partially_refunded', 600), 401));
    assert.equal(problem.code, 'PAYMENT_REFUND_EXCEEDS_BALANCE');
    assert.deepEqual(problem.options.extensions, { refundableAmount: 400 });
    assert.deepEqual(problem.options.errors, [{ pointer: '/amount/value', detail: 'must be at most 400' }]);
  });

  test('only succeeded and partially refunded payments can be refunded', () => {
    for (const status of PAYMENT_STATUSES) {
      const refundable = status === 'succeeded' || status === 'partially_refunded';
      if (refundable) continue;
      const problem = problemOf(() => decideRefund(payment(status, status === 'refunded' ? 1000 : 0), 1));
      assert.equal(problem.code, 'PAYMENT_NOT_REFUNDABLE');
      assert.deepEqual(problem.options.extensions, { currentStatus: status });
    }
  });
});

describe('the simulated processor', () => {
  const processor = createSimulatedProcessor();

  test('declines each documented test amount with its code, the same way every time', async () => {
    for (const [amount, outcome] of Object.entries(TEST_AMOUNTS)) {
      if (outcome === 'processor_unavailable') continue;
      const first = await processor.charge({ reference: 'r1', amount: Number(amount), currency: 'EUR' });
      assert.deepEqual(first, await processor.charge({ reference: 'r1', amount: Number(amount), currency: 'EUR' }));
      assert.equal(first.outcome, 'declined');
      assert.equal(first.outcome === 'declined' && first.declineCode, outcome);
    }
  });

  test('fails as unavailable on 40091, and charges every other amount', async () => {
    await assert.rejects(processor.charge({ reference: 'r', amount: 40091, currency: 'EUR' }), ProcessorUnavailableError);
    const charge = await processor.charge({ reference: 'r', amount: 40003, currency: 'EUR' });
    assert.equal(charge.outcome, 'succeeded');
  });

  test('derives its references from ours: the same reference, the same processor reference', async () => {
    const a = await processor.charge({ reference: 'idem-1', amount: 100, currency: 'EUR' });
    const b = await processor.charge({ reference: 'idem-1', amount: 100, currency: 'EUR' });
    const c = await processor.charge({ reference: 'idem-2', amount: 100, currency: 'EUR' });
    assert.equal(a.processorReference, b.processorReference);
    assert.notEqual(a.processorReference, c.processorReference);
  });
});
