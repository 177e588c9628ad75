// A stand-in for Stripe's API on 127.0.0.1, for tests with no internet: the part of API v1 the
// Stripe processor (src/payments/stripe.ts) drives through the official SDK, in Stripe's wire format
// as its API reference documents it (https://docs.stripe.com/api): form-encoded parameters in bracket
// notation and Bearer secret keys (#authentication), errors of Stripe's shape and status codes
// (#errors), idempotent requests (#idempotent_requests), PaymentIntents and Refunds
// (#payment_intents, #refunds), Stripe's test payment methods (https://docs.stripe.com/testing) and
// signed webhook events (https://docs.stripe.com/webhooks#verify-manually). What only a customer or
// an outage could do (pass 3-D Secure, answer 500, never answer) tests ask of the object it returns.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import Stripe from 'stripe';

type IntentStatus = 'requires_payment_method' | 'requires_confirmation' | 'requires_action' | 'processing' | 'succeeded' | 'canceled';

interface StripeErrorBody {
  type: 'api_error' | 'card_error' | 'idempotency_error' | 'invalid_request_error';
  message: string;
  code?: string;
  decline_code?: string;
  param?: string;
  charge?: string;
  payment_intent?: StandInPaymentIntent;
  payment_method?: { id: string; object: 'payment_method'; type: 'card' };
}

export interface StandInPaymentIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_received: number;
  currency: string;
  status: IntentStatus;
  client_secret: string;
  payment_method: string | null;
  last_payment_error: Omit<StripeErrorBody, 'payment_intent'> | null;
  next_action: Record<string, unknown> | null;
  metadata: Record<string, string>;
  automatic_payment_methods: { enabled: true; allow_redirects: 'always' | 'never' } | null;
  capture_method: 'automatic';
  confirmation_method: 'automatic';
  latest_charge: string | null;
  canceled_at: number | null;
  cancellation_reason: string | null;
  created: number;
  livemode: false;
}

export interface StandInRefund {
  id: string;
  object: 'refund';
  amount: number;
  currency: string;
  payment_intent: string;
  charge: string | null;
  status: 'succeeded';
  reason: null;
  metadata: Record<string, string>;
  created: number;
}

/** What the next requests suffer: 500 and 429 answers, or no answer ('take-then-hang' does the work first). */
export type StandInFailure = 500 | 429 | 'hang' | 'take-then-hang';

export interface LoggedRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
}

export interface StripeStandIn {
  url: string;
  /** Every API request received, in order. */
  requests: LoggedRequest[];
  /** Resolves once count API requests have arrived (at once if they have). */
  requestsReached(count: number): Promise<void>;
  /** The customer passes (or fails) 3-D Secure on an intent that requires action. */
  completeAction(intentId: string, outcome: 'succeeded' | 'declined'): void;
  /** A confirmed intent whose outcome comes later (Stripe's processing); settle() decides it succeeded. */
  setProcessing(intentId: string): void;
  settle(intentId: string): void;
  failNext(count: number, failure: StandInFailure): void;
  /** The next requests take delayMs before their work is done, holding their idempotency key in flight meanwhile. */
  slowNext(count: number, delayMs: number): void;
  intents(): StandInPaymentIntent[];
  /** How many PaymentIntents were created with metadata[orderpay_reference] = reference. */
  intentsByReference(reference: string): number;
  refunds(): StandInRefund[];
  /** An event as Stripe sends it to a webhook endpoint, signed with the stand-in's webhook secret unless told. */
  signedEvent(
    type: string,
    object: object,
    options?: { timestamp?: number; secret?: string },
  ): { payload: string; headers: { 'stripe-signature': string } };
  /** Ends the requests left hanging, then the server. */
  close(): Promise<void>;
}

/** An answer: its status and body; keep false for one Stripe keeps under no idempotency key (refused before the endpoint ran). */
interface Reply {
  status: number;
  body: object;
  keep?: false;
  replayed?: true;
}

type Params = { [name: string]: string | Params };

/** Stripe's test payment methods (https://docs.stripe.com/testing#declined-payments, #regulatory-cards). */
const TEST_PAYMENT_METHODS: Record<string, 'succeeds' | 'authenticates' | { code: string; declineCode: string; message: string }> = {
  pm_card_visa: 'succeeds',
  pm_card_mastercard: 'succeeds',
  pm_card_chargeDeclined: { code: 'card_declined', declineCode: 'generic_decline', message: 'Your card was declined.' },
  pm_card_chargeDeclinedInsufficientFunds: {
    code: 'card_declined',
    declineCode: 'insufficient_funds',
    message: 'Your card has insufficient funds.',
  },
  pm_card_chargeDeclinedExpiredCard: { code: 'expired_card', declineCode: 'expired_card', message: 'Your card has expired.' },
  pm_card_threeDSecure2Required: 'authenticates',
};

