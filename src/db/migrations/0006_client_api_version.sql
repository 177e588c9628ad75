-- The API version each registered client is pinned to: what its unversioned requests get when
-- Accept names no version, so a new version never changes what an existing integration receives.
-- The authorization server puts it in the client's access tokens as `api_version`.
-- Clients registered before this migration were built against v1, hence the default; every new
-- registration names its version (the latest unless told otherwise, src/auth/clients.rules.ts).
ALTER TABLE oauth_clients
  ADD COLUMN api_version integer NOT NULL DEFAULT 1 CHECK (api_version > 0);
