// POST /processors/{name}/events: where the payment processor sends its events (Stripe's webhook
// endpoint). Outside the API's versions and OAuth: the processor proves itself by the signature of
// the raw body, verified by its adapter with the secret it shares (docs/payments.md, "Processor
// events"). Answered 200 once the event is applied or known to be about nothing of ours, 400 when
// the signature does not verify; any other failure is a 5xx, which the processor retries.
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../core/errors.ts';
import { applyProcessorEvent } from '../flows/apply-processor-event.ts';
import type { PaymentDriver } from '../flows/settle-payment.ts';
import { type ProcessorEvent, ProcessorEventRejectedError } from './processor.ts';

/** Stripe's events are well under this; a body beyond it is no event of a processor. */
const EVENT_BODY_LIMIT = 256 * 1024;

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

  app.post(
    `/processors/${processor.name}/events`,
    { schema: { hide: true }, bodyLimit: EVENT_BODY_LIMIT },
    async function receiveProcessorEvent(request, reply) {
      const event = verifiedEvent(() => parseEvent(request.body as Buffer, request.headers));
      const effect = await applyProcessorEvent(driver, event);
      request.log.info({ processorEvent: { id: event.id, type: event.type }, effect }, 'processor event received');
      reply.header('cache-control', 'no-store');
      return { received: true };
    },
  );
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
