// Scenario (g): the same deep position of a collection read by cursor (GET /orders?after=<cursor>)
// and by page number (GET /orders?page=N), with page 1 as the reference, all on orderpay. The
// cursor is the meta.nextCursor of page N − 1, read once before the run; ?after= keeps the
// filters the cursor was made for. Depth: the page at 1M orders (9,999 of status=pending,
// 49,999 of all orders, each about the last but one) scaled by BENCH_ORDERS / 1M, so every size
// reads the same relative depth.
import type { RequestMix } from './load.ts';
import { int, mark, markdownTable, ms, rate } from './markdown.ts';
import type { Target } from './processes.ts';
import type { Aggregate } from './report.ts';

/** Target: the deep page by cursor costs at most 1.5× page 1 (p50). */
export const CURSOR_TARGET_RATIO = 1.5;
/**
 * Few connections: a deep page by number keeps PostgreSQL busy for hundreds of milliseconds at 1M
 * orders and seconds at 10M, so 32 of them at once would measure the queue (and wrk's timeout),
 * not the request. All three columns run alike.
 */
export const DEEP_PAGE_CONNECTIONS = 2;
/**
 * The bench's orderpay runs with this statement timeout instead of its default 15 s: the page by
 * number near the end of 10M orders takes tens of seconds (every row before it is read), and the
 * cursor is read from the page before it.
 */
export const BENCH_STATEMENT_TIMEOUT_MS = 300_000;
/** Above that statement timeout: a page too slow fails as a 5xx, not as a wrk timeout. */
export const DEEP_PAGE_TIMEOUT_SECONDS = BENCH_STATEMENT_TIMEOUT_MS / 1000 + 10;
/**
 * A column runs at least this many times as long as its request took alone, so that every
 * connection completes some requests (wrk drops those in flight when its time is up): the page by
 * number at 10M, or a cursor as slow.
 */
const RUN_FACTOR = 4;
const REFERENCE_ORDERS = 1_000_000;

interface Collection {
  id: string;
  title: string;
  /** The collection's query string, without page or cursor. */
  query: string;
  /** The page the issue measured at 1M orders. */
  pageAt1M: number;
}

const COLLECTIONS: Collection[] = [
  { id: 'pending', title: 'status=pending', query: 'status=pending', pageAt1M: 9_999 },
  { id: 'all', title: 'all orders', query: '', pageAt1M: 49_999 },
];

/** The three columns: page 1, the deep page by cursor, the same page by number. */
export const DEEP_PAGE_COLUMNS = ['page 1', 'cursor deep', 'page deep'] as const;

export interface DeepPageWorkload {
  kind: 'deep-page';
  /** 'g' for every collection: BENCH_SCENARIOS=g selects both. */
  key: 'g';
  collection: Collection;
  /** Set by prepareDeepPage: the page read deep, the collection's size, the three columns' paths. */
  page?: number;
  pageSize?: number;
  total?: number;
  paths?: readonly [string, string, string];
  /** How long one read of each column's page took alone, in seconds. */
  seconds?: readonly [number, number, number];
}

export interface DeepPageResult {
  key: 'g';
  collection: string;
  title: string;
  query: string;
  page: number;
  pageSize: number;
  total: number;
  connections: number;
  columns: { first: Aggregate; cursor: Aggregate; offset: Aggregate };
}

export const isDeepPageWorkload = (workload: object): workload is DeepPageWorkload => (workload as { kind?: string }).kind === 'deep-page';

export const deepPageLabel = (workload: Pick<DeepPageWorkload, 'collection'>) => `(g) deep page, ${workload.collection.title}`;

export function deepPageWorkloads(): DeepPageWorkload[] {
  return COLLECTIONS.map((collection) => ({ kind: 'deep-page', key: 'g', collection }));
}

const pathOf = (query: string, ...params: string[]) => {
  const search = [query, ...params].filter(Boolean).join('&');
  return search ? `/orders?${search}` : '/orders';
};

interface Envelope {
  data: { id: number }[];
  meta: { total: number; pageSize: number; totalPages: number; nextCursor?: string | null };
}

async function getPage(orderpay: Target, path: string): Promise<Envelope & { seconds: number }> {
  const started = performance.now();
  const response = await fetch(orderpay.server.url + path, { headers: orderpay.headers });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`(g) GET ${path} answered ${response.status}: ${text.slice(0, 500)}`);
  return { ...(JSON.parse(text) as Envelope), seconds: (performance.now() - started) / 1000 };
}

/** The page read deep: the page scaled to this many orders, within the collection. */
function deepPageNumber(collection: Collection, orders: number, totalPages: number): number {
  if (totalPages < 3) throw new Error(`(g) ${collection.title} has ${totalPages} pages: too few for a deep page`);
  return Math.min(Math.max(Math.round((collection.pageAt1M * orders) / REFERENCE_ORDERS), 2), totalPages - 1);
}

/**
 * Reads page N − 1 once (slowly, by number) for its meta.nextCursor, and checks that the page
 * after that cursor holds the orders of page N.
 */
