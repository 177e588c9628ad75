// Scenario (f): GET /orders/{id} revalidated with a matching If-None-Match (304, no body) against
// the same ids without it (200), both on orderpay. Each id's current ETag (per id and API version)
// is read by one GET before the run; every response of the 304 column must be a 304, and every
// one of the 200 column a 200 (wrk counts the others, and the run fails on any).
import type { RequestMix } from './load.ts';
import type { Target } from './processes.ts';
import type { Scenario } from './report.ts';

export interface ConditionalWorkload {
  kind: 'conditional';
  scenario: Scenario;
  /** The id paths, requested alike by both columns. */
  paths: string[];
  /** Each path's ETag, once read from orderpay (prepareConditional). */
  etags?: string[];
}

export const isConditionalWorkload = (workload: object): workload is ConditionalWorkload =>
  (workload as { kind?: string }).kind === 'conditional';

/** Target: a 304 costs at most 1 / 1.3 of the 200 it replaces. */
export function conditionalWorkload(paths: string[]): ConditionalWorkload {
  return {
    kind: 'conditional',
    scenario: {
      key: 'f',
      title: '304 vs 200: GET /orders/{id}',
      labels: ['304 (If-None-Match)', '200 (no tag)'],
      targetRatio: 1.3,
      orderpayRequest: "GET /orders/{id} + bearer token + If-None-Match: the id's current ETag (304, no body)",
      baselineRequest: 'the same GET on the same ids without If-None-Match (200 with the order)',
    },
    paths,
  };
}

/** The two columns' requests: with each id's tag, every answer a 304; without, every answer a 200. */
export function conditionalRequests(workload: ConditionalWorkload): [RequestMix, RequestMix] {
  const { paths, etags } = workload;
  if (!etags) throw new Error('(f) needs the ETags: prepareConditional first');
  return [
    { method: 'GET', paths, headersByPath: etags.map((etag) => ({ 'If-None-Match': etag })), expectStatus: 304 },
    { method: 'GET', paths, expectStatus: 200 },
  ];
}

async function fetchEtag(orderpay: Target, path: string): Promise<string> {
  const response = await fetch(orderpay.server.url + path, { headers: orderpay.headers });
  await response.arrayBuffer();
  const etag = response.headers.get('etag');
  if (response.status !== 200 || !etag) throw new Error(`(f) GET ${path} answered ${response.status} with ETag ${etag}`);
  return etag;
}

/**
 * Reads every path's ETag from orderpay (a few requests at a time), then checks the first: with its
 * tag a 304 carrying the same ETag and no body.
 */
export async function prepareConditional(workload: ConditionalWorkload, orderpay: Target): Promise<ConditionalWorkload> {
  const etags = new Array<string>(workload.paths.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < workload.paths.length; i = next++) etags[i] = await fetchEtag(orderpay, workload.paths[i]!);
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const [path, etag] = [workload.paths[0]!, etags[0]!];
  const response = await fetch(orderpay.server.url + path, { headers: { ...orderpay.headers, 'if-none-match': etag } });
  const body = await response.text();
  if (response.status !== 304 || response.headers.get('etag') !== etag || body !== '')
    throw new Error(
      `(f) GET ${path} with If-None-Match ${etag} answered ${response.status} (ETag ${response.headers.get('etag')}), not 304`,
    );
  return { ...workload, etags };
}
