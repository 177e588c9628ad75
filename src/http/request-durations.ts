// orderpay_http_request_duration_seconds: every request's latency by method, route pattern and
// status, as a Prometheus histogram in prom-client's registry. prom-client's Histogram validates
// and hashes the label object on each observe (the keys sorted, a string built); here a series is
// found by the three values themselves, without building anything: the route pattern and the
// method are the same string objects on every request (their hashes kept), the status a small
// integer. Its buckets are plain counters. The registry renders it as it renders its own
// histograms: cumulative buckets by `le`, `+Inf`, `_sum`, `_count` (the Prometheus exposition format).
import type { Metric, MetricValueWithName, Registry } from 'prom-client';

const NAME = 'orderpay_http_request_duration_seconds';
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface Series {
  labels: { method: string; route: string; status: string };
  /** Observations per bound (not cumulative); those above every bound are in count alone. */
  counts: number[];
  sum: number;
  count: number;
}

export interface RequestDurations {
  observe(method: string, route: string, status: number, seconds: number): void;
}

export function registerRequestDurations(registry: Registry): RequestDurations {
  // Series are bounded by the code: route patterns × methods × statuses. A key built per request
  // (a string of the three) cost a string's allocation and hashing on every request, and the
  // lookup showed as ~2% of a page's CPU in the bench's profile (issue 28).
  const byRoute = new Map<string, Map<string, Map<number, Series>>>();
  const series = () => [...byRoute.values()].flatMap((methods) => [...methods.values()].flatMap((statuses) => [...statuses.values()]));
  const described = {
    name: NAME,
    help: 'HTTP request duration by method, route pattern and status code.',
    type: 'histogram',
    aggregator: 'sum',
  };
  const metric = {
    ...described,
    get: async () => ({ ...described, values: series().flatMap(seriesValues) }),
    reset: () => byRoute.clear(),
  };
  registry.registerMetric(metric as unknown as Metric);
  return {
    observe(method, route, status, seconds) {
      const entry = seriesOf(byRoute, route, method, status);
      let bucket = 0;
      while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket++;
      if (bucket < BUCKETS.length) entry.counts[bucket]!++;
      entry.sum += seconds;
      entry.count++;
    },
  };
}

/** The series of a route, method and status, made on first use. */
function seriesOf(byRoute: Map<string, Map<string, Map<number, Series>>>, route: string, method: string, status: number): Series {
  const methods = byRoute.get(route) ?? byRoute.set(route, new Map()).get(route)!;
  const statuses = methods.get(method) ?? methods.set(method, new Map()).get(method)!;
  let entry = statuses.get(status);
  if (!entry) {
    entry = { labels: { method, route, status: String(status) }, counts: new Array(BUCKETS.length).fill(0), sum: 0, count: 0 };
    statuses.set(status, entry);
  }
  return entry;
}

function seriesValues({ labels, counts, sum, count }: Series): MetricValueWithName<string>[] {
  let cumulative = 0;
  const buckets = BUCKETS.map((bound, i) => {
    cumulative += counts[i]!;
    return { metricName: `${NAME}_bucket`, labels: { le: bound, ...labels }, value: cumulative };
  });
  return [
    ...buckets,
    { metricName: `${NAME}_bucket`, labels: { le: '+Inf', ...labels }, value: count },
    { metricName: `${NAME}_sum`, labels, value: sum },
    { metricName: `${NAME}_count`, labels, value: count },
  ];
}
