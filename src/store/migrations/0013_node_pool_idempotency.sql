-- Node pool create takes an idempotency key like every other create: the pool's id derives from
-- it, and the digest of the request that made the pool tells a retry from a reused key. Pools
-- made before, or with their cluster, have neither (empty).
ALTER TABLE kubernetes_node_pools ADD COLUMN idempotency_key TEXT NOT NULL DEFAULT '';
ALTER TABLE kubernetes_node_pools ADD COLUMN request_digest TEXT NOT NULL DEFAULT '';
