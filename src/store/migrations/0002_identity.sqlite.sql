-- Role bindings, the authorization row of every resource, and the audit trail.

ALTER TABLE principals ADD COLUMN deleted_at BIGINT;

-- A principal holds `role` at a scope: the platform, a tenant, a project or one resource.
CREATE TABLE role_bindings (
    id            TEXT PRIMARY KEY,
    principal_id  TEXT NOT NULL REFERENCES principals (id),
    role          TEXT NOT NULL,
    scope_type    TEXT NOT NULL,
    scope_id      TEXT NOT NULL,
    tenant_id     TEXT,
    created_at    BIGINT NOT NULL,
    UNIQUE (principal_id, role, scope_type, scope_id)
);
CREATE INDEX role_bindings_by_tenant ON role_bindings (tenant_id, created_at);

-- What authorization knows of each resource, written and removed with the resource.
CREATE TABLE authz_resources (
    resource_type TEXT NOT NULL,
    resource_id   TEXT NOT NULL,
    tenant_id     TEXT,
    project_id    TEXT,
    owner_id      TEXT,
    -- The attributes the reference page lists for the type, as a JSON object.
    attributes    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (resource_type, resource_id)
);

-- Every decision on a mutation.
CREATE TABLE audit_events (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    time          BIGINT NOT NULL,
    principal_id  TEXT NOT NULL,
    method        TEXT NOT NULL,
    permission    TEXT NOT NULL,
    resource_type TEXT NOT NULL,
    resource_id   TEXT NOT NULL,
    tenant_id     TEXT NOT NULL,
    decision      TEXT NOT NULL,
    policies      TEXT NOT NULL,
    request_id    TEXT NOT NULL
);
CREATE INDEX audit_events_by_tenant ON audit_events (tenant_id, seq);
CREATE INDEX audit_events_by_principal ON audit_events (principal_id, seq);
