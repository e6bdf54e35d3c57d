-- The worker's tables: reconcile work items with leases, the event outbox, and the usage
-- ledger. Times are microseconds since the Unix epoch.

-- One row per object a reconciler kind looks after. A resource module writes it in the same
-- transaction as the resource; the worker claims due rows with a lease.
CREATE TABLE work_items (
    kind             TEXT NOT NULL,
    object_id        TEXT NOT NULL,
    -- When the next pass is due.
    due_at           BIGINT NOT NULL,
    -- Bumped by every write that wakes the object, so that a pass that ran during the write
    -- does not push the next pass out to its interval.
    generation       BIGINT NOT NULL,
    lease_owner      TEXT,
    lease_expires_at BIGINT,
    -- Passes in a row that failed, and the last failure's message.
    attempts         BIGINT NOT NULL,
    last_error       TEXT,
    -- The object's state, since when, and when it counts as stuck in it (NULL: never).
    state            TEXT NOT NULL,
    state_since      BIGINT NOT NULL,
    state_deadline   BIGINT,
    last_pass_at     BIGINT,
    last_pass_micros BIGINT,
    PRIMARY KEY (kind, object_id)
);
CREATE INDEX work_items_due ON work_items (kind, due_at);
CREATE INDEX work_items_owner ON work_items (lease_owner);

-- The outbox. `seq` is taken from `event_head` inside the writing transaction, whose row lock
-- orders commits as it orders numbers: a reader after a cursor never misses a late commit.
CREATE TABLE events (
    seq       BIGINT PRIMARY KEY,
    id        TEXT NOT NULL UNIQUE,
    source    TEXT NOT NULL,
    type      TEXT NOT NULL,
    subject   TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    time      BIGINT NOT NULL,
    data      TEXT NOT NULL
);
CREATE INDEX events_by_tenant ON events (tenant_id, seq);

CREATE TABLE event_head (
    id       INTEGER PRIMARY KEY,
    last_seq BIGINT NOT NULL
);
INSERT INTO event_head (id, last_seq) VALUES (1, 0);

-- How far each relay (NATS JetStream, ...) has published.
CREATE TABLE event_relays (
    name     TEXT PRIMARY KEY,
    last_seq BIGINT NOT NULL
);

-- What can be billed: written by resource modules with the resource.
CREATE TABLE usage_billables (
    meter         TEXT NOT NULL,
    resource_id   TEXT NOT NULL,
    tenant_id     TEXT NOT NULL,
    billing_start BIGINT NOT NULL,
    billing_end   BIGINT,
    -- Every hour that starts before this is in the ledger.
    billed_until  BIGINT NOT NULL,
    PRIMARY KEY (meter, resource_id)
);

-- The ledger: one row per meter, resource and hour (the hour's start), never two.
CREATE TABLE usage_ledger (
    meter       TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    tenant_id   TEXT NOT NULL,
    hour        BIGINT NOT NULL,
    quantity    BIGINT NOT NULL,
    recorded_at BIGINT NOT NULL,
    PRIMARY KEY (meter, resource_id, hour)
);
CREATE INDEX usage_ledger_by_tenant ON usage_ledger (tenant_id, hour);

-- Passes of the built-in `noop` kind (tests and benchmarks): who ran which object when.
CREATE TABLE work_noop_passes (
    object_id  TEXT NOT NULL,
    worker     TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    ended_at   BIGINT NOT NULL
);
CREATE INDEX work_noop_passes_by_object ON work_noop_passes (object_id);
