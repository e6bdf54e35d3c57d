//! `bettercompute.platform.v1.Pools`: The operator's pools.

use tonic::{Request, Response, Status};

use super::{context, timestamp};
use crate::proto::platform::{
    CreatePoolRequest, DeletePoolRequest, GetPoolRequest, ListPoolsRequest, ListPoolsResponse, Pool, UpdatePoolRequest,
    pools_server,
};
use crate::service::Service;
use crate::store::PoolRow;

/// The gRPC service of pools.
#[derive(Debug)]
pub struct PoolsApi {
    service: Service,
}

impl PoolsApi {
    /// The service over `service`.
    pub fn server(service: Service) -> pools_server::PoolsServer<Self> {
        pools_server::PoolsServer::new(Self { service })
    }
}

fn view(row: PoolRow) -> Pool {
    let policy = match row.policy {
        serde_json::Value::Object(map) => crate::error::json_to_struct(&map),
        _ => prost_types::Struct::default(),
    };
    Pool {
        id: row.id,
        account_id: row.account_id,
        tenant_id: row.tenant_id.unwrap_or_default(),
        provider: row.provider,
        name: row.name,
        description: row.description,
        billing_mode: row.billing_mode,
        policy: Some(policy),
        prices: row.prices.into_iter().collect(),
        state: row.state,
        version: row.version,
        created_at: Some(timestamp(row.created_at)),
        updated_at: Some(timestamp(row.updated_at)),
        deleted_at: row.deleted_at.map(timestamp),
    }
}

#[tonic::async_trait]
impl pools_server::Pools for PoolsApi {
    async fn create(&self, request: Request<CreatePoolRequest>) -> Result<Response<Pool>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.pool_create(&ctx, request.into_inner()).await?)))
    }

    async fn get(&self, request: Request<GetPoolRequest>) -> Result<Response<Pool>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.pool_get(&ctx, request.into_inner()).await?)))
    }

    async fn list(&self, request: Request<ListPoolsRequest>) -> Result<Response<ListPoolsResponse>, Status> {
        let ctx = context(&request)?;
        let rows = self.service.pool_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListPoolsResponse { pools: rows.into_iter().map(view).collect() }))
    }

    async fn update(&self, request: Request<UpdatePoolRequest>) -> Result<Response<Pool>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.pool_update(&ctx, request.into_inner()).await?)))
    }

    async fn delete(&self, request: Request<DeletePoolRequest>) -> Result<Response<Pool>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.pool_delete(&ctx, request.into_inner()).await?)))
    }
}
