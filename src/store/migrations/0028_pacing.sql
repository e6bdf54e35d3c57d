-- Pacing of provider calls per account, shared by every worker process.
--
-- One token bucket per account and window (`window_seconds`): `capacity` calls per window,
-- `tokens` left as of `refilled_at` (µs); a take refills by the time passed and spends one.
CREATE TABLE provider_budgets (
    account_id     TEXT NOT NULL,
    window_seconds BIGINT NOT NULL,
    capacity       BIGINT NOT NULL,
    tokens         DOUBLE PRECISION NOT NULL,
    refilled_at    BIGINT NOT NULL,
    PRIMARY KEY (account_id, window_seconds)
);

-- The account's own limits: a JSON array of {"requests": n, "perSeconds": s}; empty for the
-- provider's published ones. `paced_until`: no call before this (a provider's Retry-After).
ALTER TABLE provider_accounts ADD COLUMN rate_limits TEXT NOT NULL DEFAULT '';
ALTER TABLE provider_accounts ADD COLUMN paced_until BIGINT;
-- The breaker: `closed`, or `open` since `breaker_since` with the provider's words, its next
-- probe call allowed at `breaker_probe_at`.
ALTER TABLE provider_accounts ADD COLUMN breaker_state TEXT NOT NULL DEFAULT 'closed';
ALTER TABLE provider_accounts ADD COLUMN breaker_since BIGINT;
ALTER TABLE provider_accounts ADD COLUMN breaker_message TEXT NOT NULL DEFAULT '';
ALTER TABLE provider_accounts ADD COLUMN breaker_probe_at BIGINT;
