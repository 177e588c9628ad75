// buildApp(config, db) → the Fastify instance with every plugin and route registered. Never listens.
// The order is the request's way through: connections (refused while draining) → CORS (preflights
// answered) → load shedding → problems (errors anywhere become problem bodies) → versioning →
// authenticate → rate limits → idempotency → the resource routes; then operations and /oauth.
import Fastify, { type FastifyInstance } from 'fastify';
import { registerAuthorizationServer } from './auth/authorization-server.ts';
import { buildConsoleClient, describeConsoleSignIn } from './auth/console-client.ts';
import { buildDocsClient } from './auth/docs-client.ts';
import { listPublishedKeys } from './auth/keys.store.ts';
import { setsOwnCorsHeaders } from './auth/oauth-paths.ts';
import { listRevokedGrantsSince } from './auth/revoked-grants.store.ts';
import { listRevokedSubjectsSince } from './auth/revoked-subjects.store.ts';
import type { Config } from './config.ts';
import { type Clock, systemClock } from './core/clock.ts';
import { createCursorCodec, type CursorCodec } from './core/cursor.ts';
import { ensureCursorKey } from './db/cursor-key.ts';
import type { Db } from './db/db.ts';
import { renderEventObject } from './event-objects.ts';
import { authenticatePlugin } from './http/authenticate.ts';
import { answerClientError, answerUnmetExpectation } from './http/client-errors.ts';
import { connectionsPlugin, serverOptions } from './http/connections.ts';
import { consolePagePlugin } from './http/console-page.ts';
import { contentCodingPlugin } from './http/content-coding.ts';
import { mergePatchPlugin } from './http/merge-patch.ts';
import { corsPlugin } from './http/cors.ts';
import { createDpopReplayStore } from './http/dpop-replay-stores.ts';
import { createGrantRevocations } from './http/grant-revocations.ts';
import { createSubjectRevocations } from './http/subject-revocations.ts';
import type { Failpoint } from './core/failpoints.ts';
import { idempotencyPlugin } from './http/idempotency.ts';
import { loadSheddingPlugin } from './http/load-shedding.ts';
import { metricsPlugin } from './http/metrics.ts';
import { registerWebhookBacklogGauges } from './http/business-metrics.ts';
import { openApiPlugin } from './http/openapi.ts';
import { registerOperationalRoutes } from './http/operational.routes.ts';
import { problemsPlugin, sendFrameworkError } from './http/problems.ts';
import { readRoutingPlugin } from './http/read-routing.ts';
import { createCounters, limitRoutes, rateLimitPlugin } from './http/rate-limit/rate-limit.ts';
import { homeRoutes } from './http/home.routes.ts';
import { generateRequestId } from './http/request-id.ts';
import { RequestLogController } from './http/request-logging.ts';
import { securityHeadersPlugin } from './http/security-headers.ts';
import { jsonSerializers } from './http/serializers.ts';
import { Problem } from './http/schemas.ts';
import { createDpopCheck } from './http/token-binding.ts';
import { createTokenVerifier } from './http/token-verifier.ts';
import { createValidatorCompiler } from './http/validation.ts';
import { apiVersionConstraint, versioningPlugin, versionRoutes, type VersionScope } from './http/versioning.ts';
import { downgrade, resourceSchemaAt } from './http/versions/versions.ts';
import { API_VERSION_NUMBERS, retiredApiVersions } from './core/api-versions.ts';
import { DAILY_REPORTS_SINCE } from './core/day-range.ts';
import { eventsRoutes } from './events/events.routes.ts';
import { eventRepresentation, type RenderEventObject } from './events/events.representation.ts';
import { Event } from './events/events.schemas.ts';
import { backgroundJobs } from './jobs/jobs.ts';
import { createScheduler } from './jobs/scheduler.ts';
import { DailyOrderTotal, dailyOrderTotalsRoutes } from './orders/daily-order-totals.routes.ts';
import { ordersRoutes } from './orders/orders.routes.ts';
import { Order, OrderItem } from './orders/orders.schemas.ts';
import { processorEventsRoutes } from './payments/processor-events.routes.ts';
import { DailyPaymentOutcome, dailyPaymentOutcomesRoutes } from './payments/daily-payment-outcomes.routes.ts';
import { paymentsRoutes } from './payments/payments.routes.ts';
import { Payment, Refund } from './payments/payments.schemas.ts';
import { withProcessorTimeout, type PaymentProcessor } from './payments/processor.ts';
import { createConfiguredProcessor } from './payments/processors.ts';
import { refundCause } from './payments/payments.rules.ts';
import { createPaymentCompleter } from './flows/complete-payments.ts';
import type { PaymentDriver } from './flows/settle-payment.ts';
import { productsRoutes } from './products/products.routes.ts';
import { Product } from './products/products.schemas.ts';
import { selectDueDeliveries } from './webhooks/backlog.store.ts';
import { createWebhookDispatcher } from './webhooks/dispatcher.ts';
import { createEndpointRetirement } from './webhooks/retirement.ts';
import { startWakeUps, type WakeUps } from './webhooks/wake-ups.ts';
import { createSecretBox } from './webhooks/secrets.ts';
import { DailyWebhookDelivery, dailyWebhookDeliveriesRoutes } from './webhooks/daily-webhook-deliveries.routes.ts';
import { deliveryLogRoutes } from './webhooks/delivery-log.routes.ts';
import { webhookEndpointsRoutes } from './webhooks/endpoints.routes.ts';
import { WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret } from './webhooks/endpoints.schemas.ts';

