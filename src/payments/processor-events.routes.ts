// POST /processors/{name}/events: where the payment processor sends its events (Stripe's webhook
// endpoint). Outside the API's versions and OAuth: the processor proves itself by the signature of
// the raw body, verified by its adapter with the secret it shares (docs/payments.md, "Processor
// events"). Each event is applied once under its id, as a request under an Idempotency-Key is
// (src/idempotency/): the event and its answer commit together, and the same event again gets the
// same answer. 400 when the signature does not verify; a 5xx only when the outcome cannot be
// stored, which the processor retries.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../core/errors.ts';
import { applyProcessorEvent, type EventEffect } from '../flows/apply-processor-event.ts';
import type { PaymentDriver } from '../flows/settle-payment.ts';
import type { StoredResponse } from '../idempotency/idempotency.rules.ts';
import { type Completion, runKeyedWork } from '../idempotency/keyed-work.ts';
import { type ProcessorEvent, ProcessorEventRejectedError } from './processor.ts';

/** Stripe's events are well under this; a body beyond it is no event of a processor. */
const EVENT_BODY_LIMIT = 256 * 1024;

/**
 * Events applied at once by one process: a processor that sends a burst (or someone replaying
 * signed events) queues at the processor, not in the database's pool. Beyond it, 503: the processor
 * sends the event again later.
 */
const CONCURRENT_EVENTS = 16;

/** The answer to every event applied or known to be about nothing of ours (Stripe reads only the status). */
const RECEIVED: StoredResponse = {
  status: 200,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  body: '{"received":true}',
};

export interface ProcessorEventsOptions {
  driver: PaymentDriver;
}

export async function processorEventsRoutes(app: FastifyInstance, { driver }: ProcessorEventsOptions): Promise<void> {
  const { processor } = driver;
  const parseEvent = processor.parseEvent?.bind(processor);
  // A processor that sends no events has no path: 404 like any other.
  if (!parseEvent) return;
  // The signature covers the bytes as sent: the body reaches the adapter unparsed.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: EVENT_BODY_LIMIT }, (_request, body, done) => {
    done(null, body);
  });
  const path = `/processors/${processor.name}/events`;
  let applying = 0;

  app.post(path, { schema: { hide: true }, bodyLimit: EVENT_BODY_LIMIT }, async function receiveProcessorEvent(request, reply) {
    const payload = request.body as Buffer;
    const event = verifiedEvent(() => parseEvent(payload, request.headers));
    if (applying >= CONCURRENT_EVENTS) {
      throw new DomainError(
        'SERVICE_UNAVAILABLE',
        `More than ${CONCURRENT_EVENTS} processor events are being applied; send it again later.`,
      );
    }
    applying++;
    try {
      return await applyOnce(request, reply, event, payload);
    } finally {
      applying--;
    }
  });

  /** Step: the event applied under its id as the key, or the answer its first delivery got. */
  async function applyOnce(request: FastifyRequest, reply: FastifyReply, event: ProcessorEvent, payload: Buffer) {
    let effect: EventEffect | undefined;
    const result = await runKeyedWork(
      driver.db,
      {
        owner: { clientId: `processor:${processor.name}`, subject: 'events' },
        key: event.id,
        binding: { method: 'POST', path, fingerprint: createHash('sha256').update(payload).digest('hex') },
        times: request.server.config.idempotency,
      },
      {
        // Nothing to record first: the event itself says what to do, every time it comes.
        begin: async () => ({ recoveryPoint: 0 }),
        resume: async (_point, _reference, complete) => {
          const completion: Completion = { response: RECEIVED };
          let stored = false;
          effect = await applyProcessorEvent(driver, event, async (tx) => {
            await complete(tx, completion);
            stored = true;
          });
          // Nothing changed (known already, or about nothing of ours): the answer is stored alone.
          if (!stored) await driver.db.transaction((tx) => complete(tx, completion));
          return completion;
        },
      },
      {
        storedRefusal: () => undefined,
        onReleaseFailure: (error) => request.log.error({ err: error }, 'could not release the key of a processor event'),
      },
    );
    request.log.info({ processorEvent: { id: event.id, type: event.type }, effect: effect ?? 'replayed' }, 'processor event received');
    const { status, headers, body } = result.response;
    return reply.code(status).headers(headers).send(body);
  }
}

/** Step: the event as the adapter verified it, or a 400 that says why (never the secret). */
function verifiedEvent(parse: () => ProcessorEvent): ProcessorEvent {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ProcessorEventRejectedError)) throw error;
    throw new DomainError('PAYMENT_PROCESSOR_EVENT_INVALID', error.message);
  }
}
