-- Users, products, orders and order items; signing keys for the access tokens we verify.
-- SQL accepted by PostgreSQL 15 (CI's server) and 18 (PGlite) alike.

CREATE TABLE users (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email text NOT NULL,
  name text NOT NULL,
  role text NOT NULL DEFAULT 'customer' CHECK (role IN ('customer', 'staff')),
  password_hash text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE products (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name text NOT NULL,
  price bigint NOT NULL CHECK (price >= 0),
  currency char(3) NOT NULL,
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1
);

CREATE TABLE orders (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'paid', 'shipped', 'delivered', 'cancelled')),
  customer_id bigint NOT NULL REFERENCES users (id),
  total bigint NOT NULL CHECK (total >= 0),
  currency char(3) NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1,
  -- Soft delete: the row is kept, reads skip it.
  deleted_at timestamptz
);

-- Every documented filter (status, customerId, minTotal) and sort key (createdAt, status, total,
-- id; id is always the last tie-breaker) is served by one of these partial indexes over the
-- visible rows. A customerId filter is selective, so its index leads with customer_id.
CREATE INDEX orders_customer_created_idx ON orders (customer_id, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX orders_customer_status_created_idx ON orders (customer_id, status, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX orders_status_created_idx ON orders (status, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX orders_status_total_idx ON orders (status, total, id) WHERE deleted_at IS NULL;
CREATE INDEX orders_created_idx ON orders (created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX orders_total_idx ON orders (total, id) WHERE deleted_at IS NULL;

CREATE TABLE order_items (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  order_id bigint NOT NULL REFERENCES orders (id),
  product_id bigint NOT NULL REFERENCES products (id),
  qty integer NOT NULL CHECK (qty BETWEEN 1 AND 1000),
  unit_price bigint NOT NULL CHECK (unit_price >= 0),
  line_total bigint NOT NULL CHECK (line_total >= 0)
);
CREATE INDEX order_items_order_idx ON order_items (order_id, id);

-- Exact collection totals without COUNT(*) over broad filters: visible orders counted per
-- customer and status, and per status across all customers. The cross-customer counts are split
-- into 16 shards (by order id) so concurrent writers do not queue on one hot row; a read sums them.
-- Kept by statement-level triggers in the same transaction as the change, so they are never stale.
CREATE TABLE customer_order_counts (
  customer_id bigint NOT NULL,
  status text NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (customer_id, status)
);
CREATE TABLE order_status_counts (
  status text NOT NULL,
  shard smallint NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (status, shard)
);

CREATE TYPE order_count_delta AS (customer_id bigint, status text, shard smallint, d integer);

-- Upserts in key order, so concurrent transactions lock counter rows in the same order.
CREATE FUNCTION bump_order_counts(deltas order_count_delta[]) RETURNS void LANGUAGE sql AS $$
  INSERT INTO customer_order_counts AS c (customer_id, status, n)
    SELECT customer_id, status, sum(d) FROM unnest(deltas) GROUP BY customer_id, status
    HAVING sum(d) <> 0 ORDER BY customer_id, status
  ON CONFLICT (customer_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
  INSERT INTO order_status_counts AS c (status, shard, n)
    SELECT status, shard, sum(d) FROM unnest(deltas) GROUP BY status, shard
    HAVING sum(d) <> 0 ORDER BY status, shard
  ON CONFLICT (status, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
$$;

CREATE FUNCTION count_orders() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  deltas order_count_delta[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(ROW(customer_id, status, id % 16, 1)::order_count_delta) INTO deltas
      FROM new_rows WHERE deleted_at IS NULL;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT array_agg(ROW(customer_id, status, id % 16, -1)::order_count_delta) INTO deltas
      FROM old_rows WHERE deleted_at IS NULL;
  ELSE
    SELECT array_agg(x) INTO deltas FROM (
      SELECT ROW(customer_id, status, id % 16, -1)::order_count_delta AS x FROM old_rows WHERE deleted_at IS NULL
      UNION ALL
      SELECT ROW(customer_id, status, id % 16, 1)::order_count_delta FROM new_rows WHERE deleted_at IS NULL
    ) changes;
  END IF;
  IF deltas IS NOT NULL THEN
    PERFORM bump_order_counts(deltas);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER orders_count_insert AFTER INSERT ON orders
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_orders();
CREATE TRIGGER orders_count_update AFTER UPDATE ON orders
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_orders();
CREATE TRIGGER orders_count_delete AFTER DELETE ON orders
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_orders();

-- Signing keys of the authorization server (private JWK kept here; the JWKS publishes the
-- public half of every key not yet expired).
CREATE TABLE signing_keys (
  kid text PRIMARY KEY,
  alg text NOT NULL,
  private_jwk jsonb NOT NULL,
  public_jwk jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Set when a newer key takes over signing; the key stays published until expires_at.
  retired_at timestamptz,
  expires_at timestamptz
);