export interface AppOptions {
  /** Clock for token expiry checks and a rotated client secret's grace (tests inject one). */
  now?: Clock;
  /** How often the authorization server checks for rotated signing keys (tests use 0). */
  keyCheckIntervalMs?: number;
  /** How stale the resource server's copies of revoked grants and subjects may get (default 1000; tests use 0). */
  revocationCheckIntervalMs?: number;
  /** Clock of the rate limits counted in the database (tests freeze it inside one window). */
  rateLimitNow?: Clock;
  /** Pino logger options; false silences logging (tests). */
  logger?: boolean | object;
  /** The payment processor; the one the configuration names by default (docs/payments.md, "Plugging in a real processor"). */
  paymentProcessor?: PaymentProcessor;
  /** How long a processor call may take before it counts as unavailable (default 10 s). */
  processorTimeoutMs?: number;
  /** Test-only fault injection at named points of a write or a webhook delivery (src/core/failpoints.ts). */
  failpoint?: Failpoint;
  /** How long a webhook attempt may take, connecting included, before it counts as timed out (default 10 s). */
  webhookAttemptTimeoutMs?: number;
  /** Where the built staff console is (default console/dist; tests name a missing one). */
  consoleDist?: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    db: Db;
    /** Signs and verifies the paging cursors of the resource routes (decorated on their scope). */
    cursors: CursorCodec;
  }
}

export const BODY_LIMIT = 64 * 1024;

