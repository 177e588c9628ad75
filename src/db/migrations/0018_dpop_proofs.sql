-- The jti of every DPoP proof the API accepted (RFC 9449 §11.1), so that no process accepts one
-- twice, scoped by the key that signed it (jkt): kept until no process could accept the proof any
-- more (src/http/dpop-replay.ts), then purged by a job. Used only without REDIS_URL.
-- UNLOGGED, like the rate-limit counters: no WAL on every request. A crash (or a failover) forgets
-- the last few minutes' proofs; docs/decisions/0134-dpop-at-the-resource-server.md says why that is accepted.
CREATE UNLOGGED TABLE dpop_proofs (
  jkt text NOT NULL,
  jti text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (jkt, jti)
);
CREATE INDEX dpop_proofs_expires_at_idx ON dpop_proofs (expires_at);
