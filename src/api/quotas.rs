//! `bettercompute.platform.v1.Quotas`: Quotas of tenants on pools.

use tonic::{Request, Response, Status};

use super::{context, timestamp};
use crate::proto::platform::{
    CreateQuotaRequest, DeleteQuotaRequest, GetQuotaRequest, ListQuotasRequest, ListQuotasResponse, Quota,
    UpdateQuotaRequest, quotas_server,
};
use crate::service::Service;
use crate::store::QuotaRow;

/// The gRPC service of quotas.
#[derive(Debug)]
pub struct QuotasApi {
    service: Service,
}

impl QuotasApi {
    /// The service over `service`.
    pub fn server(service: Service) -> quotas_server::QuotasServer<Self> {
        quotas_server::QuotasServer::new(Self { service })
    }
}

fn view(row: QuotaRow) -> Quota {
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

#[tonic::async_trait]
impl quotas_server::Quotas for QuotasApi {
    async fn create(&self, request: Request<CreateQuotaRequest>) -> Result<Response<Quota>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.quota_create(&ctx, request.into_inner()).await?)))
    }

    async fn get(&self, request: Request<GetQuotaRequest>) -> Result<Response<Quota>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.quota_get(&ctx, request.into_inner()).await?)))
    }

    async fn list(&self, request: Request<ListQuotasRequest>) -> Result<Response<ListQuotasResponse>, Status> {
        let ctx = context(&request)?;
        let rows = self.service.quota_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListQuotasResponse { quotas: rows.into_iter().map(view).collect() }))
    }

    async fn update(&self, request: Request<UpdateQuotaRequest>) -> Result<Response<Quota>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.quota_update(&ctx, request.into_inner()).await?)))
    }

    async fn delete(&self, request: Request<DeleteQuotaRequest>) -> Result<Response<Quota>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.quota_delete(&ctx, request.into_inner()).await?)))
    }
}