export async function prepareDeepPage(workload: DeepPageWorkload, orderpay: Target, orders: number): Promise<DeepPageWorkload> {
  const { query } = workload.collection;
  const first = pathOf(query);
  const { meta, seconds: firstSeconds } = await getPage(orderpay, first);
  const page = deepPageNumber(workload.collection, orders, meta.totalPages);
  const before = pathOf(query, `page=${page - 1}`);
  const { meta: beforeMeta } = await getPage(orderpay, before);
  if (typeof beforeMeta.nextCursor !== 'string') {
    throw new Error(
      `(g) GET ${before} answered without a meta.nextCursor string (${JSON.stringify(beforeMeta.nextCursor)}): this orderpay has no cursor paging (meta.nextCursor, ?after=<cursor>), which (g) measures`,
    );
  }
  const cursor = pathOf(query, `after=${encodeURIComponent(beforeMeta.nextCursor)}`);
  const offset = pathOf(query, `page=${page}`);
  const byPage = await getPage(orderpay, offset);
  const byCursor = await getPage(orderpay, cursor);
  const ids = (envelope: Envelope) => envelope.data.map((order) => order.id).join(',');
  if (byPage.data.length === 0 || ids(byCursor) !== ids(byPage))
    throw new Error(`(g) the page after page ${page - 1}'s cursor holds orders [${ids(byCursor)}], page ${page} [${ids(byPage)}]`);
  return {
    ...workload,
    page,
    pageSize: meta.pageSize,
    total: meta.total,
    paths: [first, cursor, offset],
    seconds: [firstSeconds, byCursor.seconds, byPage.seconds],
  };
}

/** The three columns: each one path, and the shortest run each needs. */
export function deepPageColumns(workload: DeepPageWorkload): { requests: RequestMix; minSeconds: number }[] {
  const { paths, seconds } = workload;
  if (!paths || !seconds) throw new Error('(g) needs its cursor: prepareDeepPage first');
  return paths.map((path, i) => ({ requests: { method: 'GET', paths: [path] }, minSeconds: Math.ceil(RUN_FACTOR * seconds[i]!) }));
}

export function deepPageResult(workload: DeepPageWorkload, [first, cursor, offset]: Aggregate[]): DeepPageResult {
  return {
    key: 'g',
    collection: workload.collection.id,
    title: workload.collection.title,
    query: workload.collection.query,
    page: workload.page!,
    pageSize: workload.pageSize!,
    total: workload.total!,
    connections: DEEP_PAGE_CONNECTIONS,
    columns: { first: first!, cursor: cursor!, offset: offset! },
  };
}

/** The cursor's p50 ÷ page 1's p50, and whether it meets the target. */
export function judgeDeepPage(result: DeepPageResult): { ratio: number; met: boolean } {
  const ratio = result.columns.cursor.p50Ms / result.columns.first.p50Ms;
  return { ratio, met: ratio <= CURSOR_TARGET_RATIO };
}

export const DEEP_PAGE_HEADER = ['collection', 'read', 'req/s', 'p50 ms', 'p99 ms', 'node µs/req', 'pg µs/req', 'p50 ÷ page 1', 'target'];

export function deepPageRows(results: DeepPageResult[]): string[][] {
  return results.flatMap((result) => {
    const { first, cursor, offset } = result.columns;
    const verdict = judgeDeepPage(result);
    const row = (collection: string, read: string, a: Aggregate, ratio: string, target: string) => [
      collection,
      read,
      rate(a.requestsPerSecond),
      ms(a.p50Ms),
      ms(a.p99Ms),
      int(a.serverCpuUs),
      int(a.postgresCpuUs),
      ratio,
      target,
    ];
    const ratioTo = (a: Aggregate) => `${(a.p50Ms / first.p50Ms).toFixed(2)}×`;
    return [
      row(`(g) ${result.title}`, 'page 1', first, '1×', '—'),
      row('', `by cursor, page ${int(result.page)}`, cursor, ratioTo(cursor), `≤ ${CURSOR_TARGET_RATIO}× ${mark(verdict.met)}`),
      row('', `page=${int(result.page)}`, offset, ratioTo(offset), '—'),
    ];
  });
}

export function renderDeepPagesSection(results: DeepPageResult[]): string {
  if (!results.length) return '';
  const sizes = results.map(
    (r) =>
      `- ${r.title}: ${int(r.total)} orders, ${int(Math.ceil(r.total / r.pageSize))} pages of ${r.pageSize}, page ${int(r.page)} read deep`,
  );
  return `
## Deep pages (g)

${markdownTable(DEEP_PAGE_HEADER, deepPageRows(results))}

One deep position of each collection read three ways, all on orderpay: page 1 (\`GET /orders?status=pending\`,
\`GET /orders\`), the deep page by cursor (\`…&after=<cursor>\`, the cursor being the \`meta.nextCursor\` of
page N − 1, read once before the run) and the same page by number (\`…&page=N\`); before the run the
bench checks that the page after the cursor holds the orders of page N.
${sizes.join('\n')}

The depth is the issue's page at 1M orders (9,999 of status=pending, 49,999 of all orders: about
the last but one) scaled by the number of orders, so every size reads the same relative depth.
${results[0]!.connections} connections for all three (a deep page by number at 32 would measure the queue behind it,
and wrk's timeout, rather than the request); the columns take turns to go first, and each runs at
least four times as long as its request took alone before the run, so that a page of tens of
seconds completes some. Target: the cursor's p50 ≤ ${CURSOR_TARGET_RATIO}× page 1's; page=N is the cost the cursor
avoids, for information.
`;
}
