-- Events (a transactional outbox: each is written in the transaction of the change it records) and
-- webhooks: the endpoints integrators register, one delivery per (endpoint, event), and every
-- attempt of each delivery (docs/webhooks.md).

CREATE TABLE events (
  id text PRIMARY KEY,
  -- Insertion order, for a stable order between events of one transaction (same created_at).
  seq bigint GENERATED ALWAYS AS IDENTITY,
  type text NOT NULL,
  -- The resource the event is about, as its record was when the change committed; rendered in
  -- each reader's API version when read or delivered (src/event-objects.ts).
  object_type text NOT NULL,
  object jsonb NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX events_created_idx ON events (created_at DESC, seq DESC);
CREATE INDEX events_type_created_idx ON events (type, created_at DESC, seq DESC);

CREATE TABLE webhook_endpoints (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  url text NOT NULL,
  -- Event types delivered; '*' is every type.
  enabled_events text[] NOT NULL,
  api_version integer NOT NULL,
  description text NOT NULL DEFAULT '',
  disabled boolean NOT NULL DEFAULT false,
  -- The signing secret (whsec_…), encrypted (src/webhooks/secrets.ts); after a rotation the one
  -- before it still signs until previous_secret_expires_at.
  secret text NOT NULL,
  previous_secret text,
  previous_secret_expires_at timestamptz(3),
  -- Since when every attempt to this endpoint has failed; NULL after any success.
  failing_since timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1
);

CREATE TABLE webhook_deliveries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id bigint NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'succeeded', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz(3) NOT NULL DEFAULT now(),
  -- Set when a dispatcher claims the delivery: no other claims it before then. A process that
  -- dies mid-delivery leaves it to be claimed again when the lease runs out (at least once).
  leased_until timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);
-- The leases in force, counted per endpoint by every claim (the dispatcher keeps a few per endpoint
-- in flight; an attempt's outcome clears its lease).
CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (endpoint_id, leased_until) WHERE leased_until IS NOT NULL;

CREATE TABLE webhook_attempts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempted_at timestamptz(3) NOT NULL DEFAULT now(),
  -- NULL when no response came (refused, timed out, refused by the address guard).
  status_code integer,
  duration_ms integer NOT NULL,
  error text,
  -- The first 1 KiB of the response body.
  response_body text
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, id);
