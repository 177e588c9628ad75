// What the embedded database's socket carries between `orderpay serve` and a command: frames of a
// 4-byte length and a value in V8's serialization format (node:v8, the structured clone algorithm:
// rows keep their Dates, byte arrays and JSON values as the driver produced them), one request
// answered by one response, in order.
import type { Socket } from 'node:net';
import path from 'node:path';
import { deserialize, serialize } from 'node:v8';
import type { QueryResult } from './db.ts';

/** Inside DATA_DIR: only who can read the database may reach it, and it moves with it. */
export function embeddedSocketPath(dataDir: string): string {
  return path.join(dataDir, 'orderpay.sock');
}

export type SocketRequest =
  | { op: 'query'; sql: string; params?: readonly unknown[] }
  | { op: 'exec'; sql: string }
  | { op: 'begin' | 'commit' | 'rollback' };

/** A database error as both drivers report it (SQLSTATE, constraint), without its stack. */
export interface EncodedError {
  message: string;
  code?: string;
  constraint?: string;
  detail?: string;
}

export type SocketResponse = { ok: true; result?: QueryResult<unknown> } | { ok: false; error: EncodedError };

// A local, owner-only socket, but a bound all the same: a corrupt length must not allocate gigabytes.
const MAX_FRAME_BYTES = 256 * 1024 * 1024;

export function writeFrame(socket: Socket, message: SocketRequest | SocketResponse): void {
  const payload = serialize(message);
  const header = Buffer.alloc(4);
  header.writeUInt32BE(payload.length);
  socket.write(Buffer.concat([header, payload]));
}

/** Calls onFrame with each value as it arrives whole; a malformed frame ends the connection. */
export function readFrames(socket: Socket, onFrame: (message: unknown) => void): void {
  let buffered: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    while (buffered.length >= 4) {
      const length = buffered.readUInt32BE(0);
      if (length > MAX_FRAME_BYTES) return void socket.destroy(new Error(`a frame of ${length} bytes is over the limit`));
      if (buffered.length < 4 + length) return;
      const payload = buffered.subarray(4, 4 + length);
      buffered = buffered.subarray(4 + length);
      let message: unknown;
      try {
        message = deserialize(payload);
      } catch (error) {
        return void socket.destroy(error as Error);
      }
      onFrame(message);
    }
  });
}

export function encodeError(error: unknown): EncodedError {
  const { message, code, constraint, detail } = error as EncodedError;
  return { message: String(message ?? error), code, constraint, detail };
}

/** The error again, with the fields src/db/sqlstate.ts reads (isDatabaseError, isUniqueViolation). */
export function decodeError(encoded: EncodedError): Error {
  const error = new Error(encoded.message);
  for (const key of ['code', 'constraint', 'detail'] as const) {
    if (encoded[key] !== undefined) Object.assign(error, { [key]: encoded[key] });
  }
  return error;
}
