// The server's client connections: how long a client may take (timeouts), how many connections it
// may hold (the cap), and how they are closed at shutdown (drainConnections). docs/deploy.md
// describes what a client sees; why: docs/decisions/0017-http-timeouts-and-connection-cap.md and
// docs/decisions/0016-graceful-shutdown-drains-connections.md.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { FastifyHttpOptions, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';
import { DomainError } from '../core/errors.ts';
import { runAsRead } from '../db/read-priority.ts';
import { sendProblem } from './problem.ts';

/**
 * How long a connection closed by us stays open for reading: what the client sends meanwhile is
 * read and dropped rather than answered by a TCP reset, which could destroy the answer we wrote
 * before the client reads it. The client's own close usually ends it within a round trip.
 */
export const LINGER_MS = 1000;

/** Fastify's options for the HTTP server, from the configuration. */
export function serverOptions(config: Config['http']): Pick<FastifyHttpOptions<Server>, 'http' | 'keepAliveTimeout' | 'requestTimeout'> {
  return {
    keepAliveTimeout: config.keepAliveTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    http: {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      // Node checks both timeouts on this timer (30 s by default, which would let a 10 s headers
      // timeout run to 40 s): a tenth of the headers timeout, at most a second, keeps them close.
      connectionsCheckingInterval: Math.min(1000, Math.ceil(config.headersTimeoutMs / 10)),
    },
  };
}

/** The exchange (request and response) a connection is busy with, kept on its socket. */
const kExchange = Symbol('orderpay.exchange');

interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  /** The request's id (X-Request-Id). */
  id: string;
}

type TrackedSocket = Socket & { [kExchange]?: Exchange };

/** The request the socket is receiving or answering, if its response is not finished. */
export function pendingExchange(socket: Socket): Exchange | undefined {
  const exchange = (socket as TrackedSocket)[kExchange];
  return exchange && !exchange.res.writableEnded ? exchange : undefined;
}

/**
 * Half-closes: sends `lastWords` (if any) and a FIN, keeps reading (and dropping) what the client
 * still sends, and destroys the socket when the client closes or LINGER_MS have passed.
 */
export function closeLingering(socket: Socket, lastWords?: string): void {
  if (socket.destroyed) return;
  if (!socket.writableEnded) {
    if (lastWords === undefined) socket.end();
    else socket.end(lastWords);
  }
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

async function connections(app: FastifyInstance, { config }: { config: Config['http'] }): Promise<void> {
  const server = app.server;
  // Connections beyond the cap are closed by Node as they are accepted: each holds a file
  // descriptor, and a process out of them cannot reach its database either.
  server.maxConnections = config.maxConnections;

  const sockets = new Set<TrackedSocket>();
  let draining: Promise<void> | undefined;

  server.on('connection', function trackConnection(socket: TrackedSocket) {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // First of every hook: nothing else runs for a request that arrives once the server drains. A
  // read's work (its hooks and handler, run from done) is queued first on the embedded database.
  app.addHook('onRequest', function trackExchange(request: FastifyRequest, reply: FastifyReply, done: () => void) {
    const socket = request.raw.socket as TrackedSocket;
    socket[kExchange] = { req: request.raw, res: reply.raw, id: request.id };
    if (draining) refuseWhileDraining(request, reply);
    else if (request.method === 'GET' || request.method === 'HEAD') runAsRead(done);
    else done();
  });

  function refuseWhileDraining(request: FastifyRequest, reply: FastifyReply): void {
    if (request.raw.socket.writableEnded) {
      // Read after we closed the connection (the client sent it before our FIN reached it):
      // nothing can be written back; the linger drops it.
      reply.hijack();
      return;
    }
    reply.header('connection', 'close');
    sendProblem(request, reply, new DomainError('SERVICE_UNAVAILABLE', 'The server is shutting down; retry on a new connection.'));
  }

  /**
   * Stops accepting and closes every connection as soon as it has nothing left to do: idle ones at
   * once, with a FIN (RFC 9112 §9.6: the client opens a new connection, elsewhere); ones still
   * receiving a request (stalled or slow) at once, destroyed; ones whose request was received
   * after their response, which says `Connection: close`. A request read after the signal is
   * answered 503 with `Connection: close`. Resolves when no connection is left.
   */
  function drainConnections(): Promise<void> {
    draining ??= new Promise<void>((resolve) => {
      // net's close, not http's: http.Server#close also destroys idle connections outright, and
      // stops the timer that enforces the request timeouts.
      NetServer.prototype.close.call(server, () => resolve());
      // Bytes already received but not yet read become requests first, answered 503.
      setImmediate(closeConnections);
    });
    return draining;
  }

  function closeConnections(): void {
    for (const socket of sockets) {
      const exchange = pendingExchange(socket);
      if (!exchange) closeLingering(socket);
      else if (!exchange.req.complete) socket.destroy();
      else if (!exchange.res.headersSent) exchange.res.setHeader('connection', 'close');
      // Its headers went out saying keep-alive: the connection closes once the response is done.
      else exchange.res.once('finish', () => closeLingering(socket));
    }
  }

  app.decorate('drainConnections', drainConnections);
}

export const connectionsPlugin = fp(connections, { name: 'orderpay-connections', fastify: '5.x' });

declare module 'fastify' {
  interface FastifyInstance {
    /** Stops accepting and closes every connection once it is done (see connections.ts); resolves when none is left. */
    drainConnections(): Promise<void>;
  }
}
