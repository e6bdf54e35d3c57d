-- Kubernetes pool substrates: the managed cluster behind a pool whose policy has a substrate,
-- at most one per pool. The pool's create or update writes the desired spec (the policy's
-- substrate, as checked) in its own transaction; the `kubernetes-substrate` reconciler writes
-- what it observed and made.
CREATE TABLE kubernetes_substrates (
    pool_id               TEXT PRIMARY KEY REFERENCES pools (id),
    -- The tenant whose account the pool is on; NULL for a platform pool.
    tenant_id             TEXT,
    -- The GKE account the cluster is on.
    account_id            TEXT NOT NULL,
    -- `create` or `adopt`.
    mode                  TEXT NOT NULL,
    -- JSON: the policy's substrate.
    spec                  TEXT NOT NULL,
    cluster_name          TEXT NOT NULL,
    location              TEXT NOT NULL,
    endpoint              TEXT NOT NULL,
    master_version        TEXT NOT NULL,
    node_version          TEXT NOT NULL,
    state                 TEXT NOT NULL,
    message               TEXT NOT NULL,
    -- JSON: per flavor, its node pool's provider name, state and node counts.
    flavors               TEXT NOT NULL,
    -- JSON: the objects applied to the cluster ([{kind, namespace, name}]).
    objects               TEXT NOT NULL,
    -- The hosted join token (never its secret); empty until made.
    join_token_id         TEXT NOT NULL,
    version               BIGINT NOT NULL,
    -- Set when the pool was archived (or its policy lost the substrate): tear it down.
    teardown_requested_at BIGINT,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    deleted_at            BIGINT
);
CREATE INDEX kubernetes_substrates_by_tenant ON kubernetes_substrates (tenant_id, created_at);
