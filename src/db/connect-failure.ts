// The first connection to PostgreSQL failed: one line naming the server and the reason (never the
// password), instead of a driver's message such as "getaddrinfo ENOTFOUND base" and its stack.
import { isDatabaseError } from './db.ts';

export class DatabaseConnectError extends Error {
  /**
   * 2 when DATABASE_URL is wrong (no such host, database or role; a refused password): restarting
   * will not help. 1 when the server did not answer: a restart may succeed.
   */
  readonly exitCode: 1 | 2;

  constructor(message: string, exitCode: 1 | 2) {
    super(message);
    this.name = 'DatabaseConnectError';
    this.exitCode = exitCode;
  }
}

/** host:port/database of the connection string, as a message may show it. */
export function describeServer(url: string): string {
  const parsed = new URL(url);
  const host = parsed.searchParams.get('host') ?? (parsed.hostname || 'localhost');
  const database = decodeURIComponent(parsed.pathname.slice(1)) || decodeURIComponent(parsed.username) || '(default)';
  return `${host}${parsed.port ? `:${parsed.port}` : ''}/${database}`;
}

// PostgreSQL refused us (SQLSTATE, Appendix A): the address is right, what it names is not.
const REFUSED_BY_SERVER: Record<string, string> = {
  '3D000': 'the database does not exist (create it, e.g. `createdb`, or fix DATABASE_URL)',
  '28P01': 'the password was refused (check the user and password in DATABASE_URL)',
  '28000': 'the server does not accept this user from this address (pg_hba.conf), or the role does not exist',
};

// Node's errors on the way to the server.
const UNREACHABLE: Record<string, { reason: string; exitCode: 1 | 2 }> = {
  ENOTFOUND: { reason: 'the host name does not resolve (check the host in DATABASE_URL)', exitCode: 2 },
  EAI_AGAIN: { reason: 'the host name could not be resolved (DNS did not answer)', exitCode: 1 },
  ECONNREFUSED: { reason: 'connection refused (is PostgreSQL running, on this host and port?)', exitCode: 1 },
  EHOSTUNREACH: { reason: 'the host is unreachable', exitCode: 1 },
  ENETUNREACH: { reason: 'the network is unreachable', exitCode: 1 },
  ETIMEDOUT: { reason: 'the connection timed out', exitCode: 1 },
  ECONNRESET: { reason: 'the server closed the connection (does it expect TLS? add ?sslmode=require)', exitCode: 1 },
};

export function describeConnectFailure(url: string, error: unknown, connectTimeoutMs: number): DatabaseConnectError {
  const where = `cannot connect to PostgreSQL at ${describeServer(url)}`;
  // Node's codes first: a short one (EPIPE) would pass for a SQLSTATE.
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const unreachable = code ? UNREACHABLE[code] : undefined;
  if (unreachable) return new DatabaseConnectError(`${where}: ${unreachable.reason}`, unreachable.exitCode);
  if (isDatabaseError(error)) {
    const refused = REFUSED_BY_SERVER[error.code];
    return new DatabaseConnectError(`${where}: ${refused ?? error.message}`, refused ? 2 : 1);
  }
  const message = error instanceof Error ? error.message : String(error);
  // node-postgres' own wording when connectionTimeoutMillis passes.
  if (/due to connection timeout|timeout exceeded when trying to connect/i.test(message)) {
    return new DatabaseConnectError(`${where}: no answer within ${connectTimeoutMs} ms (ORDERPAY_DB_CONNECT_TIMEOUT_MS)`, 1);
  }
  return new DatabaseConnectError(`${where}: ${message}`, 1);
}