export async function buildApp(config: Config, db: Db, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? { level: config.logLevel },
    // Probes (/livez, /readyz) are logged at debug, other requests at info (src/http/request-logging.ts).
    logController: new RequestLogController(),
    genReqId: generateRequestId,
    bodyLimit: BODY_LIMIT,
    // Timeouts from the configuration (src/http/connections.ts); what the HTTP parser refuses, and
    // requests that time out, are answered as problems (src/http/client-errors.ts).
    ...serverOptions(config.http),
    clientErrorHandler: answerClientError,
    // Fastify's own 503 while closing is not a problem; the server is drained before it closes,
    // and requests read while draining are refused as problems (src/http/connections.ts).
    return503OnClosing: false,
    // A hop count trusts that many proxies nearest to us (RFC 7239 hops), never the client's claims.
    trustProxy:
      typeof config.trustProxy === 'number' ? (_address: string, hop: number) => hop < (config.trustProxy as number) : config.trustProxy,
    // Unversioned resource paths: one route per version, chosen by Accept or the client's pin.
    routerOptions: { maxParamLength: 200, constraints: { apiVersion: apiVersionConstraint } as never },
    frameworkErrors: sendFrameworkError,
    schemaController: { compilersFactory: { buildSerializer: jsonSerializers() } },
  });
  app.server.on('checkExpectation', answerUnmetExpectation(config.publicUrl));
  app.decorate('config', config);
  app.decorate('db', db);
  // The resource server's payments: a processor only where the API runs.
  const paymentDriver = config.servers.resource
    ? createPaymentDriver(config, db, options, {
        // Counted by the process that commits a decision, whichever driver it is (src/http/business-metrics.ts).
        payment: (payment) => app.businessMetrics.countPayment(payment),
        refund: (refund) => {
          if (refund.status === 'succeeded') app.businessMetrics.countRefund(refundCause(refund.reference));
        },
      })
    : undefined;
  if (paymentDriver) {
    app.decorate('paymentDriver', paymentDriver);
    // A request has as long as its key's claim to finish a payment before the completer may take it on.
    app.decorate('paymentContext', { processor: paymentDriver.processor, leaseSeconds: config.idempotency.lockSeconds });
  }
  app.setValidatorCompiler(createValidatorCompiler());
  // Only JSON bodies: Fastify's built-in text/plain parser would let other media types through.
  app.removeContentTypeParser('text/plain');
  app.addHook('onSend', function sendRequestId(request, reply, payload, done) {
    reply.header('x-request-id', request.id);
    done(null, payload);
  });

  // connections first: its onRequest hook refuses requests that arrive while the server drains.
  await app.register(connectionsPlugin, { config: config.http });
  // CORS next: every later answer, refusals included, carries what a browser app needs to read it;
  // /oauth sets its own, from the same allow-list (src/auth/provider-mount.ts), but for userinfo.
  await app.register(corsPlugin, { config: config.cors, answersItself: setsOwnCorsHeaders });
  await app.register(loadSheddingPlugin, { maxEventLoopDelayMs: config.http.maxEventLoopDelayMs });
  await app.register(securityHeadersPlugin);
  await app.register(problemsPlugin);
  await app.register(contentCodingPlugin);
  await app.register(mergePatchPlugin);
  await app.register(versioningPlugin);
  // DPoP proofs' jti, remembered where the rate limits count: for the API and /oauth/userinfo.
  const now = options.now ?? systemClock;
  const dpopReplays = await createDpopReplayStore(db, {
    redisUrl: config.rateLimits.redisUrl,
    redisKeyPrefix: config.rateLimits.redisKeyPrefix,
    now,
    log: app.log,
  });
  app.addHook('onClose', function closeDpopReplays() {
    return dpopReplays.close();
  });
  const dpop = createDpopCheck({ publicUrl: config.publicUrl, replays: dpopReplays, now });
  await app.register(authenticatePlugin, {
    dpop,
    verifier: createTokenVerifier({
      issuer: config.issuer,
      audience: config.audience,
      jwksUrl: config.jwksUrl,
      loadKeys: () => listPublishedKeys(db),
      revocations: createGrantRevocations({
        loadRevokedSince: (since) => listRevokedGrantsSince(db, since),
        intervalMs: options.revocationCheckIntervalMs,
        now: options.now,
      }),
      subjectRevocations: createSubjectRevocations({
        loadChangedSince: (since) => listRevokedSubjectsSince(db, since),
        intervalMs: options.revocationCheckIntervalMs,
        now: options.now,
      }),
      now: options.now,
    }),
  });
  const counters = await createCounters(config.rateLimits, db, { now: options.rateLimitNow ?? systemClock, log: app.log });
  await app.register(rateLimitPlugin, { counters, config: config.rateLimits });
  await app.register(idempotencyPlugin, { failpoint: options.failpoint });

  app.addSchema(Problem);
  // Each resource's schema as every version shows it: Order (the latest), v1.Order, …; an Event
  // names the same version's resources (v1.Event carries v1.Order).
  for (const version of API_VERSION_NUMBERS) {
    for (const schema of [OrderItem, Order, Product, Payment, Refund, WebhookEndpoint, WebhookEndpointWithSecret, WebhookDelivery, Event]) {
      app.addSchema(resourceSchemaAt(schema, version));
    }
    if (version < DAILY_REPORTS_SINCE) continue;
    for (const schema of [DailyOrderTotal, DailyPaymentOutcome, DailyWebhookDelivery]) app.addSchema(resourceSchemaAt(schema, version));
  }
  // The client /docs signs in with, when this process runs the authorization server that knows it.
  const docsClient = buildDocsClient(config, app.log);
  await app.register(openApiPlugin, { config, docsSignIn: docsClient !== undefined });
  await app.register(metricsPlugin);
  // After the metrics (it counts where collection reads go), before the routes that read.
  if (config.servers.resource) await app.register(readRoutingPlugin);
  registerOperationalRoutes(app);
  await app.register(homeRoutes, { config });
  // The staff console and the client it signs in with, unless ORDERPAY_CONSOLE=false.
  const consoleClient = buildConsoleClient(config, app.log);
  if (config.console) {
    await app.register(consolePagePlugin, { config, signIn: describeConsoleSignIn(consoleClient), distDir: options.consoleDist });
  }

  if (config.servers.resource) {
    // The webhook backlog, as the database has it at each scrape (the same figure in every process).
    registerWebhookBacklogGauges(app.metricsRegistry, () => selectDueDeliveries(db), app.log);
    // One key for the cursors of every process of the deployment, read once here.
    const cursors = createCursorCodec(await ensureCursorKey(db));
    const retiredVersions = () => retiredApiVersions(config.apiDeprecations, now());
    // Resource routes: once per version under /v<N>, and once per version on the unversioned
    // paths, where the apiVersion constraint picks one per request.
    for (const version of API_VERSION_NUMBERS) {
      const livemode = paymentDriver?.processor.livemode ?? false;
      const options = { version, deprecations: config.apiDeprecations, renderEventObject, cursors, livemode, retiredVersions, now };
      await app.register(resourceRoutes, { ...options, prefix: `/v${version}`, negotiated: false });
      await app.register(resourceRoutes, { ...options, negotiated: true });
    }
    // The processor's own events, unversioned, signed rather than authenticated.
    if (paymentDriver) await app.register(processorEventsRoutes, { driver: paymentDriver });
  }
  if (config.servers.authorization) {
    // In a scope of its own: its hooks (the /oauth rate limit, the host pinned to PUBLIC_URL) are
    // on the authorization server's routes alone, not on every request's way.
    await app.register(async function authorizationServer(scope) {
      await registerAuthorizationServer(scope, config, db, {
        counters,
        dpop,
        keyCheckIntervalMs: options.keyCheckIntervalMs,
        staticClients: [docsClient, consoleClient].filter((client) => client !== undefined),
        now: options.now,
      });
    });
  }

  // Events of the resource server are delivered by the processes that run it, unless ORDERPAY_WEBHOOKS_DELIVER=false.
  const webhookDispatcher =
    config.servers.resource && config.webhooks.deliver
      ? createWebhookDispatcher({
          db,
          secrets: createSecretBox(db, config.webhooks.secretKey),
          // The envelope too in the endpoint's version (a route's answer is downgraded by its route).
          renderEvent: (event, apiVersion) =>
            downgrade(
              'Event',
              eventRepresentation(event, apiVersion, renderEventObject, paymentDriver?.processor.livemode ?? false) as never,
              apiVersion,
            ),
          retryScheduleSeconds: config.webhooks.retryScheduleSeconds,
          allowPrivate: config.webhooks.allowPrivate,
          maxRatePerEndpoint: config.webhooks.maxRatePerEndpoint,
          log: app.log.child({ job: 'deliver-webhooks' }),
          attemptTimeoutMs: options.webhookAttemptTimeoutMs,
          failpoint: options.failpoint,
          onAttempt: (outcome, endpointState) => app.businessMetrics.countWebhookAttempt(outcome, endpointState),
        })
      : undefined;
  // Payments and refunds no request finished are driven on by the processes that run the API.
  const paymentCompleter = paymentDriver
    ? createPaymentCompleter(paymentDriver, {
        leaseSeconds: config.idempotency.lockSeconds,
        onFailure: (kind, id, error) => app.log.warn({ err: error, [`${kind}Id`]: id }, `the completer could not drive a ${kind} on`),
      })
    : undefined;
  // Webhook endpoints of a version retired by now are disabled before the dispatcher first looks, then every second.
  const endpointRetirement = config.servers.resource
    ? createEndpointRetirement({
        db,
        deprecations: config.apiDeprecations,
        now: options.now,
        log: app.log.child({ job: 'disable-retired-webhook-endpoints' }),
      })
    : undefined;
  const scheduler = createScheduler(
    backgroundJobs(db, config, { webhooks: webhookDispatcher, payments: paymentCompleter, endpointRetirement }),
    app.log,
  );
  let wakeUps: WakeUps | undefined;
  app.addHook('onReady', async function startBackgroundJobs() {
    await endpointRetirement?.disableRetiredEndpoints().catch((error: unknown) => {
      app.log.warn({ err: error, job: 'disable-retired-webhook-endpoints' }, 'background job failed');
    });
    scheduler.start();
    if (webhookDispatcher) wakeUps = startWakeUps(db, config, webhookDispatcher.wake, app.log.child({ job: 'deliver-webhooks' }));
  });
  app.addHook('onClose', async function stopBackgroundJobs() {
    await wakeUps?.close();
    await scheduler.stop();
  });
  return app;
}

