// One attempt to deliver a webhook: a POST over node:http/https on a connection of its own, to the
// addresses its host resolves to at this moment, checked by the URL guard (DNS rebinding); no
// redirect is followed; the whole attempt, connecting included, has one deadline; of the response,
// only its status and the first KiB of its body are kept (as bytes: deliveries.rules.ts makes them
// text the delivery log can hold), and no more than a few KiB are read.
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { DomainError } from '../core/errors.ts';
import { guardedLookup, parseWebhookUrl, RefusedAddressError, refusedAddressReason } from './url-guard.ts';

/** The start of a response body kept for the delivery log. */
export const RESPONSE_BODY_KEPT_BYTES = 1024;
/** A response body is read up to this much, then the connection is closed. */
const RESPONSE_READ_CAP_BYTES = 16 * 1024;

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
export function sendWebhook(request: WebhookRequest): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const refused = refusedUrlReason(request.url, request.allowPrivate);
  if (refused) return Promise.resolve({ error: refused, durationMs: elapsed() });

  const url = new URL(request.url);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    let statusCode: number | undefined;
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let readBytes = 0;
    let settled = false;
    let outgoing: http.ClientRequest | undefined;
    const responseBody = () => Buffer.concat(kept);
    const finish = (result: Omit<SendResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      outgoing?.destroy();
      resolve({ ...result, durationMs: elapsed() });
    };
    // Once the status is in, the attempt has its answer; a body still coming at the deadline is cut.
    const deadline = setTimeout(() => {
      if (statusCode === undefined) finish({ error: `timed out: no response within ${request.timeoutMs} ms` });
      else finish({ statusCode, responseBody: responseBody() });
    }, request.timeoutMs);
    try {
      outgoing = transport.request(url, {
        method: 'POST',
        headers: { ...request.headers, 'content-length': Buffer.byteLength(request.body) },
        // A connection of its own: resolved (and checked) again for every attempt, never reused.
        agent: false,
        lookup: guardedLookup({ allowPrivate: request.allowPrivate }),
      });
    } catch (error) {
      finish({ error: describeError(error as Error) });
      return;
    }
    outgoing.on('response', (response) => {
      statusCode = response.statusCode;
      const done = () => finish({ statusCode, responseBody: responseBody() });
      response.on('data', (chunk: Buffer) => {
        readBytes += chunk.length;
        if (keptBytes < RESPONSE_BODY_KEPT_BYTES) {
          const part = chunk.subarray(0, RESPONSE_BODY_KEPT_BYTES - keptBytes);
          kept.push(part);
          keptBytes += part.length;
        }
        if (readBytes >= RESPONSE_READ_CAP_BYTES) done();
      });
      response.on('end', done);
      response.on('error', done);
    });
    outgoing.on('error', (error) => {
      if (statusCode === undefined) finish({ error: describeError(error) });
      else finish({ statusCode, responseBody: responseBody() });
    });
    outgoing.end(request.body);
  });
}
