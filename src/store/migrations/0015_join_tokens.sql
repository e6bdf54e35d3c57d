-- Join tokens: the credentials with which node daemons join a pool. Only the SHA-256 of the
-- secret is kept. A token's state is read from its times and counts (expired, exhausted,
-- revoked), so that no sweep is needed for it to stop being accepted.
CREATE TABLE join_tokens (
    id              TEXT PRIMARY KEY,
    pool_id         TEXT NOT NULL REFERENCES pools (id),
    -- The tenant whose account the pool is on; NULL for a platform pool.
    tenant_id       TEXT,
    description     TEXT NOT NULL,
    max_uses        BIGINT NOT NULL,
    uses            BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL,
    -- JSON: an object of labels, and an array of taints ({key, value, effect}).
    labels          TEXT NOT NULL,
    taints          TEXT NOT NULL,
    secret_sha256   TEXT NOT NULL,
    created_by      TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    request_digest  TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    revoked_at      BIGINT,
    last_used_at    BIGINT
);
CREATE INDEX join_tokens_by_pool ON join_tokens (pool_id, created_at);

-- Each join made with a token: the node, when, and the caller's address.
CREATE TABLE join_token_uses (
    token_id TEXT NOT NULL REFERENCES join_tokens (id),
    node_id  TEXT NOT NULL,
    used_at  BIGINT NOT NULL,
    address  TEXT NOT NULL,
    PRIMARY KEY (token_id, node_id, used_at)
);
