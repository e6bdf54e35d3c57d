-- A list's items are decided with their authorization rows, read per tenant and type.
CREATE INDEX authz_resources_by_tenant ON authz_resources (resource_type, tenant_id);