const CONFIRMABLE: IntentStatus[] = ['requires_payment_method', 'requires_confirmation', 'requires_action'];
/** processing too "in rare cases", never for cards (https://docs.stripe.com/api/payment_intents/cancel). */
const CANCELABLE: IntentStatus[] = ['requires_payment_method', 'requires_confirmation', 'requires_action'];

const now = () => Math.floor(Date.now() / 1000);
const randomId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
const snapshot = <T>(value: T): T => structuredClone(value);
const ok = (object: object): Reply => ({ status: 200, body: snapshot(object) });

/** A request refused before the endpoint ran: Stripe keeps no result for it under its key. */
function refused(status: number, message: string, fields: Partial<StripeErrorBody> = {}): Reply {
  return { status, body: { error: { type: 'invalid_request_error', message, ...fields } }, keep: false };
}

/** Refused for the object's state, once the endpoint ran: kept under the key like any result. */
function refusedForState(message: string, fields: Partial<StripeErrorBody>): Reply {
  return { status: 400, body: { error: { type: 'invalid_request_error', message, ...fields } } };
}

function unexpectedState(intent: StandInPaymentIntent, verb: string, allowed: IntentStatus[]): Reply {
  const message = `You cannot ${verb} this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be ${verb}ed: ${allowed.join(', ')}.`;
  return refusedForState(message, { code: 'payment_intent_unexpected_state', payment_intent: snapshot(intent) });
}

/** Bracket notation (metadata[orderpay_reference]=…) as nested objects. */
function parseForm(body: string): Params {
  const params: Params = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const path = name.split('[').map((part) => part.replace(/]$/, ''));
    const last = path.pop()!;
    let node = params;
    for (const part of path) {
      if (typeof node[part] !== 'object') node[part] = {};
      node = node[part] as Params;
    }
    node[last] = value;
  }
  return params;
}

const text = (params: Params, name: string) => (typeof params[name] === 'string' ? (params[name] as string) : undefined);
const nested = (params: Params, name: string) => (typeof params[name] === 'object' ? (params[name] as Params) : {});
const metadataOf = (params: Params): Record<string, string> =>
  Object.fromEntries(Object.entries(nested(params, 'metadata')).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));

/** The same parameters in any order are the same request (the idempotency layer compares parameters). */
function fingerprintOf(method: string, path: string, body: string): string {
  const pairs = [...new URLSearchParams(body)].map(([name, value]) => `${name}=${value}`).sort();
  return `${method} ${path}?${pairs.join('&')}`;
}

function authenticationFailure(authorization: string | undefined): Reply | null {
  const key = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1];
  if (key === undefined) {
    return refused(
      401,
      "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').",
    );
  }
  // A stand-in in test mode: it knows no live key.
  if (!/^(sk|rk)_test_/.test(key)) return refused(401, `Invalid API Key provided: ${key.slice(0, 8)}****${key.slice(-4)}`);
  return null;
}

interface State {
  url: string;
  intents: Map<string, StandInPaymentIntent>;
  refunds: Map<string, StandInRefund>;
}

function createIntent(state: State, params: Params): Reply {
  const amount = Number(text(params, 'amount'));
  if (!Number.isInteger(amount) || amount < 1)
    return refused(400, 'Invalid positive integer', { param: 'amount', code: 'parameter_invalid_integer' });
  const currency = text(params, 'currency');
  if (!currency) return refused(400, 'Missing required param: currency.', { param: 'currency', code: 'parameter_missing' });
  const paymentMethod = text(params, 'payment_method') ?? null;
  if (paymentMethod !== null && !(paymentMethod in TEST_PAYMENT_METHODS)) return noSuchPaymentMethod(paymentMethod);
  const automatic = nested(params, 'automatic_payment_methods');
  const id = randomId('pi');
  const intent: StandInPaymentIntent = {
    id,
    object: 'payment_intent',
    amount,
    amount_received: 0,
    currency: currency.toLowerCase(),
    status: paymentMethod === null ? 'requires_payment_method' : 'requires_confirmation',
    client_secret: `${id}_secret_${randomBytes(12).toString('hex')}`,
    payment_method: paymentMethod,
    last_payment_error: null,
    next_action: null,
    metadata: metadataOf(params),
    automatic_payment_methods:
      automatic.enabled === 'true' ? { enabled: true, allow_redirects: automatic.allow_redirects === 'never' ? 'never' : 'always' } : null,
    capture_method: 'automatic',
    confirmation_method: 'automatic',
    latest_charge: null,
    canceled_at: null,
    cancellation_reason: null,
    created: now(),
    livemode: false,
  };
  state.intents.set(id, intent);
  return ok(intent);
}

