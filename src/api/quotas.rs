//! `bettercompute.platform.v1.Quotas`: Quotas of tenants on pools.

use super::handlers::thin_service;
use super::timestamp;
use crate::proto::platform::{
    CreateQuotaRequest, DeleteQuotaRequest, GetQuotaRequest, ListQuotasRequest, ListQuotasResponse, Quota,
    UpdateQuotaRequest, quotas_server,
};
use crate::store::QuotaRow;

fn quota_view(row: QuotaRow) -> Quota {
    Quota {
        pool_id: row.pool_id,
        tenant_id: row.tenant_id,
        resource_kind: row.resource_kind,
        limit: row.limit,
        used: row.used,
        version: row.version,
        created_at: Some(timestamp(row.created_at)),
        updated_at: Some(timestamp(row.updated_at)),
    }
}

thin_service! {
    impl quotas_server::Quotas: Quota by quota_view;
    create(CreateQuotaRequest) quota_create, get(GetQuotaRequest) quota_get,
    update(UpdateQuotaRequest) quota_update, delete(DeleteQuotaRequest) quota_delete;
    list(ListQuotasRequest) quota_list -> ListQuotasResponse { quotas };
}
