-- Block-storage volumes of the `vps` module: what the tenant asked for (size, attachment)
-- beside what the provider last reported. Times are microseconds since the Unix epoch.

CREATE TABLE volumes (
    id                  TEXT PRIMARY KEY,
    tenant_id           TEXT NOT NULL,
    project_id          TEXT,
    pool_id             TEXT NOT NULL,
    account_id          TEXT NOT NULL,
    owner_id            TEXT NOT NULL,
    name                TEXT NOT NULL,
    description         TEXT NOT NULL,
    region              TEXT NOT NULL,
    -- GiB as asked for; it only grows.
    size_gigabytes      BIGINT NOT NULL,
    -- `ext4`, `xfs` or empty (unformatted), fixed at creation.
    filesystem_type     TEXT NOT NULL,
    -- The instance the tenant asked it be attached to, if any.
    instance_id         TEXT REFERENCES instances (id),
    -- The droplet id the provider last reported it attached to, if any.
    attached_machine_id TEXT,
    -- The provider's volume id, once it has one.
    provider_id         TEXT NOT NULL,
    state               TEXT NOT NULL,
    message             TEXT NOT NULL,
    version             BIGINT NOT NULL,
    idempotency_key     TEXT NOT NULL,
    request_digest      TEXT NOT NULL,
    delete_requested_at BIGINT,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL,
    deleted_at          BIGINT
);
CREATE UNIQUE INDEX volumes_live_name ON volumes (tenant_id, name) WHERE deleted_at IS NULL;
CREATE INDEX volumes_by_tenant ON volumes (tenant_id, created_at);
CREATE INDEX volumes_by_instance ON volumes (instance_id);
