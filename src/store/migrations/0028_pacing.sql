-- Pacing of provider calls per account, shared by every worker process.
--
-- `budget`: the account's token buckets as a take left them, a JSON array of
-- {"requests", "perSeconds", "tokens", "refilledAt"} (µs); a take refills them by the time
-- passed and spends what it lets out, in the same row lock as it reads the breaker.
ALTER TABLE provider_accounts ADD COLUMN budget TEXT NOT NULL DEFAULT '';
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
