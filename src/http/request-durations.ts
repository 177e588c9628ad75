// orderpay_http_request_duration_seconds: every request's latency by method, route pattern and
// status, as a Prometheus histogram in prom-client's registry. prom-client's Histogram validates
// and hashes the label object on each observe (the keys sorted, a string built); here a series is
// found by one string built from the three values, and its buckets are plain counters. The
// registry renders it as it renders its own histograms: cumulative buckets by `le`, `+Inf`, `_sum`,
// `_count` (the Prometheus exposition format).
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
  // Series are bounded by the code: methods × route patterns × statuses.
  const series = new Map<string, Series>();
  const described = {
    name: NAME,
    help: 'HTTP request duration by method, route pattern and status code.',
    type: 'histogram',
    aggregator: 'sum',
  };
  const metric = {
    ...described,
    get: async () => ({ ...described, values: [...series.values()].flatMap(seriesValues) }),
    reset: () => series.clear(),
  };
  registry.registerMetric(metric as unknown as Metric);
  return {
    observe(method, route, status, seconds) {
      const key = `${method} ${status} ${route}`;
      let entry = series.get(key);
      if (!entry) {
        entry = { labels: { method, route, status: String(status) }, counts: new Array(BUCKETS.length).fill(0), sum: 0, count: 0 };
        series.set(key, entry);
      }
      let bucket = 0;
      while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket++;
      if (bucket < BUCKETS.length) entry.counts[bucket]!++;
      entry.sum += seconds;
      entry.count++;
    },
  };
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
