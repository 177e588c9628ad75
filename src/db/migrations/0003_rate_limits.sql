-- Fixed-window rate limit counters shared by every orderpay process (login attempts, /oauth/*).
-- UNLOGGED: counters are worth losing in a crash, not worth WAL on every request.
CREATE UNLOGGED TABLE rate_limit_hits (
  key text NOT NULL,
  window_start timestamptz NOT NULL,
  hits integer NOT NULL,
  PRIMARY KEY (key, window_start)
);
CREATE INDEX rate_limit_hits_window_idx ON rate_limit_hits (window_start);
