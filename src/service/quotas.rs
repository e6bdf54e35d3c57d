//! Quotas: how many resources of a kind a tenant may have on a pool.

use super::{Context, Service};
use crate::error::{Error, Result};
use crate::proto::platform::{
    CreateQuotaRequest, DeleteQuotaRequest, GetQuotaRequest, ListQuotasRequest, UpdateQuotaRequest,
};
use crate::store::{NewQuota, QuotaRow, now_micros};

impl Service {
    /// Grants a quota on a live pool.
    pub async fn quota_create(&self, ctx: &Context, request: CreateQuotaRequest) -> Result<QuotaRow> {
        let pool = self.store.pool_fetch(&request.pool_id).await?;
        if pool.deleted_at.is_some() {
            return Err(Error::invalid_state(format!("pool {:?} is deleted", pool.id)).with_detail("poolId", pool.id));
        }
        let quota = self
            .store
            .quota_create(&NewQuota {
                pool_id: request.pool_id,
                tenant_id: request.tenant_id,
                resource_kind: request.resource_kind,
                limit: request.limit,
                now: now_micros(),
            })
            .await?;
        tracing::info!(pool = %quota.pool_id, tenant = %quota.tenant_id, kind = %quota.resource_kind,
            limit = quota.limit, by = %ctx.caller.principal_id, "quota created");
        Ok(quota)
    }

    /// One quota.
    pub async fn quota_get(&self, _ctx: &Context, request: GetQuotaRequest) -> Result<QuotaRow> {
        self.store.quota_fetch(&request.pool_id, &request.tenant_id, &request.resource_kind).await
    }

    /// Quotas, oldest first.
    pub async fn quota_list(&self, _ctx: &Context, request: ListQuotasRequest) -> Result<Vec<QuotaRow>> {
        self.store.quota_list(&request.pool_id, &request.tenant_id).await
    }

    /// Sets a quota's limit.
    pub async fn quota_update(&self, ctx: &Context, request: UpdateQuotaRequest) -> Result<QuotaRow> {
        let quota = self
            .store
            .quota_update(&request.pool_id, &request.tenant_id, &request.resource_kind, request.limit, now_micros())
            .await?;
        tracing::info!(pool = %quota.pool_id, tenant = %quota.tenant_id, kind = %quota.resource_kind,
            limit = quota.limit, by = %ctx.caller.principal_id, "quota updated");
        Ok(quota)
    }

    /// Removes a quota without bookings.
    pub async fn quota_delete(&self, ctx: &Context, request: DeleteQuotaRequest) -> Result<QuotaRow> {
        let quota =
            self.store.quota_delete(&request.pool_id, &request.tenant_id, &request.resource_kind, now_micros()).await?;
        tracing::info!(pool = %quota.pool_id, tenant = %quota.tenant_id, kind = %quota.resource_kind,
            by = %ctx.caller.principal_id, "quota deleted");
        Ok(quota)
    }
}
