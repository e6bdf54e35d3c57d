//! `bettercompute.platform.v1.Tenants`: decode, call the service, turn the row into the view.

use tonic::{Request, Response, Status};

use super::{context, timestamp};
use crate::proto::platform::{
    CreateTenantRequest, DeleteTenantRequest, GetTenantRequest, ListTenantsRequest, ListTenantsResponse, Tenant,
    UpdateTenantRequest, tenants_server,
};
use crate::service::Service;
use crate::store::TenantRow;

/// The gRPC service of tenants.
#[derive(Debug)]
pub struct TenantsApi {
    service: Service,
}

impl TenantsApi {
    /// The service over `service`.
    pub fn server(service: Service) -> tenants_server::TenantsServer<Self> {
        tenants_server::TenantsServer::new(Self { service })
    }
}

fn view(row: TenantRow) -> Tenant {
    Tenant {
        id: row.id,
        display_name: row.display_name,
        description: row.description,
        state: row.state,
        version: row.version,
        created_at: Some(timestamp(row.created_at)),
        updated_at: Some(timestamp(row.updated_at)),
        deleted_at: row.deleted_at.map(timestamp),
    }
}

#[tonic::async_trait]
impl tenants_server::Tenants for TenantsApi {
    async fn create(&self, request: Request<CreateTenantRequest>) -> Result<Response<Tenant>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.tenant_create(&ctx, request.into_inner()).await?)))
    }

    async fn get(&self, request: Request<GetTenantRequest>) -> Result<Response<Tenant>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.tenant_get(&ctx, request.into_inner()).await?)))
    }

    async fn list(&self, request: Request<ListTenantsRequest>) -> Result<Response<ListTenantsResponse>, Status> {
        let ctx = context(&request)?;
        let tenants = self.service.tenant_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListTenantsResponse { tenants: tenants.into_iter().map(view).collect() }))
    }

    async fn update(&self, request: Request<UpdateTenantRequest>) -> Result<Response<Tenant>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.tenant_update(&ctx, request.into_inner()).await?)))
    }

    async fn delete(&self, request: Request<DeleteTenantRequest>) -> Result<Response<Tenant>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.tenant_delete(&ctx, request.into_inner()).await?)))
    }
}
