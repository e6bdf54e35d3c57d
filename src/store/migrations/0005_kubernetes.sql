-- Managed Kubernetes clusters and their node pools: what the tenant asked for (desired) beside
-- what the provider last reported (observed). Times are microseconds since the Unix epoch;
-- booleans are 0/1 integers so that both backends decode them alike through sqlx's Any driver.

CREATE TABLE kubernetes_clusters (
    id                  TEXT PRIMARY KEY,
    tenant_id           TEXT NOT NULL,
    project_id          TEXT,
    pool_id             TEXT NOT NULL,
    account_id          TEXT NOT NULL,
    -- The GCP project the cluster lives in (the account's), fixed at creation.
    provider_project    TEXT NOT NULL,
    billing_mode        TEXT NOT NULL,
    owner_id            TEXT NOT NULL,
    name                TEXT NOT NULL,
    description         TEXT NOT NULL,
    mode                TEXT NOT NULL,
    location            TEXT NOT NULL,
    release_channel     TEXT NOT NULL,
    requested_version   TEXT NOT NULL,
    network_id          TEXT,
    -- JSON array of IPv4 CIDRs.
    authorized_networks TEXT NOT NULL,
    private_nodes       BIGINT NOT NULL,
    -- A digest of the create request, to tell a retry from a reuse of its idempotency key.
    request_digest      TEXT NOT NULL,
    state               TEXT NOT NULL,
    message             TEXT NOT NULL,
    endpoint            TEXT NOT NULL,
    -- The control plane's CA certificate (public), for kubeconfigs.
    ca_certificate      TEXT NOT NULL,
    kubernetes_version  TEXT NOT NULL,
    node_version        TEXT NOT NULL,
    -- 1 once the cluster was ready: `ready` is published once, credentials work while updating.
    ready_once          BIGINT NOT NULL,
    -- When the provider first accepted the cluster (billing starts there).
    accepted_at         BIGINT,
    -- When the tenant asked for deletion.
    delete_requested_at BIGINT,
    version             BIGINT NOT NULL,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL,
    deleted_at          BIGINT
);
-- A name is unique among the tenant's clusters that are not deleted.
CREATE UNIQUE INDEX kubernetes_clusters_live_name ON kubernetes_clusters (tenant_id, name) WHERE deleted_at IS NULL;
CREATE INDEX kubernetes_clusters_by_tenant ON kubernetes_clusters (tenant_id, created_at);

CREATE TABLE kubernetes_node_pools (
    id                 TEXT PRIMARY KEY,
    cluster_id         TEXT NOT NULL REFERENCES kubernetes_clusters (id),
    tenant_id          TEXT NOT NULL,
    name               TEXT NOT NULL,
    -- JSON: machineType, nodeCount, autoscaling, diskGiB, diskType, spot, accelerators, zones,
    -- labels, taints.
    spec               TEXT NOT NULL,
    state              TEXT NOT NULL,
    message            TEXT NOT NULL,
    -- The live node count the provider last reported (the autoscaler's, when it scales).
    current_node_count BIGINT NOT NULL,
    version            BIGINT NOT NULL,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL,
    deleted_at         BIGINT
);
CREATE UNIQUE INDEX kubernetes_node_pools_live_name ON kubernetes_node_pools (cluster_id, name) WHERE deleted_at IS NULL;
CREATE INDEX kubernetes_node_pools_by_cluster ON kubernetes_node_pools (cluster_id, created_at);
