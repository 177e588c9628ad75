// One attempt to deliver a webhook: a POST over node:http/https to the addresses its host resolves
// to, checked by the URL guard (DNS rebinding) whenever a connection is opened; connections are kept
// alive and reused by the next attempts to the same origin (a receiver answering in a millisecond
// is not made to wait for a handshake each time), one pool per process; no redirect is followed;
// the whole attempt, connecting included, has one deadline; of the response, only its status and
// the first KiB of its body are kept (as bytes: deliveries.rules.ts makes them text the delivery
// log can hold), and no more than a few KiB are read.
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { DomainError } from '../core/errors.ts';
import { guardedLookup, parseWebhookUrl, RefusedAddressError, refusedAddressReason } from './url-guard.ts';

/** The start of a response body kept for the delivery log. */
export const RESPONSE_BODY_KEPT_BYTES = 1024;
/** A response body is read up to this much, then the connection is closed. */
const RESPONSE_READ_CAP_BYTES = 16 * 1024;
/** An idle kept-alive connection is closed after this long (receivers commonly close theirs after 5–60 s). */
const IDLE_CONNECTION_MS = 4_000;
/** Connections per origin: above the dispatcher's attempts in flight per endpoint, so never the limit. */
const CONNECTIONS_PER_ORIGIN = 32;

// Kept-alive connections, per process. The address guard runs in each connection's lookup (the
// request's `lookup`), so a reused connection is one to an address that was checked.
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS_PER_ORIGIN, timeout: IDLE_CONNECTION_MS, scheduling: 'lifo' }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: CONNECTIONS_PER_ORIGIN, timeout: IDLE_CONNECTION_MS, scheduling: 'lifo' }),
};

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: http, and loopback and private addresses, allowed. */
  allowPrivate: boolean;
}

export interface SendResult {
  /** The response's status, as the receiver wrote it; undefined when none came in time (error says why). */
  statusCode?: number;
  /** The first RESPONSE_BODY_KEPT_BYTES of the response body, as received. */
  responseBody?: Buffer;
  error?: string;
  /** No response came before the deadline (error says so too). */
  timedOut?: boolean;
  durationMs: number;
}

/** Why the URL may not be called at all (scheme, credentials, an IP literal that is not public). */
function refusedUrlReason(text: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = parseWebhookUrl(text, { allowPrivate });
  } catch (error) {
    if (error instanceof DomainError) return `refused: ${error.message}`;
    throw error;
  }
  // A literal address is connected to without a lookup, so the guarded lookup never sees it.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!allowPrivate && isIP(host)) {
    const reason = refusedAddressReason(host);
    if (reason) return `refused to connect: ${reason}`;
  }
  return undefined;
}

/** A transport error in a line of the delivery log: the system's code and message, no request data. */
function describeError(error: Error & { code?: string }): string {
  if (error instanceof RefusedAddressError) return error.message;
  return error.code && !error.message.includes(error.code) ? `${error.code}: ${error.message}` : error.message;
}

/** Sends the request once; never throws: every failure is a result with its error. */
export async function sendWebhook(request: WebhookRequest): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const refused = refusedUrlReason(request.url, request.allowPrivate);
  if (refused) return { error: refused, durationMs: elapsed() };
  const first = await sendOnce(request, request.timeoutMs);
  // A kept-alive connection the receiver closed as the request went out: the request never reached
  // it (RFC 9112 §9.3.1), so it is sent once more on a new connection, within the same deadline.
  const rest = request.timeoutMs - elapsed();
  if (first.staleConnection && rest > 0) return { ...(await sendOnce(request, rest)), durationMs: elapsed() };
  return { ...first.result, durationMs: elapsed() };
}

/** The request on a connection of the pool: its result, and whether it failed on a reused connection before any answer. */
function sendOnce(
  request: WebhookRequest,
  timeoutMs: number,
): Promise<{ result: Omit<SendResult, 'durationMs'>; staleConnection?: boolean }> {
  const url = new URL(request.url);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let statusCode: number | undefined;
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let readBytes = 0;
    let settled = false;
    let outgoing: http.ClientRequest | undefined;
    const responseBody = () => Buffer.concat(kept);
    /** Ends the attempt; `reusable` leaves the connection to the pool (the response was read to its end). */
    const finish = (result: Omit<SendResult, 'durationMs'>, options: { reusable?: boolean; staleConnection?: boolean } = {}) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (!options.reusable) outgoing?.destroy();
      resolve({ result, staleConnection: options.staleConnection });
    };
    // Once the status is in, the attempt has its answer; a body still coming at the deadline is cut.
    const deadline = setTimeout(() => {
      if (statusCode === undefined) finish({ error: `timed out: no response within ${request.timeoutMs} ms`, timedOut: true });
      else finish({ statusCode, responseBody: responseBody() });
    }, timeoutMs);
    try {
      outgoing = transport.request(url, {
        method: 'POST',
        headers: { ...request.headers, 'content-length': Buffer.byteLength(request.body) },
        agent: agents[url.protocol as keyof typeof agents],
        lookup: guardedLookup({ allowPrivate: request.allowPrivate }),
      });
    } catch (error) {
      finish({ error: describeError(error as Error) });
      return;
    }
    const sent = outgoing;
    sent.on('response', (response) => {
      statusCode = response.statusCode;
      response.on('data', (chunk: Buffer) => {
        readBytes += chunk.length;
        if (keptBytes < RESPONSE_BODY_KEPT_BYTES) {
          const part = chunk.subarray(0, RESPONSE_BODY_KEPT_BYTES - keptBytes);
          kept.push(part);
          keptBytes += part.length;
        }
        // More than the cap is not read: the connection is closed rather than drained.
        if (readBytes >= RESPONSE_READ_CAP_BYTES) finish({ statusCode, responseBody: responseBody() });
      });
      response.on('end', () => finish({ statusCode, responseBody: responseBody() }, { reusable: true }));
      response.on('error', () => finish({ statusCode, responseBody: responseBody() }));
    });
    sent.on('error', (error: Error & { code?: string }) => {
      if (statusCode !== undefined) return finish({ statusCode, responseBody: responseBody() });
      const stale = sent.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
      finish({ error: describeError(error) }, { staleConnection: stale });
    });
    sent.end(request.body);
  });
}
