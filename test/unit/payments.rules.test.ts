// The payment rules, pure: what an order's payment must match, what a refund may take, and the
// simulator's documented test amounts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError } from '../../src/core/errors.ts';
import {
  chargeOutcome,
  checkOrderAmount,
  decideRefund,
  isInProgress,
  nextAttempt,
  PAYMENT_STATUSES,
  type PaymentStatus,
  refundCause,
  cancellationRefundReference,
} from '../../src/payments/payments.rules.ts';
import { ProcessorUnavailableError } from '../../src/payments/processor.ts';
import { createSimulatedProcessor, TEST_AMOUNTS } from '../../src/payments/simulator.ts';

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

describe('a payment in progress and what the processor says of it', () => {
  test('processing and requires_action are in progress; every other status is decided', () => {
    assert.deepEqual(
      PAYMENT_STATUSES.filter((status) => isInProgress(status)),
      ['processing', 'requires_action'],
    );
  });

  test("the processor's state as the payment's next status: a charge named but not confirmed is still processing; a cancel is the customer's action expiring", () => {
    assert.deepEqual(chargeOutcome({ status: 'created' }), { status: 'processing' });
    assert.deepEqual(chargeOutcome({ status: 'processing' }), { status: 'processing' });
    assert.deepEqual(chargeOutcome({ status: 'succeeded' }), { status: 'succeeded' });
    assert.deepEqual(chargeOutcome({ status: 'declined', declineCode: 'do_not_honor' }), {
      status: 'declined',
      declineCode: 'do_not_honor',
    });
    const nextAction = { type: 'redirect_to_url', url: 'https://acs.example/3ds' } as const;
    assert.deepEqual(chargeOutcome({ status: 'requires_action', nextAction }), { status: 'requires_action', nextAction });
    assert.deepEqual(chargeOutcome({ status: 'canceled' }), { status: 'canceled', cancellationReason: 'action_expired' });
  });

  test('the retry schedule: each failure waits its step; past the last, the last step again, and the payment needs a person', () => {
    const schedule = [1, 5, 30];
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((failures) => nextAttempt(schedule, failures)),
      [
        { delaySeconds: 1, exhausted: false },
        { delaySeconds: 5, exhausted: false },
        { delaySeconds: 30, exhausted: false },
        { delaySeconds: 30, exhausted: true },
        { delaySeconds: 30, exhausted: true },
      ],
    );
  });

  test("a refund's cause by its reference: the cancellation's, or a refund asked for", () => {
    assert.equal(refundCause(cancellationRefundReference(42)), 'cancellation');
    assert.equal(refundCause('op_7f1c2d9e-1111-4a4a-8b8b-123456789abc'), 'refund');
  });
});

describe('the simulated processor', () => {
  const processor = createSimulatedProcessor();
  const charge = (reference: string, amount: number) => ({ reference, amount, currency: 'EUR', paymentMethod: null, returnUrl: null });
  const confirm = async (reference: string, amount: number) => {
    const { processorReference } = await processor.createCharge(charge(reference, amount));
    return processor.confirmCharge({ ...charge(reference, amount), processorReference, attempt: 0 });
  };

  test('declines each documented test amount with its code, the same way every time, when confirmed and when asked again', async () => {
    for (const [amount, outcome] of Object.entries(TEST_AMOUNTS)) {
      if (outcome === 'processor_unavailable') continue;
      const first = await confirm('r1', Number(amount));
      assert.deepEqual(first, { status: 'declined', declineCode: outcome });
      assert.deepEqual(await confirm('r1', Number(amount)), first);
      const { processorReference } = await processor.createCharge(charge('r1', Number(amount)));
      assert.deepEqual(await processor.retrieveCharge({ ...charge('r1', Number(amount)), processorReference, attempt: 0 }), first);
    }
  });

  test('fails as unavailable on 40091, even to name the charge; charges every other amount', async () => {
    await assert.rejects(processor.createCharge(charge('r', 40091)), ProcessorUnavailableError);
    assert.deepEqual(await confirm('r', 40003), { status: 'succeeded' });
  });

  test('derives its references from ours: the same reference, the same processor reference', async () => {
    const a = await processor.createCharge(charge('idem-1', 100));
    const b = await processor.createCharge(charge('idem-1', 100));
    const c = await processor.createCharge(charge('idem-2', 100));
    assert.equal(a.processorReference, b.processorReference);
    assert.notEqual(a.processorReference, c.processorReference);
    assert.match(a.processorReference, /^sim_ch_[\w-]{24}$/);
  });

  test('refunds always succeed, under a reference derived from ours', async () => {
    const refund = { reference: 're-1', chargeReference: 'sim_ch_x', amount: 100, currency: 'EUR' };
    const made = await processor.refund(refund);
    assert.equal(made.status, 'succeeded');
    assert.deepEqual(await processor.refund(refund), made);
    assert.deepEqual(await processor.retrieveRefund({ ...refund, processorReference: made.processorReference }), made);
  });

  test('waits its latency on every call but naming the charge', async () => {
    const slow = createSimulatedProcessor({ latencyMs: 50 });
    const { processorReference } = await processor.createCharge(charge('l', 100));
    const answered: string[] = [];
    const started = performance.now();
    const confirmed = slow.confirmCharge({ ...charge('l', 100), processorReference, attempt: 0 }).then(() => answered.push('confirm'));
    await slow.createCharge(charge('l', 100)).then(() => answered.push('create'));
    await confirmed;
    // Named at once, while the confirmation started before it still waits.
    assert.deepEqual(answered, ['create', 'confirm']);
    assert.ok(performance.now() - started >= 48);
  });
});
