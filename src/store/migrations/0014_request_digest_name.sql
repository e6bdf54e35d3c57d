-- One name for the create request's digest: networks, instances and certificates called it
-- `request_hash`, clusters and load balancers `request_digest`.
ALTER TABLE networks RENAME COLUMN request_hash TO request_digest;
ALTER TABLE instances RENAME COLUMN request_hash TO request_digest;
ALTER TABLE certificates RENAME COLUMN request_hash TO request_digest;
