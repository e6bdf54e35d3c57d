-- The kubeconfigs issued on each cluster, one row per (cluster, Kubernetes service account
-- `bc-u-<hash>-<role>`). A row revoked (its principal deleted, or no longer allowed the role)
-- or expired is what the cluster reconciler removes from the cluster, then forgets.
CREATE TABLE cluster_access_grants (
    cluster_id   TEXT NOT NULL,
    account      TEXT NOT NULL,
    principal_id TEXT NOT NULL,
    tenant_id    TEXT NOT NULL,
    role         TEXT NOT NULL,
    issued_at    BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    revoked_at   BIGINT,
    PRIMARY KEY (cluster_id, account)
);
CREATE INDEX cluster_access_grants_by_principal ON cluster_access_grants (principal_id);

-- A role binding at a resource scope checks that the resource exists in the tenant, by id alone.
CREATE INDEX authz_resources_by_id ON authz_resources (resource_id);
