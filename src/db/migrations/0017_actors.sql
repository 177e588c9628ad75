-- Who made each change (src/core/actor.ts): an event names its actor; a payment and a refund keep
-- who asked for them, so that their outcome's event names that person or client even when the
-- completer or the processor's notification records it later. NULL for rows written before.
ALTER TABLE events ADD COLUMN actor jsonb;
ALTER TABLE payments ADD COLUMN requested_by jsonb;
ALTER TABLE refunds ADD COLUMN requested_by jsonb;