function noSuchPaymentMethod(id: string): Reply {
  return refused(400, `No such PaymentMethod: '${id}'`, { param: 'payment_method', code: 'resource_missing' });
}

function confirmIntent(state: State, intent: StandInPaymentIntent, params: Params): Reply {
  if (!CONFIRMABLE.includes(intent.status)) return unexpectedState(intent, 'confirm', CONFIRMABLE);
  const paymentMethod = text(params, 'payment_method') ?? intent.payment_method;
  if (paymentMethod === null) {
    return refused(400, "You cannot confirm this PaymentIntent because it's missing a payment method.", {
      code: 'payment_intent_unexpected_state',
      payment_intent: snapshot(intent),
    });
  }
  const behaviour = TEST_PAYMENT_METHODS[paymentMethod];
  if (behaviour === undefined) return noSuchPaymentMethod(paymentMethod);
  const returnUrl = text(params, 'return_url') ?? null;
  if (intent.automatic_payment_methods?.allow_redirects === 'always' && returnUrl === null) {
    return refused(
      400,
      'A `return_url` must be specified because this Payment Intent is configured to automatically accept the payment methods enabled in the Dashboard, some of which may require a full page redirect to succeed. If you do not want to accept redirect-based payment methods, set `automatic_payment_methods[enabled]` to `true` and `automatic_payment_methods[allow_redirects]` to `never`.',
      { param: 'return_url' },
    );
  }
  Object.assign(intent, { payment_method: paymentMethod, last_payment_error: null, next_action: null });
  if (behaviour === 'succeeds') return ok(succeed(intent));
  if (behaviour === 'authenticates') return ok(requireAuthentication(state, intent, returnUrl));
  return decline(intent, paymentMethod, behaviour);
}

function succeed(intent: StandInPaymentIntent): StandInPaymentIntent {
  return Object.assign(intent, { status: 'succeeded', amount_received: intent.amount, next_action: null, latest_charge: randomId('ch') });
}

/** 3-D Secure: a page to send the customer to when there is a return_url, else Stripe.js's own flow. */
function requireAuthentication(state: State, intent: StandInPaymentIntent, returnUrl: string | null): StandInPaymentIntent {
  const url = `${state.url}/3ds/${intent.id}`;
  const nextAction =
    returnUrl !== null
      ? { type: 'redirect_to_url', redirect_to_url: { url, return_url: returnUrl } }
      : { type: 'use_stripe_sdk', use_stripe_sdk: { type: 'three_d_secure_redirect', stripe_js: url } };
  return Object.assign(intent, { status: 'requires_action', next_action: nextAction });
}

/** 402 card_error; the intent goes back to requires_payment_method, the failure in last_payment_error. */
function decline(
  intent: StandInPaymentIntent,
  paymentMethod: string,
  outcome: { code: string; declineCode: string; message: string },
): Reply {
  const charge = randomId('ch');
  const error = {
    type: 'card_error' as const,
    code: outcome.code,
    decline_code: outcome.declineCode,
    message: outcome.message,
    charge,
    payment_method: { id: paymentMethod, object: 'payment_method' as const, type: 'card' as const },
  };
  Object.assign(intent, { status: 'requires_payment_method', payment_method: null, last_payment_error: error, latest_charge: charge });
  return { status: 402, body: { error: { ...error, payment_intent: snapshot(intent) } } };
}

function cancelIntent(intent: StandInPaymentIntent, params: Params): Reply {
  if (!CANCELABLE.includes(intent.status)) return unexpectedState(intent, 'cancel', CANCELABLE);
  const reason = text(params, 'cancellation_reason') ?? null;
  return ok(Object.assign(intent, { status: 'canceled', canceled_at: now(), cancellation_reason: reason, next_action: null }));
}