/** The processor (the configured one unless options name another), each call bounded, and how payments are driven. */
function createPaymentDriver(config: Config, db: Db, options: AppOptions, onDecided: PaymentDriver['onDecided']): PaymentDriver {
  return {
    onDecided,
    db,
    processor: withProcessorTimeout(options.paymentProcessor ?? createConfiguredProcessor(config.payments), options.processorTimeoutMs),
    retryScheduleSeconds: config.payments.retryScheduleSeconds,
    actionExpirySeconds: config.payments.actionExpirySeconds,
    failpoint: options.failpoint,
  };
}

/**
 * The API's routes in one version (under /v<N>, or unversioned): the version resolved, the caller
 * authenticated and counted against the route's budget.
 */
async function resourceRoutes(
  scope: FastifyInstance,
  opts: VersionScope & {
    renderEventObject: RenderEventObject;
    cursors: CursorCodec;
    livemode: boolean;
    /** The API versions retired by now (webhook endpoints pinned to one are refused). */
    retiredVersions: () => readonly number[];
    /** Today, for the daily reports' default range. */
    now: Clock;
  },
): Promise<void> {
  scope.decorate('cursors', opts.cursors);
  versionRoutes(scope, opts);
  limitRoutes(scope);
  await scope.register(ordersRoutes);
  await scope.register(productsRoutes);
  await scope.register(paymentsRoutes);
  await scope.register(webhookEndpointsRoutes, { retiredVersions: opts.retiredVersions });
  await scope.register(deliveryLogRoutes);
  await scope.register(eventsRoutes, { renderEventObject: opts.renderEventObject, livemode: opts.livemode });
  if (opts.version >= DAILY_REPORTS_SINCE) {
    for (const reportRoutes of [dailyOrderTotalsRoutes, dailyPaymentOutcomesRoutes, dailyWebhookDeliveriesRoutes]) {
      await scope.register(reportRoutes, { now: opts.now });
    }
  }
}
