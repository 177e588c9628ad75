// The request latency histogram is kept by orderpay's own series (no label hashing per request)
// and must read on /metrics exactly as prom-client's Histogram with the same buckets would.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { registerRequestDurations } from '../../src/http/request-durations.ts';

const OBSERVATIONS: [string, string, number, number][] = [
  ['GET', '/v1/orders', 200, 0.0004],
  ['GET', '/v1/orders', 200, 0.001],
  ['GET', '/v1/orders', 200, 0.0011],
  ['GET', '/v1/orders', 304, 0.03],
  ['POST', '/v2/payments', 201, 0.26],
  ['POST', '/v2/payments', 201, 2.5],
  ['POST', '/v2/payments', 201, 7],
  ['GET', 'unmatched', 404, 0.002],
];

test('the exposition of the histogram is prom-client’s, observation for observation', async () => {
  const ours = new Registry();
  const durations = registerRequestDurations(ours);
  const reference = new Registry();
  const histogram = new Histogram({
    name: 'orderpay_http_request_duration_seconds',
    help: 'HTTP request duration by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [reference],
  });
  assert.equal(await ours.metrics(), await reference.metrics(), 'before any request');
  for (const [method, route, status, seconds] of OBSERVATIONS) {
    durations.observe(method, route, status, seconds);
    histogram.observe({ method, route, status: String(status) }, seconds);
  }
  assert.equal(await ours.metrics(), await reference.metrics());
});
