-- Webhook endpoints say why they are disabled and when a delivery to them last succeeded
-- (docs/webhooks.md, "Endpoint health"; docs/decisions/0117 and 0119).

-- Why a disabled endpoint is disabled: 'requested' (a POST or PUT said "disabled": true),
-- 'api_version_retired' (its apiVersion reached its sunset), 'failing' (every attempt failed for
-- 5 days). NULL on a disabled endpoint reads as 'failing' (src/webhooks/endpoints.rules.ts,
-- shownDisabledReason): the disable events recorded before this column. An enabled endpoint has none.
ALTER TABLE webhook_endpoints
  ADD COLUMN disabled_reason text,
  -- A recent success: written by the dispatcher at most about once a second per endpoint, never
  -- as a new revision (version and updated_at stay as they are).
  ADD COLUMN last_succeeded_at timestamptz(3),
  ADD CONSTRAINT webhook_endpoints_disabled_reason_check
    CHECK (disabled_reason IS NULL OR (disabled AND disabled_reason IN ('requested', 'api_version_retired', 'failing')));

-- Endpoints disabled before this migration: by a request, unless they had been failing for the 5
-- days after which the dispatcher disables them (it disables at once, so then updated_at is when).
UPDATE webhook_endpoints SET disabled_reason = 'requested'
 WHERE disabled AND NOT (failing_since IS NOT NULL AND failing_since <= updated_at - interval '5 days');

-- The last success still on record: a delivery is kept as long as its event.
UPDATE webhook_endpoints w SET last_succeeded_at = s.at
  FROM (SELECT endpoint_id, max(updated_at) AS at FROM webhook_deliveries WHERE state = 'succeeded' GROUP BY endpoint_id) s
 WHERE w.id = s.endpoint_id;
