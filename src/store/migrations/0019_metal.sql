-- Bare metal: the metal view of an enrolled machine, keyed by its node (the node row is written
-- in the same transaction: a machine and its node are one record). The BMC password is sealed
-- to the node's id with the server's secret key; it is '' once wiped (retired).
CREATE TABLE metal_machines (
    node_id          TEXT PRIMARY KEY REFERENCES nodes (id),
    pool_id          TEXT NOT NULL REFERENCES pools (id),
    -- The tenant whose account the pool is on; NULL for a platform pool.
    tenant_id        TEXT,
    name             TEXT NOT NULL,
    driver           TEXT NOT NULL,
    address          TEXT NOT NULL,
    username         TEXT NOT NULL,
    password_sealed  TEXT NOT NULL,
    ca_certificate   TEXT NOT NULL,
    insecure         BIGINT NOT NULL,
    power_state      TEXT NOT NULL,
    provision_state  TEXT NOT NULL,
    previous_state   TEXT NOT NULL,
    -- The state `exitingRescue` returns to.
    rescued_from     TEXT NOT NULL,
    -- When the transient state times out (µs); NULL in a stable state.
    deadline         BIGINT,
    last_error       TEXT NOT NULL,
    -- JSON: what inspection found; NULL until it ran.
    inventory        TEXT,
    image            TEXT NOT NULL,
    created_by       TEXT NOT NULL,
    idempotency_key  TEXT NOT NULL,
    request_digest   TEXT NOT NULL,
    version          BIGINT NOT NULL,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    deleted_at       BIGINT
);
CREATE UNIQUE INDEX metal_machines_live_name ON metal_machines (pool_id, name) WHERE deleted_at IS NULL;
CREATE INDEX metal_machines_by_pool ON metal_machines (pool_id, created_at);
