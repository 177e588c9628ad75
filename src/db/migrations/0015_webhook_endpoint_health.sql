-- How an endpoint's recent attempts went, for the dispatcher's isolation (docs/webhooks.md
-- "Delivery", docs/decisions/0120-webhook-isolation.md): attempts failed in a row and, of them,
-- those that timed out (each halves the endpoint's attempt timeout, down to a floor); and, after
-- enough failures in a row, the circuit: no attempt until circuit_open_until, then one at a time
-- until one succeeds. A success resets all three. None of it is part of the endpoint's
-- representation's revision (version): the dispatcher writes it, never a client.
-- And the send-rate cap (ORDERPAY_WEBHOOKS_MAX_RATE): attempts claimed in the second that began at
-- rate_window_start, across every process (the claim holds the endpoint's row locked).
ALTER TABLE webhook_endpoints
  ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0,
  ADD COLUMN consecutive_timeouts integer NOT NULL DEFAULT 0,
  ADD COLUMN circuit_open_until timestamptz(3),
  ADD COLUMN rate_window_start timestamptz(3),
  ADD COLUMN rate_window_sends integer NOT NULL DEFAULT 0;
