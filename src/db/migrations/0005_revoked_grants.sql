-- Grants the authorization server has revoked (refresh token revoked, a code or a rotated refresh
-- token reused, sign-out), kept until every access token issued under them has expired. Resource
-- servers refuse JWT access tokens whose `gid` claim names one (src/http/grant-revocations.ts).
-- grant_digest is the SHA-256 (base64url) of the grant id, never the id itself.
CREATE TABLE revoked_grants (
  grant_digest text PRIMARY KEY,
  revoked_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
-- Resource servers read what was revoked since they last looked.
CREATE INDEX revoked_grants_revoked_at_idx ON revoked_grants (revoked_at);
