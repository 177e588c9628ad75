// The order rules, pure: every from × to × actor of the state machine, deletability, line totals
// and the read-only fields a PUT may repeat.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError } from '../../src/core/errors.ts';
import { changedReadOnlyFields } from '../../src/orders/orders.representation.ts';
import {
  allowedTransitions,
  decideTransition,
  isDeletable,
  lineTotal,
  ORDER_STATUSES,
  refuseTransition,
  type Actor,
  type OrderStatus,
} from '../../src/orders/orders.rules.ts';

const ACTORS: Actor[] = ['owner', 'staff', 'service', 'payment'];

// The state machine as the issue states it, written out independently of the implementation.
const ALLOWED: [OrderStatus, OrderStatus, Actor][] = [
  ['pending', 'paid', 'payment'],
  ['paid', 'shipped', 'staff'],
  ['paid', 'shipped', 'service'],
  ['shipped', 'delivered', 'staff'],
  ['shipped', 'delivered', 'service'],
  ['pending', 'cancelled', 'owner'],
  ['pending', 'cancelled', 'staff'],
  ['paid', 'cancelled', 'staff'],
];

const isAllowed = (from: OrderStatus, to: OrderStatus, actor: Actor) => ALLOWED.some(([f, t, a]) => f === from && t === to && a === actor);

/** Targets reachable from `from` by any of `actors`, in ORDER_STATUSES order. */
const expectedTargets = (from: OrderStatus, actors: Actor[]) =>
  ORDER_STATUSES.filter((to) => actors.some((actor) => isAllowed(from, to, actor)));

describe('order state machine: decideTransition', () => {
  assert.equal(ORDER_STATUSES.length, 5);
  for (const from of ORDER_STATUSES) {
    for (const to of ORDER_STATUSES) {
      for (const actor of ACTORS) {
        const expected =
          from === to
            ? { kind: 'unchanged' }
            : isAllowed(from, to, actor)
              ? { kind: 'change', to }
              : { kind: 'refused', allowed: expectedTargets(from, [actor]) };
        test(`${from} → ${to} by ${actor}: ${expected.kind}`, () => {
          assert.deepEqual(decideTransition(from, to, [actor]), expected);
        });
      }
    }
  }

  test('an actor with no role on the order may make no change', () => {
    for (const from of ORDER_STATUSES) {
      for (const to of ORDER_STATUSES) {
        assert.deepEqual(decideTransition(from, to, []), from === to ? { kind: 'unchanged' } : { kind: 'refused', allowed: [] });
      }
    }
  });

  test('a staff member who also owns the order may do what either may', () => {
    assert.deepEqual(decideTransition('pending', 'cancelled', ['staff', 'owner']), { kind: 'change', to: 'cancelled' });
    assert.deepEqual(decideTransition('paid', 'cancelled', ['owner', 'staff']), { kind: 'change', to: 'cancelled' });
    assert.deepEqual(decideTransition('pending', 'paid', ['staff', 'owner']), { kind: 'refused', allowed: ['cancelled'] });
  });
});

describe('order state machine: allowedTransitions', () => {
  const cases: [OrderStatus, Actor[], OrderStatus[]][] = [
    ['pending', ['owner'], ['cancelled']],
    ['pending', ['staff'], ['cancelled']],
    ['pending', ['service'], []],
    ['pending', ['payment'], ['paid']],
    ['pending', ['payment', 'owner'], ['paid', 'cancelled']],
    ['paid', ['owner'], []],
    ['paid', ['staff'], ['shipped', 'cancelled']],
    ['paid', ['service'], ['shipped']],
    ['paid', ['payment'], []],
    ['shipped', ['staff'], ['delivered']],
    ['shipped', ['service'], ['delivered']],
    ['shipped', ['owner', 'payment'], []],
    ['delivered', ACTORS, []],
    ['cancelled', ACTORS, []],
  ];
  for (const [from, actors, allowed] of cases) {
    test(`from ${from} by ${actors.join('+')}: [${allowed.join(', ')}]`, () => {
      assert.deepEqual(allowedTransitions(from, actors), allowed);
      assert.deepEqual(allowedTransitions(from, actors), expectedTargets(from, actors));
    });
  }
});

