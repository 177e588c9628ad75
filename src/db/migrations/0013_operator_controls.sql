-- What operators change by command (docs/decisions/0112-disabling-and-erasing.md,
-- 0113-client-secret-rotation.md): users and clients disabled, a user's personal data erased,
-- a client's secret rotated with a grace period.

-- A disabled user cannot sign in and nothing issued to them is honoured; an erased user's email,
-- name and password hash were replaced by placeholders (and the user disabled, for good).
ALTER TABLE users
  ADD COLUMN disabled_at timestamptz(3),
  ADD COLUMN erased_at timestamptz(3),
  ADD CONSTRAINT users_erased_disabled_check CHECK (erased_at IS NULL OR disabled_at IS NOT NULL);

ALTER TABLE oauth_clients
  ADD COLUMN disabled_at timestamptz(3),
  -- After a rotation, the scrypt hash of the secret before it: it still authenticates the client
  -- until previous_secret_expires_at. A second rotation replaces it.
  ADD COLUMN previous_secret_hash text,
  ADD COLUMN previous_secret_expires_at timestamptz(3),
  ADD CONSTRAINT oauth_clients_previous_secret_check
    CHECK ((previous_secret_hash IS NULL) = (previous_secret_expires_at IS NULL));

-- Users and clients whose access tokens resource servers refuse, by subject ('user:<id>',
-- 'client:<client_id>'): every token while restored_at is NULL (disabled, or deleted until
-- expires_at), and once enabled again (restored_at) those issued in a second before revoked_at.
-- A disabled subject's row never expires; a deleted or restored one's is kept until every token
-- issued before it has expired, then purged. Resource servers read the rows changed since they
-- last looked (src/http/subject-revocations.ts).
CREATE TABLE revoked_subjects (
  subject text PRIMARY KEY,
  revoked_at timestamptz(3) NOT NULL,
  restored_at timestamptz(3),
  expires_at timestamptz(3),
  changed_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX revoked_subjects_changed_at_idx ON revoked_subjects (changed_at);
CREATE INDEX revoked_subjects_expires_idx ON revoked_subjects (expires_at) WHERE expires_at IS NOT NULL;
