// The environment orderpay reads, as one schema: each variable's type, bounds, format, default and
// description. src/config.ts validates against it; the README's configuration table is its documentation.
import { Type } from 'typebox';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Values arrive as strings: an integer must be decimal digits, a boolean true/false/1/0, a list comma-separated;
 * an empty variable is refused (unset it for the default). `defaultText` documents a default derived from other variables.
 */
export const EnvironmentSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'TCP port to listen on.' }),
  HOST: Type.String({ default: '127.0.0.1', description: 'Interface to listen on (`0.0.0.0` to accept remote connections).' }),
  PUBLIC_URL: Type.Optional(
    Type.String({
      format: 'url',
      defaultText: '`http://HOST:PORT`',
      description:
        "The service's public base URL: used in `Location`, `Link`, problem `type` URIs and as the token audience. Set it behind a proxy.",
    }),
  ),
  DATA_DIR: Type.String({
    default: './data',
    description:
      'Directory of the embedded database (created with its parents). One server at a time; commands run beside it reach it through its socket, `DATA_DIR/orderpay.sock`.',
  }),
  DATABASE_URL: Type.Optional(
    Type.String({
      format: 'url',
      pattern: '^postgres(ql)?://',
      description:
        'PostgreSQL connection string (`postgres://user:password@host:5432/database`; `postgresql://` too). When set, the embedded database is not used.',
    }),
  ),
  LOG_LEVEL: Type.Enum(LOG_LEVELS, {
    default: 'info',
    description:
      '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. Logs are JSON (pino), one line per event, with the request id.',
  }),
  NODE_ENV: Type.Enum(['development', 'test', 'production'], {
    default: 'development',
    description:
      '`development`, `test` or `production`; any other value is refused (a typo must not mean development). `production` disables demo data and demo tokens.',
  }),
  ORDERPAY_ISSUER: Type.Optional(
    Type.String({
      format: 'url',
      defaultText: '`PUBLIC_URL/oauth`',
      description: 'Issuer (`iss`) of the access tokens the API accepts.',
    }),
  ),
  ORDERPAY_AUDIENCE: Type.Optional(
    Type.String({ format: 'url', defaultText: '`PUBLIC_URL`', description: 'Audience (`aud`) the access tokens must carry.' }),
  ),
  ORDERPAY_JWKS_URL: Type.Optional(
    Type.String({
      format: 'url',
      description:
        "JWKS of an external issuer. Unset: the signing keys in orderpay's own database. Set, the API does not check orderpay's revoked grants (the issuer's grants are not in them).",
    }),
  ),
  ORDERPAY_TRUST_PROXY: Type.String({
    default: 'false',
    // "true" would trust every hop, letting any client choose its IP with X-Forwarded-For.
    pattern: '^(?!\\s*true\\s*$)',
    description:
      'Behind reverse proxies: their hop count (`1`) or addresses/CIDRs (`10.0.0.0/8`); client IPs (rate limits, logs) then come from `X-Forwarded-For`. `true` is refused: it would let clients choose their IP.',
  }),
  ORDERPAY_CORS_ORIGINS: Type.Optional(
    Type.Array(Type.String({ format: 'origin' }), {
      defaultText: 'any loopback origin in development, none otherwise',
      description:
        'Browser origins allowed to call the API cross-origin (CORS), comma-separated, each exactly as a browser sends it: `scheme://host[:port]`, no path (`https://shop.example.com,http://localhost:5173`). Unset: under `NODE_ENV=development` any `http`/`https` origin on `localhost`, `127.0.0.1` or `[::1]` (pages of a local dev server); under `test` and `production` none. The same list governs the browser calls to `/oauth` ([docs/api.md](docs/api.md#browser-apps-cors)).',
    }),
  ),
  ORDERPAY_SERVERS: Type.Array(Type.Enum(['resource', 'authorization']), {
    minItems: 1,
    default: ['resource', 'authorization'],
    description:
      'Which servers this process runs: the API (`resource`), the OAuth server at `/oauth` (`authorization`), or both. A resource-only process trusting another issuer sets `ORDERPAY_ISSUER` and `ORDERPAY_JWKS_URL`.',
  }),
  ORDERPAY_SEED_ON_EMPTY: Type.Optional(
    Type.Boolean({
      defaultText: '`true` on the embedded database',
      description: 'Seed demo data into an empty database on `serve` (never in production).',
    }),
  ),
  ORDERPAY_DOCS_CLIENT: Type.Optional(
    Type.Boolean({
      defaultText: '`true` except in production',
      description:
        'Let `/docs` sign in: the authorization server knows the public client `orderpay-docs` (authorization code + PKCE, redirect URI `PUBLIC_URL/docs/static/oauth2-redirect.html`, the API scopes). Needs `PUBLIC_URL` on https, or http on a loopback host. A pasted access token works either way.',
    }),
  ),
  ORDERPAY_CONSOLE: Type.Boolean({
    default: true,
    description:
      'Serve the staff console at `/console` ([docs/console.md](docs/console.md)) and let the authorization server know its public client `orderpay-console` (authorization code + PKCE, refresh tokens, redirect URI `PUBLIC_URL/console/callback`, the staff scopes). `false` turns both off. Signing in needs `PUBLIC_URL` on https, or http on a loopback host.',
  }),
  ORDERPAY_FAPI2_FOR_PAYMENTS: Type.Boolean({
    default: false,
    description:
      '`true`: a confidential client holds `payments:write` and `payments:refund` only on the FAPI 2.0 profile (`orderpay clients create --profile fapi2`, [docs/fapi.md](docs/fapi.md)); others are refused those scopes (`invalid_scope`) and keep the rest. Public clients (first-party apps, `/docs`, the console) are not affected.',
  }),
  ORDERPAY_DB_POOLER: Type.Enum(['none', 'transaction'], {
    default: 'none',
    description:
      "`transaction` when `DATABASE_URL` goes through a transaction-mode connection pooler (PgBouncer, RDS Proxy, Supabase's or Neon's pooler): no named prepared statements and no session settings; the timeouts are set per transaction ([docs/deploy.md](docs/deploy.md#connection-poolers)). `none`: a direct connection or a session-mode pooler.",
  }),
  ORDERPAY_DB_DIRECT_URL: Type.Optional(
    Type.String({
      format: 'url',
      pattern: '^postgres(ql)?://',
      description:
        'A direct connection to the same database as `DATABASE_URL`, bypassing the pooler, for what needs a session of its own: migrations run through it, and each process listens on it for new webhook deliveries (`LISTEN`). Unset: migrations go through `DATABASE_URL`, which is listened on too unless `ORDERPAY_DB_POOLER=transaction` (then deliveries wait for the poll).',
    }),
  ),
  ORDERPAY_READ_DATABASE_URL: Type.Optional(
    Type.String({
      format: 'url',
      pattern: '^postgres(ql)?://',
      description:
        'A streaming replica of the database (directly or through its own pooler, as `ORDERPAY_DB_POOLER` says) that serves collection reads while it is no more than `ORDERPAY_READ_MAX_LAG_MS` behind; a caller never reads older than its own last write. Needs `REDIS_URL` ([docs/deploy.md](docs/deploy.md#read-replicas)).',
    }),
  ),
  ORDERPAY_READ_MAX_LAG_MS: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 5000,
    description:
      'How far behind the primary the replica may be and still serve reads; further behind, or unreachable, the primary serves them.',
  }),
  ORDERPAY_DB_POOL_MAX: Type.Integer({ minimum: 1, maximum: 1000, default: 10, description: 'PostgreSQL connections per process.' }),
  ORDERPAY_DB_CONNECT_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    maximum: 600_000,
    default: 5000,
    description: 'Give up connecting after this long (the request answers 503).',
  }),
  ORDERPAY_DB_STATEMENT_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    maximum: 3_600_000,
    default: 15_000,
    description: 'Server-side `statement_timeout`.',
  }),
  ORDERPAY_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    maximum: 3_600_000,
    default: 30_000,
    description: 'Server-side `idle_in_transaction_session_timeout`.',
  }),
  ORDERPAY_HTTP_HEADERS_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 10_000,
    description:
      "How long a client may take to send a request's headers, from its first byte (Node's `headersTimeout`); then `408` and the connection is closed.",
  }),
  ORDERPAY_HTTP_REQUEST_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 30_000,
    description:
      "How long a client may take to send a whole request, headers and body (Node's `requestTimeout`); then `408` and the connection is closed. At least `ORDERPAY_HTTP_HEADERS_TIMEOUT_MS`.",
  }),
  ORDERPAY_HTTP_KEEP_ALIVE_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 72_000,
    description:
      "How long an idle kept-alive connection stays open for the client's next request. Behind a load balancer, keep it above the balancer's own idle timeout (60 s on many), so that the balancer closes first.",
  }),
  ORDERPAY_HTTP_MAX_CONNECTIONS: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 4096,
    description:
      "Open client connections per process; connections beyond it are closed as they arrive. Each one holds a file descriptor: keep it well below the process's open-file limit (`ulimit -n`) less `ORDERPAY_DB_POOL_MAX` (docs/deploy.md).",
  }),
  ORDERPAY_HTTP_MAX_EVENT_LOOP_DELAY_MS: Type.Integer({
    minimum: 0,
    maximum: 600_000,
    default: 1000,
    description:
      'Load shedding: while the event loop lags more than this (the mean over a second, two seconds in a row), requests are answered `503` with `Retry-After` instead of queueing behind the backlog. `0` turns it off.',
  }),
  ORDERPAY_API_V1_DEPRECATION: Type.String({
    format: 'date-time',
    default: '2026-12-01T00:00:00Z',
    description:
      'When API v1 is deprecated (RFC 3339): v1 responses carry it as `Deprecation` (RFC 9745) beside `Sunset` and a link to [the migration guide](docs/migrating-to-v2.md).',
  }),
  ORDERPAY_API_V1_SUNSET: Type.String({
    format: 'date-time',
    default: '2027-06-01T00:00:00Z',
    description:
      'When API v1 stops answering (RFC 3339; `410` afterwards) and webhook endpoints pinned to v1 are disabled ([docs/webhooks.md](docs/webhooks.md#versions)). At least 6 months after `ORDERPAY_API_V1_DEPRECATION`: a shorter migration window is refused.',
  }),
  ORDERPAY_IDEMPOTENCY_RETENTION_SECONDS: Type.Integer({
    minimum: 60,
    maximum: 30 * 24 * 3600,
    default: 24 * 3600,
    description:
      'How long an idempotency key replays its response; afterwards the key is free again ([docs/payments.md](docs/payments.md#idempotency-keys)).',
  }),
  ORDERPAY_IDEMPOTENCY_LOCK_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 3600,
    default: 30,
    description:
      "How long a request's claim on a key is held before a retry may take over a key whose process died, and how long a payment's request has before the completer may drive the payment on instead. Keep it above the longest request. At most half of `ORDERPAY_IDEMPOTENCY_RETENTION_SECONDS`.",
  }),
  ORDERPAY_PAYMENT_PROCESSOR: Type.Optional(
    Type.Enum(['simulator', 'stripe'], {
      defaultText: '`simulator`, except under `NODE_ENV=production`',
      description:
        'The payment processor: `simulator`, the built-in deterministic one with test amounts ([docs/payments.md](docs/payments.md#test-amounts)), or `stripe` (`STRIPE_SECRET_KEY`, `STRIPE_WEBHOOK_SECRET`; [docs/payments.md](docs/payments.md#stripe)). Under `NODE_ENV=production` it must be named: `serve` with the API refuses to start without it, and the simulator runs only when named (its payments say `livemode: false`).',
    }),
  ),
  ORDERPAY_PAYMENTS_RETRY_SCHEDULE: Type.String({
    pattern: '^[0-9]+(,[0-9]+)*$',
    default: '1,5,30,120,600,1800,3600,7200,14400,28800',
    description:
      'Seconds to wait before asking the payment processor again about a payment or refund it did not answer for, comma-separated; after the last, the payment needs a person and is asked about at that interval ([docs/payments.md](docs/payments.md#when-the-processor-does-not-answer)). The default spans about 16 hours, inside the 24 hours Stripe keeps an idempotency key.',
  }),
  ORDERPAY_PAYMENTS_WAIT_MS: Type.Integer({
    minimum: 0,
    maximum: 60_000,
    default: 5000,
    description:
      'How long `POST /payments` and refunds in API v1 and v2, which show only final outcomes, wait for a payment in progress before answering `503` with `Retry-After` (the key kept for the retry).',
  }),
  ORDERPAY_PAYMENTS_ACTION_EXPIRY_SECONDS: Type.Integer({
    minimum: 10,
    maximum: 7 * 24 * 3600,
    default: 3600,
    description:
      'How long a customer has to complete the action a payment requires (3-D Secure) before it is canceled, nothing charged ([docs/payments.md](docs/payments.md#payments-that-wait-for-the-customer)).',
  }),
  ORDERPAY_STRIPE_API_BASE: Type.Optional(
    Type.String({
      format: 'url',
      pattern: '^https?://[^/]+/?$',
      description:
        "Where the Stripe adapter sends its API calls instead of https://api.stripe.com (a scheme, host and port, no path): a proxy, or a local server that speaks Stripe's API (the test suite's).",
    }),
  ),
  ORDERPAY_SIMULATOR_LATENCY_MS: Type.Integer({
    minimum: 0,
    maximum: 60_000,
    default: 0,
    description: "How long each call to the built-in simulated processor takes, as a real processor's would (benchmarks, fault tests).",
  }),
  STRIPE_SECRET_KEY: Type.Optional(
    Type.String({
      pattern: '^(sk|rk)_(test|live)_[A-Za-z0-9]+$',
      description:
        'The Stripe secret (or restricted) key, with `ORDERPAY_PAYMENT_PROCESSOR=stripe`: `sk_live_…` moves real money (payments say `livemode: true`), `sk_test_…` does not.',
    }),
  ),
  STRIPE_WEBHOOK_SECRET: Type.Optional(
    Type.String({
      pattern: '^whsec_[A-Za-z0-9]+$',
      description:
        "The signing secret of the Stripe webhook endpoint that sends to `POST /processors/stripe/events` (`whsec_…`, from Stripe's dashboard). Unset, Stripe's events are refused (400) and outcomes arrive by the completer's questions only.",
    }),
  ),
  REDIS_URL: Type.Optional(
    Type.String({
      format: 'url',
      pattern: '^rediss?://',
      description:
        'Redis (`redis://[user:password@]host:port[/db]`, `rediss://` for TLS) for the rate limits and the DPoP proofs already used. Unset: both are kept in PostgreSQL ([docs/deploy.md](docs/deploy.md#rate-limits)).',
    }),
  ),
  ORDERPAY_RATE_LIMIT_REDIS_PREFIX: Type.String({
    default: 'orderpay:ratelimit:',
    description: 'Prefix of the rate-limit keys in Redis, so that several deployments can share one Redis.',
  }),
  ORDERPAY_RATE_LIMIT_WINDOW_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 3600,
    default: 60,
    description: 'The window of the API budgets below (fixed windows; [docs/api.md](docs/api.md#rate-limits)).',
  }),
  ORDERPAY_RATE_LIMIT_READS: Type.Integer({
    minimum: 1,
    maximum: 1_000_000_000,
    default: 600,
    description:
      'Reads (`GET`, `HEAD`) per window, per caller (client and subject of the access token) or, without a valid token, per client IP.',
  }),
  ORDERPAY_RATE_LIMIT_WRITES: Type.Integer({
    minimum: 1,
    maximum: 1_000_000_000,
    default: 120,
    description: 'Writes (`POST`, `PUT`, `DELETE`) other than payments per window, per caller or IP.',
  }),
  ORDERPAY_RATE_LIMIT_PAYMENTS: Type.Integer({
    minimum: 1,
    maximum: 1_000_000_000,
    default: 30,
    description: 'Payments and refunds created per window, per caller or IP (a retry with the same `Idempotency-Key` counts too).',
  }),
  ORDERPAY_EVENTS_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    maximum: 3650,
    default: 30,
    description:
      'Days an event is kept (`GET /events`, redelivery); older ones are purged, with their deliveries ([docs/api.md](docs/api.md#events)).',
  }),
  ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: Type.Boolean({
    default: false,
    description:
      'Let webhook endpoints be `http` URLs on loopback and private addresses (development, tests). Refused under `NODE_ENV=production`, where endpoints must be `https` on public addresses ([docs/webhooks.md](docs/webhooks.md#safety)).',
  }),
  ORDERPAY_WEBHOOKS_RETRY_SCHEDULE: Type.String({
    pattern: '^[0-9]+(,[0-9]+)*$',
    default: '5,300,1800,7200,18000,36000,50400,72000,72000',
    description:
      'Seconds to wait before each retry of a failed webhook delivery, comma-separated (each ±10% jitter); after the last, the delivery is failed. The default retries 9 times over about 3 days.',
  }),
  ORDERPAY_WEBHOOKS_SECRET_KEY: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9+/]{43}=$',
      description:
        'Key (32 bytes, base64: `openssl rand -base64 32`) that encrypts webhook signing secrets at rest (AES-256-GCM). Unset: a key generated on first start and kept in the database, which protects nothing from a copy of the database; set it in production and keep it apart from backups.',
    }),
  ),
  ORDERPAY_WEBHOOKS_POLL_INTERVAL_MS: Type.Integer({
    minimum: 10,
    maximum: 60_000,
    default: 1000,
    description:
      'How often each process looks for webhook deliveries that are due, besides being woken when events are committed ([docs/webhooks.md](docs/webhooks.md#delivery)): retries come due by this poll.',
  }),
  ORDERPAY_WEBHOOKS_DELIVER: Type.Boolean({
    default: true,
    description:
      'Whether this process delivers webhooks. `false` for processes that only serve the API, leaving delivery to the others (each process that delivers takes its share of the work: [docs/deploy.md](docs/deploy.md#webhook-delivery)).',
  }),
  ORDERPAY_WEBHOOKS_MAX_RATE: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: 1000,
    description:
      'Deliveries sent to one webhook endpoint per second at most, across every process: protects a receiver that answers each request fast but cannot take a flood ([docs/webhooks.md](docs/webhooks.md#delivery)).',
  }),
  ORDERPAY_METRICS_PORT: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 65535,
      description:
        'Serve `/metrics` on a listener of its own at this port (on `ORDERPAY_METRICS_HOST`), and no longer on `PORT`: firewall it to your monitoring network ([docs/deploy.md](docs/deploy.md#health-metrics-logs)).',
    }),
  ),
  ORDERPAY_METRICS_HOST: Type.Optional(
    Type.String({ defaultText: '`HOST`', description: 'Interface of the `/metrics` listener when `ORDERPAY_METRICS_PORT` is set.' }),
  ),
  ORDERPAY_METRICS_TOKEN: Type.Optional(
    Type.String({
      // RFC 6750 b64token characters, so that it travels as a bearer token; long enough not to be guessed.
      pattern: '^[A-Za-z0-9._~+/-]{32,}=*$',
      description:
        '`/metrics` answers only `Authorization: Bearer <token>` with this token (at least 32 characters, e.g. `openssl rand -hex 32`); others get `401`. In production, unless this or `ORDERPAY_METRICS_PORT` is set, `/metrics` is not served.',
    }),
  ),
});

interface ConfigurationVariable {
  readonly name: string;
  /** Markdown, as the README shows it; undefined when the variable has no default. */
  readonly default: string | undefined;
  /** Markdown. */
  readonly description: string;
}

/** What a variable's schema says for its documentation. */
interface VariableAnnotations {
  default?: unknown;
  defaultText?: string;
  description?: string;
}

/** Every variable of the environment with its default and description, in the schema's order. */
export function listConfigurationVariables(): ConfigurationVariable[] {
  const properties = EnvironmentSchema.properties as Record<string, VariableAnnotations>;
  return Object.entries(properties).map(([name, { default: value, defaultText, description }]) => ({
    name,
    default: value === undefined ? defaultText : `\`${String(value)}\``,
    description: description ?? '',
  }));
}
