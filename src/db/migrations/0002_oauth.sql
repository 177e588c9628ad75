-- The authorization server's storage: oidc-provider's models (codes, tokens, sessions, grants,
-- interactions), registered clients, and secrets such as cookie signing keys.

-- One row per oidc-provider model instance. id (and uid, user_code) are stored as SHA-256
-- digests, never in the clear: a dump of this table holds nothing that can be redeemed.
CREATE TABLE oidc_payloads (
  model text NOT NULL,
  id text NOT NULL,
  payload jsonb NOT NULL,
  grant_id text,
  uid text,
  user_code text,
  expires_at timestamptz,
  consumed_at timestamptz,
  PRIMARY KEY (model, id)
);
CREATE INDEX oidc_payloads_grant_idx ON oidc_payloads (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oidc_payloads_uid_idx ON oidc_payloads (uid) WHERE uid IS NOT NULL;
CREATE INDEX oidc_payloads_user_code_idx ON oidc_payloads (user_code) WHERE user_code IS NOT NULL;
CREATE INDEX oidc_payloads_expires_idx ON oidc_payloads (expires_at) WHERE expires_at IS NOT NULL;

-- OAuth clients. metadata is the oidc-provider client metadata; a confidential client's
-- client_secret in it is an scrypt hash (see src/auth/passwords.ts), compared by the provider.
CREATE TABLE oauth_clients (
  client_id text PRIMARY KEY,
  client_name text NOT NULL,
  metadata jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Named secrets generated on first start (cookie signing keys).
CREATE TABLE app_secrets (
  name text PRIMARY KEY,
  value jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
