-- A tenant's list reads the pools and subnets of all its clusters and networks in one query each,
-- by tenant: without these it scanned every tenant's rows.
CREATE INDEX kubernetes_node_pools_by_tenant ON kubernetes_node_pools (tenant_id, created_at);
CREATE INDEX subnets_by_tenant ON subnets (tenant_id, created_at);
