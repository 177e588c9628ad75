// Requests Node's HTTP parser refuses (RFC 9112 framing, header size, unknown methods) and requests
// that do not arrive in time: Fastify never sees them, so they are answered here, as problems
// written straight to the socket, and the connection is closed (after a framing error nothing
// more on it can be trusted to start where we think it does).
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ERRORS, type ErrorCode } from '../core/errors.ts';
import { closeLingering, pendingExchange } from './connections.ts';
import { PROBLEM_CONTENT_TYPE, problemTypeUri } from './problem.ts';

/** Node's error codes (llhttp's HPE_*), as catalogue codes with a detail for the client. */
const CLIENT_ERRORS: Record<string, [ErrorCode, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: ['REQUEST_TIMEOUT', 'The request did not arrive in time.'],
  HPE_HEADER_OVERFLOW: ['REQUEST_HEADERS_TOO_LARGE', 'The request line and header fields exceed 16 KiB.'],
  HPE_INVALID_METHOD: ['REQUEST_MALFORMED', 'The request method is not one this server knows.'],
  HPE_INVALID_URL: ['REQUEST_MALFORMED', 'The request line is malformed.'],
  HPE_INVALID_CONSTANT: ['REQUEST_MALFORMED', 'The request line is malformed.'],
  HPE_INVALID_VERSION: ['REQUEST_MALFORMED', 'The request line is malformed.'],
  HPE_INVALID_HEADER_TOKEN: ['REQUEST_MALFORMED', 'A header field is malformed.'],
  HPE_INVALID_CHUNK_SIZE: ['REQUEST_MALFORMED', 'A chunk size of the chunked body is not valid.'],
  HPE_INVALID_CONTENT_LENGTH: ['REQUEST_MALFORMED', 'Content-Length is not one valid number (RFC 9112 §6.3).'],
  HPE_UNEXPECTED_CONTENT_LENGTH: ['REQUEST_MALFORMED', 'The request has more than one Content-Length (RFC 9112 §6.3).'],
  HPE_INVALID_TRANSFER_ENCODING: [
    'REQUEST_MALFORMED',
    'Transfer-Encoding must end with chunked, and comes without Content-Length (RFC 9112 §6.1, §6.3).',
  ],
};

const MALFORMED: [ErrorCode, string] = ['REQUEST_MALFORMED', 'The request is not valid HTTP/1.1 (RFC 9112).'];

/** A problem's status, headers and body, as written outside Fastify: RFC 9457 body, no-store, Connection: close. */
function problemParts(
  code: ErrorCode,
  detail: string,
  publicUrl: string,
  requestId: string,
  instance: string,
): { status: number; headers: Record<string, string>; body: string } {
  const { status, title } = ERRORS[code];
  const body = JSON.stringify({ type: problemTypeUri(publicUrl, code), title, status, detail, instance, code, requestId });
  const headers = {
    'content-type': PROBLEM_CONTENT_TYPE,
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-request-id': requestId,
    date: new Date().toUTCString(),
    connection: 'close',
  };
  return { status, headers, body };
}

/** The whole response, status line to body. */
function rawProblemResponse(code: ErrorCode, detail: string, publicUrl: string, requestId: string, instance: string): string {
  const { status, headers, body } = problemParts(code, detail, publicUrl, requestId, instance);
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    '',
    body,
  ].join('\r\n');
}

/**
 * The server's 'checkExpectation' listener: an Expect other than 100-continue (RFC 9110 §10.1.1)
 * reaches no route; Node would answer a bare 417. The request is not read, so the connection closes.
 */
export function answerUnmetExpectation(publicUrl: string): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const requestId = randomUUID();
    const detail = 'The only expectation this server meets is Expect: 100-continue.';
    const { status, headers, body } = problemParts(
      'REQUEST_EXPECTATION_FAILED',
      detail,
      publicUrl,
      requestId,
      req.url?.split('?', 1)[0] ?? '/',
    );
    res.writeHead(status, headers).end(body);
  };
}

/**
 * Fastify's clientErrorHandler (bound to the instance): a problem for whatever the client sent
 * wrong, unless a response is already on its way (then only the connection is closed).
 */
export function answerClientError(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  // A reset by the client, or a socket we already closed: nothing to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed || socket.writableEnded) return;
  const pending = pendingExchange(socket);
  if (pending?.res.headersSent) {
    socket.destroy();
    return;
  }
  // The request being received, if the error is in it (not in one pipelined after it).
  const exchange = pending && !pending.req.complete ? pending : undefined;
  const [code, detail] = CLIENT_ERRORS[error.code ?? ''] ?? MALFORMED;
  // A timed-out request may have been read as far as its headers: its id and path are known.
  // Otherwise the occurrence is named by a new id (docs/errors.md, "The problem body").
  const requestId = exchange?.id ?? randomUUID();
  const instance = exchange?.req.url?.split('?', 1)[0] ?? `urn:uuid:${requestId}`;
  this.log.debug({ err: error, code, reqId: requestId }, 'client error');
  closeLingering(socket, rawProblemResponse(code, detail, this.config.publicUrl, requestId, instance));
}
