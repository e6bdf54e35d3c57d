//! `bettercompute.platform.v1.Tenants`: decode, call the service, turn the row into the view.

use super::handlers::thin_service;
use super::views::stamps;
use crate::proto::platform::{
    CreateTenantRequest, DeleteTenantRequest, GetTenantRequest, ListTenantsRequest, ListTenantsResponse, Tenant,
    UpdateTenantRequest, tenants_server,
};
use crate::store::TenantRow;

fn tenant_view(row: TenantRow) -> Tenant {
    Tenant {
        id: row.id,
        display_name: row.display_name,
        description: row.description,
        state: row.state,
        ..stamps(row.version, row.created_at, row.updated_at, row.deleted_at)
    }
}

thin_service! {
    impl tenants_server::Tenants: Tenant by tenant_view;
    create(CreateTenantRequest) tenant_create, get(GetTenantRequest) tenant_get,
    update(UpdateTenantRequest) tenant_update, delete(DeleteTenantRequest) tenant_delete;
    list(ListTenantsRequest) tenant_list -> ListTenantsResponse { tenants };
}