describe('refuseTransition', () => {
  test('names the current status and the allowed ones (409 ORDER_TRANSITION_NOT_ALLOWED)', () => {
    const error = refuseTransition('paid', 'delivered', ['shipped', 'cancelled']);
    assert.ok(error instanceof DomainError);
    assert.equal(error.code, 'ORDER_TRANSITION_NOT_ALLOWED');
    assert.equal(error.status, 409);
    assert.equal(error.detail, 'The order is paid; it cannot become delivered (allowed: shipped, cancelled).');
    assert.deepEqual(error.options, { extensions: { currentStatus: 'paid', allowedStatuses: ['shipped', 'cancelled'] } });
  });

  test('says so when nothing is allowed', () => {
    const error = refuseTransition('delivered', 'pending', []);
    assert.equal(error.detail, 'The order is delivered; it cannot become pending (no change of status is allowed to you from here).');
    assert.deepEqual(error.options.extensions, { currentStatus: 'delivered', allowedStatuses: [] });
  });
});

describe('isDeletable', () => {
  const expected: Record<OrderStatus, boolean> = { pending: true, paid: false, shipped: false, delivered: false, cancelled: true };
  for (const status of ORDER_STATUSES) {
    test(`${status}: ${expected[status]}`, () => assert.equal(isDeletable(status), expected[status]));
  }
});

describe('lineTotal', () => {
  const cases: [number, number, number][] = [
    [1250, 1, 1250],
    [1250, 3, 3750],
    [0, 1000, 0],
    [1, 1000, 1000],
    [1_000_000_000_000, 1000, 1_000_000_000_000_000],
    [999_999_999_999, 7, 6_999_999_999_993],
  ];
  for (const [unitPrice, qty, total] of cases) {
    test(`${unitPrice} × ${qty} = ${total}`, () => assert.equal(lineTotal(unitPrice, qty), total));
  }

  test('refuses a product beyond the exact integer range', () => {
    assert.throws(() => lineTotal(Number.MAX_SAFE_INTEGER, 2), {
      name: 'RangeError',
      message: 'line total exceeds the exact integer range',
    });
    assert.throws(() => lineTotal(2 ** 50, 16), RangeError);
  });

  test('refuses a non-integer result', () => {
    assert.throws(() => lineTotal(0.5, 3), RangeError);
  });
});

describe('changedReadOnlyFields', () => {
  // A v1 representation (flat money); v2's differ only in shape, which the comparison is blind to.
  const current = {
    id: 7,
    status: 'pending',
    customerId: 3,
    total: 1250,
    currency: 'EUR',
    createdAt: '2026-01-02T03:04:05.123Z',
    updatedAt: '2026-01-02T03:04:05.123Z',
  };

  test('none sent: nothing changed', () => {
    assert.deepEqual(changedReadOnlyFields({ status: 'cancelled' }, current), []);
  });

  test('every field repeated unchanged: nothing changed', () => {
    assert.deepEqual(changedReadOnlyFields({ ...current, status: 'cancelled' }, current), []);
  });

  test('status is writable, never reported', () => {
    assert.deepEqual(changedReadOnlyFields({ status: 'shipped' }, current), []);
  });

  test('server-managed fields are ignored whatever they say (a PUT of an older read repeats the same)', () => {
    const stale = { id: 8, createdAt: '2020-01-01T00:00:00Z', updatedAt: 'not a time', items: [{ anything: true }] };
    assert.deepEqual(changedReadOnlyFields({ ...current, ...stale, status: 'cancelled' }, { ...current, items: [] }), []);
  });

  for (const [field, value] of [
    ['customerId', 4],
    ['total', 1251],
    ['currency', 'USD'],
  ] as const) {
    test(`${field} changed is reported`, () => {
      assert.deepEqual(changedReadOnlyFields({ status: 'pending', [field]: value }, current), [field]);
    });
  }

  test('a money object is compared member by member, whatever their order', () => {
    const v2 = { ...current, total: { value: 1250, currency: 'EUR' } };
    assert.deepEqual(changedReadOnlyFields({ total: { currency: 'EUR', value: 1250 } }, v2), []);
    assert.deepEqual(changedReadOnlyFields({ total: { value: 1250, currency: 'USD' } }, v2), ['total']);
    assert.deepEqual(changedReadOnlyFields({ total: { value: 1250 } }, v2), ['total']);
  });

  test('the same value in another JSON type counts as changed', () => {
    assert.deepEqual(changedReadOnlyFields({ customerId: '3', total: 1250 }, current), ['customerId']);
    assert.deepEqual(changedReadOnlyFields({ customerId: null }, current), ['customerId']);
  });

  test('several changes are reported in the order of the representation', () => {
    assert.deepEqual(changedReadOnlyFields({ currency: 'JPY', total: 1, customerId: 1 }, current), ['customerId', 'total', 'currency']);
  });
});
