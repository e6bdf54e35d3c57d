-- Nodes: machines that joined a pool with a join token and run `bcd`. Only the SHA-256 of a
-- node's credential is kept. A machine id has at most one node in a pool that is not deleted.
CREATE TABLE nodes (
    id                    TEXT PRIMARY KEY,
    pool_id               TEXT NOT NULL REFERENCES pools (id),
    -- The tenant whose account the pool is on; NULL for a platform pool.
    tenant_id             TEXT,
    machine_id            TEXT NOT NULL,
    hostname              TEXT NOT NULL,
    architecture          TEXT NOT NULL,
    os                    TEXT NOT NULL,
    kernel                TEXT NOT NULL,
    bcd_version           TEXT NOT NULL,
    -- JSON: capacity and allocatable ({cpuMillis, memoryBytes, ephemeralStorageBytes, gpus}),
    -- conditions ([{type, status, message}]), labels ({k: v}), taints ([[key, value, effect]]).
    capacity              TEXT NOT NULL,
    allocatable           TEXT NOT NULL,
    conditions            TEXT NOT NULL,
    labels                TEXT NOT NULL,
    taints                TEXT NOT NULL,
    state                 TEXT NOT NULL,
    cordoned              BIGINT NOT NULL,
    join_token_id         TEXT NOT NULL,
    credential_sha256     TEXT NOT NULL,
    address               TEXT NOT NULL,
    heartbeat_interval_ms BIGINT NOT NULL,
    version               BIGINT NOT NULL,
    joined_at             BIGINT NOT NULL,
    last_heartbeat_at     BIGINT NOT NULL,
    left_at               BIGINT,
    deleted_at            BIGINT,
    updated_at            BIGINT NOT NULL
);
CREATE UNIQUE INDEX nodes_live_machine ON nodes (pool_id, machine_id) WHERE deleted_at IS NULL;
CREATE INDEX nodes_by_pool ON nodes (pool_id, joined_at);
CREATE INDEX nodes_ready_by_heartbeat ON nodes (state, last_heartbeat_at);
