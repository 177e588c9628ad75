// Standard Webhooks signatures made with node:crypto, checked against the specification's test
// vector and verified by the `standardwebhooks` package, with one secret and with two (rotation).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { generateSigningSecret } from '../../src/webhooks/secrets.ts';
import { signWebhook, webhookHeaders } from '../../src/webhooks/signature.ts';

// The test vector of the Standard Webhooks specification (and of its reference libraries).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('signWebhook', () => {
  test('the specification test vector', () => {
    const { secret, signature, ...message } = VECTOR;
    assert.equal(signWebhook(message, [secret]), signature);
    assert.equal(new Webhook(secret).sign(message.id, new Date(message.timestamp * 1000), message.body), signature);
  });

  test('the headers of a fresh message verify with standardwebhooks; a changed body does not', () => {
    const secret = generateSigningSecret();
    const body = JSON.stringify({ id: 'evt_1', type: 'order.created', data: { object: { id: 1 } } });
    const headers = webhookHeaders({ id: 'evt_1', timestamp: Math.floor(Date.now() / 1000), body }, [secret]);
    assert.deepEqual(Object.keys(headers), ['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    assert.equal(headers['webhook-id'], 'evt_1');
    assert.match(headers['webhook-signature']!, /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(secret).verify(body.replace('order', 'other'), headers), WebhookVerificationError);
    assert.throws(() => new Webhook(generateSigningSecret()).verify(body, headers), WebhookVerificationError);
  });

  test('two secrets (a rotation): two signatures, space-separated, each verifiable with its own secret', () => {
    const [current, previous] = [generateSigningSecret(), generateSigningSecret()];
    const body = '{"id":"evt_2"}';
    const headers = webhookHeaders({ id: 'evt_2', timestamp: Math.floor(Date.now() / 1000), body }, [current, previous]);
    const signatures = headers['webhook-signature']!.split(' ');
    assert.equal(signatures.length, 2);
    assert.equal(signatures[0], signWebhook({ id: 'evt_2', timestamp: Number(headers['webhook-timestamp']), body }, [current]));
    assert.equal(signatures[1], signWebhook({ id: 'evt_2', timestamp: Number(headers['webhook-timestamp']), body }, [previous]));
    assert.deepEqual(new Webhook(current).verify(body, headers), { id: 'evt_2' });
    assert.deepEqual(new Webhook(previous).verify(body, headers), { id: 'evt_2' });
  });
});
