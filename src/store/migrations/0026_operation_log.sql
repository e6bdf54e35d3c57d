-- The operation log: every provider or BMC call a pass made for a resource, newest kept, and the
-- problem of a resource whose passes keep failing (on its work item, cleared by a good pass).
CREATE TABLE operation_log (
    id                    TEXT PRIMARY KEY,
    resource_id           TEXT NOT NULL,
    work_kind             TEXT NOT NULL,
    -- When the call began and how long it took (µs).
    at_micros             BIGINT NOT NULL,
    duration_micros       BIGINT NOT NULL,
    -- `gke.nodePools.update`.
    call                  TEXT NOT NULL,
    -- The provider's operation or request id, where it gave one.
    provider_operation_id TEXT NOT NULL,
    -- `ok`, `error` or `cancelled`; the error's class and words.
    outcome               TEXT NOT NULL,
    error_class           TEXT NOT NULL,
    message               TEXT NOT NULL
);
CREATE INDEX operation_log_by_resource ON operation_log (resource_id, at_micros, id);
CREATE INDEX operation_log_by_time ON operation_log (at_micros);

-- The class of the failure of the last pass (empty when it did not fail) and since when the
-- passes fail (NULL when they do not).
ALTER TABLE work_items ADD COLUMN problem_class TEXT NOT NULL DEFAULT '';
ALTER TABLE work_items ADD COLUMN problem_since BIGINT;