function createRefund(state: State, params: Params): Reply {
  const intentId = text(params, 'payment_intent');
  const intent = intentId === undefined ? undefined : state.intents.get(intentId);
  if (intent === undefined)
    return refused(400, `No such payment_intent: '${intentId}'`, { param: 'payment_intent', code: 'resource_missing' });
  if (intent.status !== 'succeeded') return refused(400, `This PaymentIntent (${intent.id}) does not have a successful charge to refund.`);
  const refunded = [...state.refunds.values()].filter((r) => r.payment_intent === intent.id).reduce((sum, r) => sum + r.amount, 0);
  const left = intent.amount_received - refunded;
  if (left === 0) return refusedForState(`Charge ${intent.latest_charge} has already been refunded.`, { code: 'charge_already_refunded' });
  const amount = text(params, 'amount') === undefined ? left : Number(text(params, 'amount'));
  if (!Number.isInteger(amount) || amount < 1)
    return refused(400, 'Invalid positive integer', { param: 'amount', code: 'parameter_invalid_integer' });
  if (amount > left)
    return refused(400, `Refund amount (${amount}) is greater than unrefunded amount on charge (${left})`, { param: 'amount' });
  const refund: StandInRefund = {
    id: randomId('re'),
    object: 'refund',
    amount,
    currency: intent.currency,
    payment_intent: intent.id,
    charge: intent.latest_charge,
    status: 'succeeded',
    reason: null,
    metadata: metadataOf(params),
    created: now(),
  };
  state.refunds.set(refund.id, refund);
  return ok(refund);
}

