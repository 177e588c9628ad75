-- The timestamps the API shows are stored at millisecond precision, so PGlite (whose clock ticks
-- in milliseconds) and PostgreSQL (microseconds) store and show the same values, and a client's
-- Date round trip (milliseconds) gives back exactly the stored instant. The column type does the
-- rounding, so every write (now() defaults, updated_at = now(), explicit values) is covered.
-- An order's deleted_at goes with them: a delete sets it and updated_at from the same now().
-- Existing values are rounded to the millisecond; each table is rewritten once, under its lock.
ALTER TABLE products
  ALTER COLUMN created_at TYPE timestamptz(3),
  ALTER COLUMN updated_at TYPE timestamptz(3);

ALTER TABLE orders
  ALTER COLUMN created_at TYPE timestamptz(3),
  ALTER COLUMN updated_at TYPE timestamptz(3),
  ALTER COLUMN deleted_at TYPE timestamptz(3);

ALTER TABLE payments
  ALTER COLUMN created_at TYPE timestamptz(3),
  ALTER COLUMN updated_at TYPE timestamptz(3);

ALTER TABLE refunds
  ALTER COLUMN created_at TYPE timestamptz(3);
