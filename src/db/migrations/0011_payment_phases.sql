-- Payments and refunds in atomic phases (docs/payments.md, "How a payment is made"): a payment is
-- recorded as processing before the processor is asked, reserves its order while it is in progress,
-- and reaches its outcome in a later transaction, made by the request, the completer job or the
-- processor's event, whichever learns it first. The processor's answer may come later, or need the
-- customer (requires_action); a payment the processor never answers for is canceled and flagged.

ALTER TABLE payments DROP CONSTRAINT payments_status_check;
ALTER TABLE payments ADD CONSTRAINT payments_status_check
  CHECK (status IN ('processing', 'requires_action', 'succeeded', 'declined', 'canceled', 'partially_refunded', 'refunded'));
-- Our name for the charge, the processor's idempotency key for it: the same on every retry.
ALTER TABLE payments ADD COLUMN reference text;
UPDATE payments SET reference = 'legacy_' || id;
ALTER TABLE payments ALTER COLUMN reference SET NOT NULL;
CREATE UNIQUE INDEX payments_reference_key ON payments (processor, reference);
-- The processor's id of the charge: the recovery point between creating and confirming it. NULL
-- until the processor named it; a charge it never named was never confirmed, so took no money.
ALTER TABLE payments ALTER COLUMN processor_reference DROP NOT NULL;
ALTER TABLE payments
  -- What the payment was asked with (v3): the processor's payment method, where the customer returns.
  ADD COLUMN payment_method text,
  ADD COLUMN return_url text,
  -- requires_action: what the customer must do, and until when before the payment is canceled.
  ADD COLUMN next_action jsonb,
  ADD COLUMN action_expires_at timestamptz(3),
  ADD COLUMN cancellation_reason text,
  -- False for a processor's test mode (the simulator), like Stripe's livemode.
  ADD COLUMN livemode boolean NOT NULL DEFAULT false,
  -- The completer's schedule: calls that found the processor unavailable, and when to try next.
  ADD COLUMN attempts integer NOT NULL DEFAULT 0,
  ADD COLUMN next_attempt_at timestamptz(3),
  -- Set when the payment needs a person (docs/payments.md, "Payments that need attention").
  ADD COLUMN needs_attention_since timestamptz(3),
  ADD COLUMN attention_reason text,
  ADD CONSTRAINT payments_canceled_reason_check CHECK ((status = 'canceled') = (cancellation_reason IS NOT NULL)),
  ADD CONSTRAINT payments_next_action_check CHECK ((status = 'requires_action') = (next_action IS NOT NULL));

-- An order takes money once, and is reserved while a payment of it is in progress: at most one of
-- its payments that was not declined or canceled. A second payment (another key: a double click, two
-- devices) is refused while one is in progress.
DROP INDEX payments_order_settled_key;
CREATE UNIQUE INDEX payments_order_reserved_key ON payments (order_id)
  WHERE order_id IS NOT NULL AND status NOT IN ('declined', 'canceled');
-- What the completer drives: payments whose outcome is not known yet, by when they are due.
CREATE INDEX payments_due_idx ON payments (next_attempt_at) WHERE status IN ('processing', 'requires_action');
CREATE INDEX payments_attention_idx ON payments (needs_attention_since, id) WHERE needs_attention_since IS NOT NULL;

-- Refunds the same way: recorded as pending (their amount counted against the payment's balance)
-- before the processor is asked; failed gives the amount back.
ALTER TABLE refunds
  ADD COLUMN status text NOT NULL DEFAULT 'succeeded' CHECK (status IN ('pending', 'succeeded', 'failed')),
  ADD COLUMN reference text,
  ADD COLUMN failure_reason text,
  ADD COLUMN attempts integer NOT NULL DEFAULT 0,
  ADD COLUMN next_attempt_at timestamptz(3),
  ADD COLUMN needs_attention_since timestamptz(3),
  ADD COLUMN attention_reason text,
  ADD COLUMN updated_at timestamptz(3) NOT NULL DEFAULT now(),
  ADD CONSTRAINT refunds_failure_reason_check CHECK ((status = 'failed') = (failure_reason IS NOT NULL));
UPDATE refunds SET reference = 'legacy_' || id, updated_at = created_at;
ALTER TABLE refunds ALTER COLUMN reference SET NOT NULL;
ALTER TABLE refunds ALTER COLUMN processor_reference DROP NOT NULL;
CREATE UNIQUE INDEX refunds_reference_key ON refunds (reference);
CREATE INDEX refunds_due_idx ON refunds (next_attempt_at) WHERE status = 'pending';
CREATE INDEX refunds_attention_idx ON refunds (needs_attention_since, id) WHERE needs_attention_since IS NOT NULL;
