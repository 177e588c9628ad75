// The console's one way to the API: @orderpay/client (v3), whose fetch adds what a person at a
// screen needs. The access token is refreshed before it expires, and once more on a 401 before the
// request is sent again (then the session has expired); a 429 waits out Retry-After and is sent
// again with the same headers, Idempotency-Key included, so a retry never does the work twice; a
// request that cannot reach the server marks the console offline.
import { API_VERSION, createOrderpayClient, type OrderpayClient } from '@orderpay/client';
import type { Session } from '../auth/session.ts';
import type { ConsoleSettings } from '../settings.ts';
import type { Connection } from './connection.ts';

/** How often a rate-limited request is sent again before its 429 is shown. */
const RATE_LIMIT_RETRIES = 2;
/** The longest Retry-After waited out; a longer one is shown as it is. */
const RATE_LIMIT_MAX_WAIT_SECONDS = 60;

const wait = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** RFC 9110 §10.2.3: delay-seconds, or an HTTP date. */
export function retryAfterSeconds(response: Response): number | undefined {
  const value = response.headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

function createConsoleFetch(session: Session, connection: Connection): (request: Request) => Promise<Response> {
  async function send(request: Request): Promise<Response> {
    try {
      const response = await fetch(request);
      connection.update({ offline: false });
      return response;
    } catch (error) {
      // fetch rejects with a TypeError when no answer came: offline, or the server is unreachable.
      if (error instanceof TypeError) connection.update({ offline: true });
      throw error;
    }
  }

  return async function sendWithRecovery(request: Request): Promise<Response> {
    // A body can be read once: each retry sends a copy of the original.
    const original = request.clone();
    let response = await send(request);
    if (response.status === 401) {
      const tokens = await session.refresh();
      if (!tokens) return response;
      const again = original.clone();
      again.headers.set('authorization', `Bearer ${tokens.accessToken}`);
      response = await send(again);
      if (response.status === 401) session.expire();
    }
    for (let retry = 0; retry < RATE_LIMIT_RETRIES && response.status === 429; retry++) {
      const seconds = retryAfterSeconds(response) ?? 1;
      if (seconds > RATE_LIMIT_MAX_WAIT_SECONDS) break;
      connection.update({ rateLimitedFor: seconds });
      await wait(seconds);
      connection.update({ rateLimitedFor: null });
      const again = original.clone();
      const token = await session.accessToken();
      if (token) again.headers.set('authorization', `Bearer ${token}`);
      response = await send(again);
    }
    return response;
  };
}

export function createApi(settings: ConsoleSettings, session: Session, connection: Connection): OrderpayClient {
  if (settings.apiVersion !== API_VERSION) {
    throw new Error(`the console speaks API v${API_VERSION}, the server names v${settings.apiVersion}`);
  }
  return createOrderpayClient({
    serverUrl: settings.apiUrl,
    accessToken: async () => (await session.accessToken()) ?? '',
    fetch: createConsoleFetch(session, connection),
  });
}
