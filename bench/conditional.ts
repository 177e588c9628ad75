// Scenario (f): GET /orders/{id} revalidated with a matching If-None-Match (304, no body) against
// the same ids without it (200), both on orderpay. Each id's current ETag (per id and API version)
// is read by one GET before the run; every response of the 304 column must be a 304, and every
// one of the 200 column a 200 (wrk counts the others, and the run fails on any).
// Scenario (fr), for comparison: the same pair on the raw baseline, its statements prepared as
// orderpay's are (GET /prepared/orders/{id}: the version alone while the tag matches): what a 304
// saves where nothing but node:http and pg run.
import { withPrefix, type RequestMix } from './load.ts';
import { PREPARED_PREFIX } from './payments.ts';
import type { Side, Target } from './processes.ts';
import type { Scenario } from './report.ts';

export interface ConditionalWorkload {
  kind: 'conditional';
  scenario: Scenario;
  /** The server both columns load, under this path prefix. */
  side: Side;
  /** The id paths, requested alike by both columns. */
  paths: string[];
  /** Each path's ETag, read from orderpay once for (f) and (fr), which request the same paths (prepareConditional). */
  etags?: string[];
}

export const isConditionalWorkload = (workload: object): workload is ConditionalWorkload =>
  (workload as { kind?: string }).kind === 'conditional';

/** (f) on orderpay, target: a 304 costs at most 1 / 1.3 of the 200 it replaces; (fr) on the baseline, for information. */
export function conditionalWorkloads(paths: string[]): ConditionalWorkload[] {
  const labels = ['304 (If-None-Match)', '200 (no tag)'] as const;
  return [
    {
      kind: 'conditional',
      scenario: {
        key: 'f',
        title: '304 vs 200: GET /orders/{id}',
        labels,
        orderpayRequest: "GET /orders/{id} + bearer token + If-None-Match: the id's current ETag (304, no body)",
        baselineRequest: 'the same GET on the same ids without If-None-Match (200 with the order)',
      },
      side: { server: 'orderpay', prefix: '' },
      paths,
    },
    {
      kind: 'conditional',
      scenario: {
        key: 'fr',
        title: '304 vs 200 on the raw baseline',
        labels,
        orderpayRequest: `baseline GET ${PREPARED_PREFIX}/orders/{id} + If-None-Match: the same tags (SELECT version, 304)`,
        baselineRequest: `baseline GET ${PREPARED_PREFIX}/orders/{id}, no tag ((a)'s SELECT, prepared: 200 with the order)`,
      },
      side: { server: 'baseline', prefix: PREPARED_PREFIX },
      paths,
    },
  ];
}

/** The two columns' requests: with each id's tag, every answer a 304; without, every answer a 200. */
export function conditionalRequests(workload: ConditionalWorkload): [RequestMix, RequestMix] {
  const { paths, etags, side } = workload;
  if (!etags) throw new Error(`(${workload.scenario.key}) needs the ETags: prepareConditional first`);
  return [
    withPrefix({ method: 'GET', paths, headersByPath: etags.map((etag) => ({ 'If-None-Match': etag })), expectStatus: 304 }, side.prefix),
    withPrefix({ method: 'GET', paths, expectStatus: 200 }, side.prefix),
  ];
}

async function fetchEtag(key: string, orderpay: Target, path: string): Promise<string> {
  const response = await fetch(orderpay.server.url + path, { headers: orderpay.headers });
  await response.arrayBuffer();
  const etag = response.headers.get('etag');
  if (response.status !== 200 || !etag) throw new Error(`(${key}) GET ${path} answered ${response.status} with ETag ${etag}`);
  return etag;
}

/** Every path's ETag, read from orderpay a few requests at a time. */
async function fetchEtags(key: string, orderpay: Target, paths: readonly string[]): Promise<string[]> {
  const etags = new Array<string>(paths.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < paths.length; i = next++) etags[i] = await fetchEtag(key, orderpay, paths[i]!);
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return etags;
}

/**
 * The workload with its paths' ETags (read from orderpay unless it holds them already), once the
 * first checks on the column's server: with its tag a 304 with no body, carrying the same ETag.
 */
export async function prepareConditional(workload: ConditionalWorkload, [orderpay, baseline]: Target[]): Promise<ConditionalWorkload> {
  const key = workload.scenario.key;
  const etags = workload.etags ?? (await fetchEtags(key, orderpay!, workload.paths));
  const target = workload.side.server === 'orderpay' ? orderpay! : baseline!;
  const [path, etag] = [workload.side.prefix + workload.paths[0]!, etags[0]!];
  const response = await fetch(target.server.url + path, { headers: { ...target.headers, 'if-none-match': etag } });
  const body = await response.text();
  const answeredTag = response.headers.get('etag');
  if (response.status !== 304 || body !== '' || answeredTag !== etag)
    throw new Error(
      `(${key}) ${target.server.name} GET ${path} with If-None-Match ${etag} answered ${response.status} (ETag ${answeredTag}), not 304`,
    );
  return { ...workload, etags };
}
