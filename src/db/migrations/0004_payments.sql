-- Payments, their refunds, and the idempotency keys that make POST requests safe to retry.

CREATE TABLE payments (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The user the payment belongs to (the order's customer, or the paying user); NULL when a
  -- service client paid without an order.
  customer_id bigint REFERENCES users (id),
  client_id text NOT NULL,
  order_id bigint REFERENCES orders (id),
  amount bigint NOT NULL CHECK (amount > 0),
  currency char(3) NOT NULL,
  status text NOT NULL CHECK (status IN ('succeeded', 'declined', 'partially_refunded', 'refunded')),
  -- The database itself refuses refunds beyond the payment, whatever the code above it does.
  amount_refunded bigint NOT NULL DEFAULT 0 CHECK (amount_refunded >= 0 AND amount_refunded <= amount),
  decline_code text,
  processor text NOT NULL,
  processor_reference text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1,
  CHECK ((status = 'declined') = (decline_code IS NOT NULL))
);
CREATE INDEX payments_created_idx ON payments (created_at, id);
CREATE INDEX payments_customer_created_idx ON payments (customer_id, created_at, id);
CREATE INDEX payments_status_created_idx ON payments (status, created_at, id);
CREATE INDEX payments_order_idx ON payments (order_id, created_at, id) WHERE order_id IS NOT NULL;
-- An order takes money once: at most one payment of it that was not declined.
CREATE UNIQUE INDEX payments_order_settled_key ON payments (order_id) WHERE order_id IS NOT NULL AND status <> 'declined';

CREATE TABLE refunds (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  payment_id bigint NOT NULL REFERENCES payments (id),
  amount bigint NOT NULL CHECK (amount > 0),
  processor_reference text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refunds_payment_idx ON refunds (payment_id, id);

-- One row per (caller, key): the unique constraint, not the isolation level, decides which of
-- several concurrent requests performs the work (docs/payments.md "Idempotency").
CREATE TABLE idempotency_keys (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  client_id text NOT NULL,
  subject text NOT NULL,
  key text NOT NULL,
  method text NOT NULL,
  path text NOT NULL,
  -- SHA-256 over the API version and the canonical JSON of the body.
  fingerprint text NOT NULL,
  state text NOT NULL CHECK (state IN ('in_flight', 'completed')),
  -- Names the operation to the payment processor: the same for every retry of it (kept through
  -- releases and takeovers), new when the key is reused after its retention.
  operation_id uuid NOT NULL,
  -- Changes on every claim, so a process whose claim was taken over cannot complete it.
  lock_token text NOT NULL,
  locked_until timestamptz NOT NULL,
  response_status integer,
  response_headers jsonb,
  response_body text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  CONSTRAINT idempotency_keys_caller_key UNIQUE (client_id, subject, key),
  CHECK ((state = 'completed') = (response_status IS NOT NULL))
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);
