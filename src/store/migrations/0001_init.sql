-- Tenants, principals and their API keys. Times are microseconds since the Unix epoch.
CREATE TABLE tenants (
    id           TEXT PRIMARY KEY,
    display_name TEXT NOT NULL,
    description  TEXT NOT NULL,
    state        TEXT NOT NULL,
    version      BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    deleted_at   BIGINT
);
CREATE INDEX tenants_by_age ON tenants (created_at, id);

CREATE TABLE principals (
    id         TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,
    tenant_id  TEXT REFERENCES tenants (id),
    name       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    principal_id  TEXT NOT NULL REFERENCES principals (id),
    secret_sha256 TEXT NOT NULL,
    description   TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT,
    revoked_at    BIGINT
);
CREATE INDEX api_keys_by_principal ON api_keys (principal_id);
