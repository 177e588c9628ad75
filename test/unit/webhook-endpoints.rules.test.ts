// Webhook endpoint rules, pure: the event types an endpoint may subscribe to, when a replacement
// changes nothing, which events may be sent to an endpoint again, why a disabled endpoint is, and
// what an API version past its sunset still allows.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { retiredApiVersions } from '../../src/core/api-versions.ts';
import { DomainError, type FieldError } from '../../src/core/errors.ts';
import { EVENT_TYPE_NAMES } from '../../src/events/events.rules.ts';
import {
  assertEnabledEvents,
  assertNotPinnedToRetired,
  assertRedeliverable,
  disabledReasonAfter,
  isSameEndpoint,
  shownDisabledReason,
  SUBSCRIBABLE_EVENT_TYPES,
  subscribesTo,
} from '../../src/webhooks/endpoints.rules.ts';

function refusal(check: () => void): { code: string; detail: string; errors: FieldError[] | undefined } {
  try {
    check();
  } catch (error) {
    assert.ok(error instanceof DomainError);
    return { code: error.code, detail: error.detail, errors: error.options.errors };
  }
  return assert.fail('the check passed');
}

describe('assertEnabledEvents', () => {
  test('every event type but the ping may be subscribed to, alone or together; or "*" alone', () => {
    assert.deepEqual([...SUBSCRIBABLE_EVENT_TYPES].sort(), EVENT_TYPE_NAMES.filter((t) => t !== 'webhook_endpoint.ping').sort());
    assert.ok(SUBSCRIBABLE_EVENT_TYPES.includes('webhook_endpoint.disabled'));
    for (const list of [['*'], ['order.paid'], [...SUBSCRIBABLE_EVENT_TYPES]]) assert.doesNotThrow(() => assertEnabledEvents(list, 3));
  });

  test("a type of a later API version than the endpoint's is refused, naming the version", () => {
    assert.deepEqual(refusal(() => assertEnabledEvents(['payment.succeeded', 'payment.requires_action'], 2)).errors, [
      { pointer: '/enabledEvents/1', detail: '"payment.requires_action" is an event of API v3; the endpoint\'s apiVersion is 2' },
    ]);
    assert.doesNotThrow(() => assertEnabledEvents(['payment.requires_action', 'refund.failed'], 3));
  });

  test('an unknown type, the ping, and "*" beside types are refused, each named by its pointer', () => {
    assert.deepEqual(
      refusal(() => assertEnabledEvents(['order.paid', 'order.exploded', 'webhook_endpoint.ping', '*'], 3)),
      {
        code: 'REQUEST_BODY_INVALID',
        detail:
          '/enabledEvents/1 "order.exploded" is not an event type; /enabledEvents/2 "webhook_endpoint.ping" is sent by a ping to the endpoint pinged only; it cannot be subscribed to; /enabledEvents/3 "*" subscribes to every type and stands alone',
        errors: [
          { pointer: '/enabledEvents/1', detail: '"order.exploded" is not an event type' },
          {
            pointer: '/enabledEvents/2',
            detail: '"webhook_endpoint.ping" is sent by a ping to the endpoint pinged only; it cannot be subscribed to',
          },
          { pointer: '/enabledEvents/3', detail: '"*" subscribes to every type and stands alone' },
        ],
      },
    );
  });
});

describe('subscribesTo', () => {
  test('the listed types, or every type with "*"', () => {
    assert.equal(subscribesTo(['order.paid'], 'order.paid', 3), true);
    assert.equal(subscribesTo(['order.paid'], 'order.created', 3), false);
    assert.equal(subscribesTo(['*'], 'refund.succeeded', 3), true);
  });

  test("never to a type of a later API version than the endpoint's", () => {
    assert.equal(subscribesTo(['*'], 'payment.canceled', 2), false);
    assert.equal(subscribesTo(['*'], 'payment.canceled', 3), true);
    assert.equal(subscribesTo(['*'], 'payment.succeeded', 1), true);
  });

  test('never to a ping, which goes to the endpoint pinged only', () => {
    assert.equal(subscribesTo(['*'], 'webhook_endpoint.ping', 3), false);
    assert.equal(subscribesTo(['webhook_endpoint.ping'], 'webhook_endpoint.ping', 3), false);
  });
});

describe('isSameEndpoint', () => {
  const endpoint = {
    url: 'https://hooks.example.com/',
    enabledEvents: ['order.paid', 'order.created'],
    apiVersion: 2,
    description: 'shop',
    disabled: false,
  };

  test('the same settings, enabledEvents in any order, are the same endpoint', () => {
    assert.equal(isSameEndpoint(endpoint, { ...endpoint, enabledEvents: ['order.created', 'order.paid'] }), true);
  });

  test('any setting changed is a change', () => {
    for (const change of [
      { url: 'https://hooks.example.com/v2' },
      { enabledEvents: ['order.paid'] },
      { apiVersion: 1 },
      { description: '' },
      { disabled: true },
    ]) {
      assert.equal(isSameEndpoint(endpoint, { ...endpoint, ...change }), false, JSON.stringify(change));
    }
  });
});

