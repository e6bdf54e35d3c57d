-- Load balancers (issue 8): what the tenant asked for (desired) beside what the provider last
-- reported (observed). Times are microseconds since the Unix epoch; booleans are 0/1 integers so
-- that both backends decode them alike through sqlx's Any driver. Instances, subnets and
-- certificates are the vps module's tables (migration 6); targets are resolved from them by the
-- reconciler on every pass, never stored as provider tags.

CREATE TABLE load_balancers (
    id                  TEXT PRIMARY KEY,
    tenant_id           TEXT NOT NULL,
    project_id          TEXT,
    pool_id             TEXT NOT NULL,
    account_id          TEXT NOT NULL,
    -- The pool's billing mode at creation: `none` bills nothing.
    billing_mode        TEXT NOT NULL,
    owner_id            TEXT NOT NULL,
    name                TEXT NOT NULL,
    description         TEXT NOT NULL,
    -- `regional` or `global`.
    scope               TEXT NOT NULL,
    -- Empty for a global load balancer.
    region              TEXT NOT NULL,
    -- The tenant subnet a regional load balancer lives on; NULL: the account's default network.
    subnet_id           TEXT,
    -- 1 when it targets every instance of the tenant in its pool and region.
    target_pool         BIGINT NOT NULL,
    -- JSON: forwarding, healthCheck, stickySessions, sourceRanges, redirectHttpToHttps, domains.
    settings            TEXT NOT NULL,
    -- A digest of the create request, to tell a retry from a reuse of its idempotency key.
    request_digest      TEXT NOT NULL,
    state               TEXT NOT NULL,
    message             TEXT NOT NULL,
    -- The provider's id once it accepted the load balancer.
    provider_id         TEXT NOT NULL,
    address             TEXT NOT NULL,
    address_v6          TEXT NOT NULL,
    -- JSON array: the instance (or, for a global one, load balancer) ids last sent to the provider.
    reached_ids         TEXT NOT NULL,
    -- 1 once it was ready: `ready` is published once, and billing starts there.
    ready_once          BIGINT NOT NULL,
    -- When the tenant asked for deletion.
    delete_requested_at BIGINT,
    version             BIGINT NOT NULL,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL,
    deleted_at          BIGINT
);
CREATE INDEX load_balancers_by_tenant ON load_balancers (tenant_id, created_at);
CREATE INDEX load_balancers_by_placement ON load_balancers (tenant_id, pool_id, region);

-- The named targets of a load balancer: instances (regional) or regional load balancers
-- (global), so that an instance's deletion finds the load balancers that name it and a regional
-- load balancer's deletion finds the global ones that target it.
CREATE TABLE load_balancer_members (
    load_balancer_id TEXT NOT NULL REFERENCES load_balancers (id),
    -- `instance` or `load-balancer`.
    member_kind      TEXT NOT NULL,
    member_id        TEXT NOT NULL,
    position         BIGINT NOT NULL,
    PRIMARY KEY (load_balancer_id, member_id)
);
CREATE INDEX load_balancer_members_by_member ON load_balancer_members (member_id);
