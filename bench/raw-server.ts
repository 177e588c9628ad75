// The baseline: node:http + a pg Pool, no framework, no authentication, no validation beyond what
// the SQL needs. It runs the SQL orderpay runs for the same requests, with the same type parsing
// (int8 → number, timestamptz → RFC 3339 string), so the ratio measures what the API adds.
//   GET /orders/{id}                      the id lookup
//   GET /orders?…&customerId=…            the filtered page and its count(*), as orderpay with minTotal
//   GET /orders?status=…                  the page only, WITHOUT any count
// Usage: node bench/raw-server.ts (DATABASE_URL, PORT); prints "listening <url>" when ready.
import http from 'node:http';
import pg from 'pg';
import { OID, parseInt8, parseTimestamptz } from '../src/db/db.ts';

const COLUMNS = `id, status, customer_id AS "customerId", total, currency, created_at AS "createdAt", updated_at AS "updatedAt"`;
const SORT_COLUMNS: Record<string, string> = { createdAt: 'created_at', status: 'status', total: 'total', id: 'id' };

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.POOL_MAX ?? 10),
  idleTimeoutMillis: 30_000, // as orderpay's pool
  options: '-c TimeZone=UTC',
  types: {
    getTypeParser: (oid: number, format?: string) =>
      oid === OID.INT8 ? parseInt8 : oid === OID.TIMESTAMPTZ ? parseTimestamptz : pg.types.getTypeParser(oid, format as 'text'),
  } as pg.CustomTypesConfig,
});
pool.on('error', () => undefined);

function orderBy(sort: string | null): string {
  const keys = (sort ?? 'createdAt').split(',').map((k) => ({ column: SORT_COLUMNS[k.replace(/^-/, '')], desc: k.startsWith('-') }));
  if (keys.some((k) => !k.column)) throw new Error('bad sort');
  if (!keys.some((k) => k.column === 'id')) keys.push({ column: 'id', desc: keys[0]!.desc });
  return keys.map((k) => `${k.column} ${k.desc ? 'DESC' : 'ASC'}`).join(', ');
}

async function findOrder(id: number): Promise<unknown> {
  const { rows } = await pool.query(`SELECT ${COLUMNS} FROM orders WHERE id = $1 AND deleted_at IS NULL`, [id]);
  return rows[0];
}

async function listOrders(query: URLSearchParams): Promise<unknown> {
  const params: unknown[] = [];
  const where = ['deleted_at IS NULL'];
  const customerId = query.get('customerId');
  const status = query.get('status');
  const minTotal = query.get('minTotal');
  if (customerId !== null) where.push(`customer_id = $${params.push(Number(customerId))}`);
  if (status !== null) where.push(`status = $${params.push(status)}`);
  if (minTotal !== null) where.push(`total >= $${params.push(Number(minTotal))}`);
  const page = { page: Number(query.get('page') ?? 1), pageSize: Number(query.get('pageSize') ?? 20) };
  const pageParams = [...params, page.pageSize, (page.page - 1) * page.pageSize];
  const selectPage = pool.query(
    `SELECT ${COLUMNS} FROM orders WHERE ${where.join(' AND ')} ORDER BY ${orderBy(query.get('sort'))} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    pageParams,
  );
  // Only the selective filter is counted; the broad one is the page alone (the baseline).
  const count = customerId !== null ? pool.query<{ n: number }>(`SELECT count(*) AS n FROM orders WHERE ${where.join(' AND ')}`, params) : undefined;
  const [{ rows }, counted] = await Promise.all([selectPage, count]);
  const meta: Record<string, number> = { page: page.page, pageSize: page.pageSize };
  if (counted) meta.total = counted.rows[0]!.n;
  return { data: rows, meta };
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

async function route(req: http.IncomingMessage): Promise<[number, unknown]> {
  const url = new URL(req.url ?? '/', 'http://raw');
  const byId = /^\/orders\/(\d+)$/.exec(url.pathname);
  if (req.method === 'GET' && byId) {
    const order = await findOrder(Number(byId[1]));
    return order ? [200, order] : [404, { error: 'not found' }];
  }
  if (req.method === 'GET' && url.pathname === '/orders') return [200, await listOrders(url.searchParams)];
  return [404, { error: 'not found' }];
}

const server = http.createServer((req, res) => {
  route(req).then(
    ([status, body]) => send(res, status, body),
    (error: unknown) => send(res, 500, { error: String(error) }),
  );
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening http://127.0.0.1:${typeof address === 'object' && address ? address.port : ''}`);
});
process.once('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
