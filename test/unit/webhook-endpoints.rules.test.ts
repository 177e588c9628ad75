// Webhook endpoint rules, pure: the event types an endpoint may subscribe to, when a replacement
// changes nothing, and which events may be sent to an endpoint again.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DomainError, type FieldError } from '../../src/core/errors.ts';
import { EVENT_TYPE_NAMES } from '../../src/events/events.rules.ts';
import {
  assertEnabledEvents,
  assertRedeliverable,
  isSameEndpoint,
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
