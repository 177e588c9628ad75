-- Webhook endpoints say why they are disabled (docs/webhooks.md, "Versions"; docs/decisions/0117).

-- Why a disabled endpoint is disabled: 'requested' (a POST or PUT said "disabled": true),
-- 'api_version_retired' (its apiVersion reached its sunset), 'failing' (every attempt failed for
-- 5 days). NULL on a disabled endpoint is 'failing' too: the dispatcher's automatic disable sets
-- `disabled` alone (src/webhooks/endpoints.rules.ts, shownDisabledReason). An enabled endpoint has none.
ALTER TABLE webhook_endpoints
  ADD COLUMN disabled_reason text,
  ADD CONSTRAINT webhook_endpoints_disabled_reason_check
    CHECK (disabled_reason IS NULL OR (disabled AND disabled_reason IN ('requested', 'api_version_retired', 'failing')));

-- Endpoints disabled before this migration: by a request, unless they had been failing for the 5
-- days after which the dispatcher disables them (it disables at once, so then updated_at is when).
UPDATE webhook_endpoints SET disabled_reason = 'requested'
 WHERE disabled AND NOT (failing_since IS NOT NULL AND failing_since <= updated_at - interval '5 days');
