-- Idempotent operations in atomic phases (src/idempotency/keyed-work.ts): what phase 1 of a key's
-- operation recorded (a payment, a refund), committed with it. A retry that takes the claim over
-- resumes from there instead of starting again; NULL until phase 1 commits.
ALTER TABLE idempotency_keys ADD COLUMN recovery_point bigint;