describe('assertRedeliverable', () => {
  const event = { id: 'evt_AAAAAAAAAAAAAAAAAAAAAA', type: 'order.paid' };

  test('an event of a type the endpoint subscribes to, or one it was sent before, may be sent again', () => {
    assert.doesNotThrow(() => assertRedeliverable(event, { enabledEvents: ['order.paid'], apiVersion: 3 }, false));
    assert.doesNotThrow(() => assertRedeliverable(event, { enabledEvents: ['*'], apiVersion: 3 }, false));
    assert.doesNotThrow(() => assertRedeliverable(event, { enabledEvents: ['order.created'], apiVersion: 3 }, true));
    assert.doesNotThrow(() =>
      assertRedeliverable({ ...event, type: 'webhook_endpoint.ping' }, { enabledEvents: ['*'], apiVersion: 3 }, true),
    );
  });

  test("anything else is refused: another type, or another endpoint's ping", () => {
    assert.deepEqual(
      refusal(() => assertRedeliverable(event, { enabledEvents: ['order.created'], apiVersion: 3 }, false)),
      {
        code: 'WEBHOOK_EVENT_NOT_SUBSCRIBED',
        detail:
          'Event evt_AAAAAAAAAAAAAAAAAAAAAA is of type order.paid, which the endpoint does not subscribe to, and was never delivered to it.',
        errors: [{ pointer: '/eventId', detail: 'the endpoint does not subscribe to order.paid' }],
      },
    );
    assert.equal(
      refusal(() => assertRedeliverable({ ...event, type: 'webhook_endpoint.ping' }, { enabledEvents: ['*'], apiVersion: 3 }, false)).code,
      'WEBHOOK_EVENT_NOT_SUBSCRIBED',
    );
  });
});

describe('retiredApiVersions', () => {
  const deprecations = [
    { version: 1, sunset: new Date('2027-06-01T00:00:00Z') },
    { version: 2, sunset: new Date('2028-06-01T00:00:00Z') },
  ];

  test('a version is retired from the instant of its sunset on', () => {
    assert.deepEqual(retiredApiVersions(deprecations, new Date('2027-05-31T23:59:59.999Z')), []);
    assert.deepEqual(retiredApiVersions(deprecations, new Date('2027-06-01T00:00:00Z')), [1]);
    assert.deepEqual(retiredApiVersions(deprecations, new Date('2030-01-01T00:00:00Z')), [1, 2]);
    assert.deepEqual(retiredApiVersions([], new Date('2030-01-01T00:00:00Z')), []);
  });
});

describe('disabledReason', () => {
  test('an enabled endpoint has none; a disabled one its stored reason, or failing (the dispatcher stores none)', () => {
    assert.equal(shownDisabledReason({ disabled: false, disabledReason: null }), null);
    assert.equal(shownDisabledReason({ disabled: true, disabledReason: 'requested' }), 'requested');
    assert.equal(shownDisabledReason({ disabled: true, disabledReason: 'api_version_retired' }), 'api_version_retired');
    assert.equal(shownDisabledReason({ disabled: true, disabledReason: null }), 'failing');
    // An event recorded before reasons were stored: every disable then was the dispatcher's.
    assert.equal(shownDisabledReason({ disabled: true }), 'failing');
  });

  test("a manager's write: enabling clears it, disabling is requested, staying disabled keeps the reason", () => {
    assert.equal(disabledReasonAfter(undefined, false), null);
    assert.equal(disabledReasonAfter(undefined, true), 'requested');
    assert.equal(disabledReasonAfter({ disabled: false, disabledReason: null }, true), 'requested');
    assert.equal(disabledReasonAfter({ disabled: true, disabledReason: 'api_version_retired' }, false), null);
    for (const reason of ['requested', 'failing', 'api_version_retired', null] as const) {
      assert.equal(disabledReasonAfter({ disabled: true, disabledReason: reason }, true), reason);
    }
  });
});

describe('assertNotPinnedToRetired', () => {
  const retired = [1];

  test('a version not retired: anything goes', () => {
    for (const disabled of [true, false]) {
      assert.doesNotThrow(() => assertNotPinnedToRetired({ apiVersion: 2, disabled }, undefined, retired));
      assert.doesNotThrow(() => assertNotPinnedToRetired({ apiVersion: 2, disabled }, { apiVersion: 1 }, retired));
      assert.doesNotThrow(() => assertNotPinnedToRetired({ apiVersion: 1, disabled }, undefined, []));
    }
  });

  test('a new endpoint, or an endpoint of another version, pinned to a retired one: refused at /apiVersion, disabled or not', () => {
    for (const [current, disabled] of [
      [undefined, false],
      [undefined, true],
      [{ apiVersion: 2 }, true],
    ] as const) {
      assert.deepEqual(
        refusal(() => assertNotPinnedToRetired({ apiVersion: 1, disabled }, current, retired)),
        {
          code: 'WEBHOOK_ENDPOINT_API_VERSION_RETIRED',
          detail:
            'API v1 was retired: no endpoint can be pinned to it. Pin the endpoint to a later version, whose objects its receiver reads.',
          errors: [{ pointer: '/apiVersion', detail: 'API v1 was retired' }],
        },
      );
    }
  });

  test('an endpoint pinned to a retired version: edited while disabled, never enabled (refused at /disabled)', () => {
    assert.doesNotThrow(() => assertNotPinnedToRetired({ apiVersion: 1, disabled: true }, { apiVersion: 1 }, retired));
    assert.deepEqual(
      refusal(() => assertNotPinnedToRetired({ apiVersion: 1, disabled: false }, { apiVersion: 1 }, retired)),
      {
        code: 'WEBHOOK_ENDPOINT_API_VERSION_RETIRED',
        detail:
          'The endpoint is pinned to API v1, which was retired: it cannot be enabled unless the same request pins it to a later version.',
        errors: [{ pointer: '/disabled', detail: 'an endpoint pinned to the retired API v1 cannot be enabled' }],
      },
    );
  });
});
