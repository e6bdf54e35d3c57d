//! `bettercompute.platform.v1.Pools`: The operator's pools.

use super::handlers::thin_service;
use super::views::stamps;
use crate::proto::platform::{
    CreatePoolRequest, DeletePoolRequest, GetPoolRequest, ListPoolsRequest, ListPoolsResponse, Pool, UpdatePoolRequest,
    pools_server,
};
use crate::store::PoolRow;

fn pool_view(row: PoolRow) -> Pool {
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
        state: row.state.to_string(),
        ..stamps(row.version, row.created_at, row.updated_at, row.deleted_at)
    }
}

thin_service! {
    impl pools_server::Pools: Pool by pool_view;
    create(CreatePoolRequest) pool_create, update(UpdatePoolRequest) pool_update, delete(DeletePoolRequest) pool_delete;
    list(ListPoolsRequest) pool_list -> ListPoolsResponse { pools };
    and {
        async fn get(&self, request: tonic::Request<GetPoolRequest>) -> Result<tonic::Response<Pool>, tonic::Status> {
            let ctx = super::context(&request)?;
            let pool = self.service.pool_get(&ctx, request.into_inner()).await?;
            let nodes = self.service.pool_node_summary(&pool.id).await?;
            Ok(tonic::Response::new(Pool { nodes: Some(super::nodes::pool_node_summary_view(nodes)), ..pool_view(pool) }))
        }
    }
}
