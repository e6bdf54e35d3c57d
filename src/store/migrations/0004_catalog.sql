-- The platform catalog: projects, provider accounts, pools, offers, quotas and budgets; and the
-- pool of each usage row, so that budgets can price it. Times are microseconds since the Unix
-- epoch; JSON documents are TEXT.

CREATE TABLE projects (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants (id),
    name         TEXT NOT NULL,
    description  TEXT NOT NULL,
    state        TEXT NOT NULL,
    version      BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    deleted_at   BIGINT
);
-- A deleted project's name is free again.
CREATE UNIQUE INDEX projects_name ON projects (tenant_id, name) WHERE deleted_at IS NULL;
CREATE INDEX projects_by_age ON projects (created_at, id);

-- `tenant_id` NULL: an account of the platform. `credentials` is AES-256-GCM ciphertext
-- (base64 of nonce, ciphertext and tag), sealed to the account id.
CREATE TABLE provider_accounts (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT REFERENCES tenants (id),
    provider     TEXT NOT NULL,
    name         TEXT NOT NULL,
    description  TEXT NOT NULL,
    endpoint     TEXT NOT NULL,
    -- A JSON array: the zones (GKE) or the regions (DigitalOcean).
    locations    TEXT NOT NULL,
    credentials  TEXT NOT NULL,
    state        TEXT NOT NULL,
    version      BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    deleted_at   BIGINT
);
CREATE INDEX provider_accounts_by_tenant ON provider_accounts (tenant_id);

CREATE TABLE pools (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES provider_accounts (id),
    name         TEXT NOT NULL,
    description  TEXT NOT NULL,
    billing_mode TEXT NOT NULL,
    -- JSON objects: the policy document, and meter -> price of one unit.
    policy       TEXT NOT NULL,
    prices       TEXT NOT NULL,
    state        TEXT NOT NULL,
    version      BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    deleted_at   BIGINT
);
CREATE INDEX pools_by_account ON pools (account_id);

CREATE TABLE offers (
    pool_id          TEXT NOT NULL REFERENCES pools (id),
    tenant_id        TEXT NOT NULL REFERENCES tenants (id),
    state            TEXT NOT NULL,
    -- A JSON array of regions.
    excluded_regions TEXT NOT NULL,
    version          BIGINT NOT NULL,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    PRIMARY KEY (pool_id, tenant_id)
);
CREATE INDEX offers_by_tenant ON offers (tenant_id);

-- Booking is `UPDATE ... SET used = used + n WHERE used + n <= quota_limit`: atomic on one row.
CREATE TABLE quotas (
    pool_id       TEXT NOT NULL REFERENCES pools (id),
    tenant_id     TEXT NOT NULL REFERENCES tenants (id),
    resource_kind TEXT NOT NULL,
    quota_limit   BIGINT NOT NULL,
    used          BIGINT NOT NULL,
    version       BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    PRIMARY KEY (pool_id, tenant_id, resource_kind)
);
CREATE INDEX quotas_by_tenant ON quotas (tenant_id);

CREATE TABLE budgets (
    id            TEXT PRIMARY KEY,
    tenant_id     TEXT NOT NULL REFERENCES tenants (id),
    name          TEXT NOT NULL,
    monthly_limit BIGINT NOT NULL,
    version       BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE INDEX budgets_by_tenant ON budgets (tenant_id);

-- Budgets price usage by the pool it was used on.
ALTER TABLE usage_billables ADD COLUMN pool_id TEXT;
ALTER TABLE usage_ledger ADD COLUMN pool_id TEXT;
