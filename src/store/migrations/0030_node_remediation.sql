-- Remediation of nodes that stop heartbeating (a pool's `policy.remediation`): the last step
-- taken on a node (`marked`, `powerCycle`, `redeploy` or `recreate`; empty while it is healthy)
-- and when. A heartbeat clears both: the node is healthy again.
ALTER TABLE nodes ADD COLUMN remediation TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN remediated_at BIGINT;
-- Pools whose remediation stopped because more nodes are unhealthy than `maxUnhealthy` allows:
-- why (as the pool's view says it), and since when. The row goes when remediation resumes.
CREATE TABLE pool_remediation_pauses (
    pool_id TEXT PRIMARY KEY REFERENCES pools (id),
    reason  TEXT NOT NULL,
    since   BIGINT NOT NULL
);
