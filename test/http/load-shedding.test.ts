// Load shedding (ORDERPAY_HTTP_MAX_EVENT_LOOP_DELAY_MS, src/http/load-shedding.ts): while the event
// loop lags behind, requests are refused at once with a 503 problem and Retry-After; liveness and
// metrics still answer; once the lag is gone, requests pass again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { createCustomer } from '../helpers/actors.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { expectProblem } from '../helpers/problems.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('load shedding: ORDERPAY_HTTP_MAX_EVENT_LOOP_DELAY_MS', () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await startTestApp({ http: { ...loadConfig({}).http, maxEventLoopDelayMs: 200 } });
    ({ token } = await createCustomer(t));
  });
  after(() => t.close());

  /** Keeps the event loop busy in turns of turnMs, as a process with more work than CPU is; returns what stops it. */
  function overload(turnMs: number): () => void {
    let running = true;
    const spin = () => {
      if (!running) return;
      const until = performance.now() + turnMs;
      while (performance.now() < until) {
        // Busy: this turn of the event loop takes turnMs.
      }
      setImmediate(spin);
    };
    setImmediate(spin);
    return () => {
      running = false;
    };
  }

  /** Sends the request while the loop has lagged past the limit for a while. */
  async function afterLag(send: () => Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
    const stop = overload(400);
    try {
      await sleep(1200);
      return await send();
    } finally {
      stop();
    }
  }

  test('a lagging event loop → 503 SERVICE_UNAVAILABLE with Retry-After, at once; /livez and /metrics still answer', async () => {
    const shed = await afterLag(() => t.request(token, { method: 'GET', url: '/v1/orders' }));
    expectProblem(shed, 503, 'SERVICE_UNAVAILABLE', '/v1/orders', 'The server is overloaded; retry shortly.');
    assert.equal(shed.headers['retry-after'], '1');
    const oauth = await afterLag(() => t.app.inject({ method: 'GET', url: '/oauth/.well-known/openid-configuration' }));
    assert.equal(oauth.statusCode, 503);

    const live = await afterLag(() => t.request(undefined, { method: 'GET', url: '/livez' }));
    assert.equal(live.statusCode, 200);
    const metrics = await afterLag(() => t.app.inject({ method: 'GET', url: '/metrics' }));
    assert.equal(metrics.statusCode, 200);
    // The refusals are counted there (status 503), not logged one by one.
    assert.match(metrics.body, /orderpay_http_request_duration_seconds_count\{method="GET",route="\/v1\/orders",status="503"\} 1/);
  });

  test('once the lag is gone, requests pass again', async () => {
    await afterLag(() => t.request(undefined, { method: 'GET', url: '/livez' }));
    const deadline = performance.now() + 5000;
    let response: LightMyRequestResponse;
    do {
      await sleep(150);
      response = await t.request(token, { method: 'GET', url: '/v1/orders' });
    } while (response.statusCode === 503 && performance.now() < deadline);
    assert.equal(response.statusCode, 200, response.body);
  });
  test('one long pause is not overload: the request after it is served', async () => {
    // Several windows without lag first.
    await sleep(500);
    assert.equal((await t.request(token, { method: 'GET', url: '/v1/orders' })).statusCode, 200);
    const until = performance.now() + 1000;
    while (performance.now() < until) {
      // One synchronous step of a second, then the loop turns freely again.
    }
    await sleep(1);
    const response = await t.request(token, { method: 'GET', url: '/v1/orders' });
    assert.equal(response.statusCode, 200, response.body);
  });
});