/** The endpoint a request names, run on its parameters. */
function route(state: State, method: string, path: string, params: Params): Reply {
  const [resource, id, action] = path.replace(/^\/v1\//, '').split('/');
  if (resource === 'payment_intents') {
    if (id === undefined) return method === 'POST' ? createIntent(state, params) : unrecognized(method, path);
    const intent = state.intents.get(id);
    if (intent === undefined) return refused(404, `No such payment_intent: '${id}'`, { param: 'intent', code: 'resource_missing' });
    if (method === 'GET' && action === undefined) return ok(intent);
    if (method === 'POST' && action === 'confirm') return confirmIntent(state, intent, params);
    if (method === 'POST' && action === 'cancel') return cancelIntent(intent, params);
  }
  if (resource === 'refunds') {
    if (id === undefined) return method === 'POST' ? createRefund(state, params) : unrecognized(method, path);
    const refund = state.refunds.get(id);
    if (refund === undefined) return refused(404, `No such refund: '${id}'`, { param: 'id', code: 'resource_missing' });
    if (method === 'GET' && action === undefined) return ok(refund);
  }
  return unrecognized(method, path);
}

function unrecognized(method: string, path: string): Reply {
  return refused(404, `Unrecognized request URL (${method}: ${path}).`);
}

/** Stripe's idempotency layer (https://docs.stripe.com/api/idempotent_requests) in front of run. */
async function replyUnderKey(
  keys: Map<string, { fingerprint: string; reply?: Reply }>,
  key: string,
  fingerprint: string,
  run: () => Promise<Reply>,
): Promise<Reply> {
  const kept = keys.get(key);
  if (kept !== undefined && kept.fingerprint !== fingerprint) {
    const message = `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`;
    return { status: 400, body: { error: { type: 'idempotency_error', message } } };
  }
  if (kept?.reply !== undefined) return { ...kept.reply, replayed: true };
  if (kept !== undefined) {
    const message = `There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): ${key}. Please try again later.`;
    return { status: 409, body: { error: { type: 'idempotency_error', message } } };
  }
  const entry: { fingerprint: string; reply?: Reply } = { fingerprint };
  keys.set(key, entry);
  const reply = await run();
  if (reply.keep === false) keys.delete(key);
  else entry.reply = reply;
  return reply;
}

async function readBody(request: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(request: http.IncomingMessage, response: http.ServerResponse, reply: Reply, idempotencyKey: string | null): void {
  response.writeHead(reply.status, {
    'content-type': 'application/json',
    'request-id': randomId('req'),
    'stripe-version': request.headers['stripe-version'] ?? Stripe.API_VERSION,
    ...(idempotencyKey !== null && { 'idempotency-key': idempotencyKey }),
    ...(reply.replayed && { 'idempotent-replayed': 'true' }),
  });
  response.end(JSON.stringify(reply.body, null, 2));
}

export async function startStripeStandIn({ webhookSecret }: { webhookSecret: string }): Promise<StripeStandIn> {
  const state: State = { url: '', intents: new Map(), refunds: new Map() };
  const keys = new Map<string, { fingerprint: string; reply?: Reply }>();
  const requests: LoggedRequest[] = [];
  const awaitingRequests: { count: number; arrived: () => void }[] = [];
  const failures: StandInFailure[] = [];
  const delays: number[] = [];
  const held = new Set<http.ServerResponse>();
  // Only its webhook helpers are used: no request goes out through it.
  const signer = new Stripe('sk_test_stand_in');

  const hold = (response: http.ServerResponse) => {
    held.add(response);
    response.on('close', () => held.delete(response));
  };

  async function answerRequest(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const body = await readBody(request);
    const method = request.method ?? 'GET';
    const path = new URL(request.url ?? '/', state.url).pathname;
    const idempotencyKey = method === 'POST' ? ((request.headers['idempotency-key'] as string | undefined) ?? null) : null;
    requests.push({ method, path, idempotencyKey });
    for (const waiter of awaitingRequests.filter((w) => requests.length >= w.count)) {
      awaitingRequests.splice(awaitingRequests.indexOf(waiter), 1);
      waiter.arrived();
    }
    const failure = failures.shift();
    const delayMs = delays.shift() ?? 0;
    // Lost on the way: nothing is done, nothing is kept.
    if (failure === 'hang') return hold(response);
    // Rate limiting comes before the endpoint runs (https://docs.stripe.com/rate-limits): nothing kept.
    if (failure === 429) {
      return send(request, response, refused(429, 'Too many requests hit the API too quickly.', { code: 'rate_limit' }), idempotencyKey);
    }
    const unauthenticated = authenticationFailure(request.headers.authorization);
    if (unauthenticated) return send(request, response, unauthenticated, idempotencyKey);
    const params = parseForm(body);
    const run = async (): Promise<Reply> => {
      if (delayMs > 0) await sleep(delayMs);
      // A 500 is kept under the key like any result the endpoint gave; here nothing was done.
      if (failure === 500) return { status: 500, body: { error: { type: 'api_error', message: 'An unknown error occurred' } } };
      return route(state, method, path, params);
    };
    const reply = idempotencyKey === null ? await run() : await replyUnderKey(keys, idempotencyKey, fingerprintOf(method, path, body), run);
    // Done and kept, but the answer never leaves.
    if (failure === 'take-then-hang') return hold(response);
    send(request, response, reply, idempotencyKey);
  }

  const server = http.createServer((request, response) => {
    answerRequest(request, response).catch((error: unknown) => response.destroy(error as Error));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const intentOf = (id: string, status: IntentStatus): StandInPaymentIntent => {
    const intent = state.intents.get(id);
    if (intent?.status !== status) throw new Error(`stand-in: ${id} is ${intent?.status ?? 'unknown'}, not ${status}`);
    return intent;
  };

  return {
    url: state.url,
    requests,
    requestsReached(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise<void>((arrived) => awaitingRequests.push({ count, arrived }));
    },
    completeAction(intentId, outcome) {
      const intent = intentOf(intentId, 'requires_action');
      if (outcome === 'succeeded') {
        succeed(intent);
        return;
      }
      // Failed authentication (https://docs.stripe.com/payments/3d-secure/authentication-flow#when-authentication-fails).
      const error = {
        type: 'invalid_request_error' as const,
        code: 'payment_intent_authentication_failure',
        message: 'We are unable to authenticate your payment method. Please choose a different payment method and try again.',
      };
      Object.assign(intent, { status: 'requires_payment_method', payment_method: null, next_action: null, last_payment_error: error });
    },
    setProcessing(intentId) {
      const intent = state.intents.get(intentId);
      if (intent === undefined || !CONFIRMABLE.includes(intent.status)) throw new Error(`stand-in: ${intentId} cannot start processing`);
      Object.assign(intent, { status: 'processing', next_action: null, last_payment_error: null });
    },
    settle(intentId) {
      succeed(intentOf(intentId, 'processing'));
    },
    failNext(count, failure) {
      failures.push(...Array<StandInFailure>(count).fill(failure));
    },
    slowNext(count, delayMs) {
      delays.push(...Array<number>(count).fill(delayMs));
    },
    intents: () => snapshot([...state.intents.values()]),
    intentsByReference: (reference) => [...state.intents.values()].filter((i) => i.metadata.orderpay_reference === reference).length,
    refunds: () => snapshot([...state.refunds.values()]),
    signedEvent(type, object, options = {}) {
      const event = {
        id: randomId('evt'),
        object: 'event',
        api_version: Stripe.API_VERSION,
        created: now(),
        data: { object },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
      };
      const payload = JSON.stringify(event, null, 2);
      // Signed by the SDK's own helper, as Stripe signs a delivery (t=…,v1=HMAC-SHA256 of "t.payload").
      const header = signer.webhooks.generateTestHeaderString({
        payload,
        secret: options.secret ?? webhookSecret,
        timestamp: options.timestamp ?? now(),
      });
      return { payload, headers: { 'stripe-signature': header } };
    },
    async close() {
      for (const response of held) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
