// Request ids: a well-formed incoming X-Request-Id is kept (for tracing across services),
// otherwise a new UUID; returned on every response and carried by every log line.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function generateRequestId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && ACCEPTABLE_ID.test(incoming) ? incoming : randomUUID();
}
