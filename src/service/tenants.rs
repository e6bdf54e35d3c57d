//! Tenants: the operator's catalog of the organisations that use the platform.

use super::update_mask::Named;
use super::{Context, Service};
use crate::error::Result;
use crate::proto::platform::{
    CreateTenantRequest, DeleteTenantRequest, GetTenantRequest, ListTenantsRequest, UpdateTenantRequest,
};
use crate::store::{NewTenant, TenantChange, TenantRow, now_micros};

impl Service {
    /// Records a new tenant. The display name defaults to the id.
    pub async fn tenant_create(&self, ctx: &Context, request: CreateTenantRequest) -> Result<TenantRow> {
        let display_name = if request.display_name.is_empty() { request.id.clone() } else { request.display_name };
        let tenant = self
            .store
            .tenant_create(&NewTenant {
                id: request.id,
                display_name,
                description: request.description,
                now: now_micros(),
            })
            .await?;
        tracing::info!(tenant = %tenant.id, by = %ctx.caller.principal_id, "tenant created");
        Ok(tenant)
    }

    /// One tenant, deleted or not.
    pub async fn tenant_get(&self, _ctx: &Context, request: GetTenantRequest) -> Result<TenantRow> {
        self.store.tenant_fetch(&request.tenant_id).await
    }

    /// The tenants, oldest first.
    pub async fn tenant_list(&self, _ctx: &Context, request: ListTenantsRequest) -> Result<Vec<TenantRow>> {
        self.store.tenant_list(request.include_deleted).await
    }

    /// Changes the display name or the description; at least one must be named.
    pub async fn tenant_update(&self, ctx: &Context, request: UpdateTenantRequest) -> Result<TenantRow> {
        let named = Named::of(&request.update_mask);
        named.require_some(&["displayName", "description"])?;
        let change = TenantChange {
            display_name: named.clearable("display_name", request.display_name),
            description: named.clearable("description", request.description),
        };
        let tenant = self.store.tenant_update(&request.tenant_id, &change, now_micros()).await?;
        tracing::info!(tenant = %tenant.id, version = tenant.version, by = %ctx.caller.principal_id, "tenant updated");
        Ok(tenant)
    }

    /// Marks a tenant deleted; deleting it again returns it unchanged. Its principals' keys stop
    /// working on their next call, and their open watches end at once, on every server process.
    pub async fn tenant_delete(&self, ctx: &Context, request: DeleteTenantRequest) -> Result<TenantRow> {
        let tenant = self.store.tenant_delete(&request.tenant_id, now_micros()).await?;
        self.store.access_revoked().await;
        tracing::info!(tenant = %tenant.id, by = %ctx.caller.principal_id, "tenant deleted");
        Ok(tenant)
    }
}
