-- A refusal of a tenant principal's call naming another tenant is filed under the caller's own
-- tenant (a caller cannot write rows into a tenant's trail); the tenant it named is kept here.
ALTER TABLE audit_events ADD COLUMN requested_tenant_id TEXT NOT NULL DEFAULT '';
