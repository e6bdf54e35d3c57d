-- Provider objects a forced delete may have left behind: one row each, kept after the resource
-- is deleted, retried by the orphan sweeper until the provider confirms it gone (`removed`), or
-- an operator dismisses it. Times are microseconds since the Unix epoch.

CREATE TABLE orphans (
    id            TEXT PRIMARY KEY,
    tenant_id     TEXT NOT NULL,
    -- The resource whose forced delete left it, and its kind (`kubernetes.clusters`).
    resource_id   TEXT NOT NULL,
    resource_kind TEXT NOT NULL,
    -- `gke`, `gce` or `digitalocean`, the provider account, and where the object lives (the
    -- cluster's location, the volume's region; empty where the provider has no such place).
    provider      TEXT NOT NULL,
    account_id    TEXT NOT NULL,
    location      TEXT NOT NULL,
    -- The provider's kind of object (`cluster`, `load balancer`), its name, and its provider id
    -- where the resource had recorded one.
    kind          TEXT NOT NULL,
    name          TEXT NOT NULL,
    provider_id   TEXT NOT NULL,
    -- Why it may remain (the forced delete, who asked).
    reason        TEXT NOT NULL,
    -- `pending`, `removed`, `stillThere` or `dismissed`.
    status        TEXT NOT NULL,
    last_error    TEXT NOT NULL,
    attempts      BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE INDEX orphans_by_tenant ON orphans (tenant_id, created_at);
CREATE INDEX orphans_by_status ON orphans (status, created_at);
