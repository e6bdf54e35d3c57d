//! `bettercompute.compute.v1.Pools`: the pools a tenant can see, and `checkPlacement`, which
//! runs a create's pool checks without booking.

use tonic::{Request, Response, Status};

use super::context;
use super::handlers::Handlers;
use crate::proto::compute::{
    CheckPlacementRequest, CheckPlacementResponse, GetPoolRequest, ListPoolsRequest, ListPoolsResponse, Pool,
    PoolOffer, pools_server,
};
use crate::service::checks::{provider_capabilities, zones_and_regions};
use crate::store::VisiblePool;

fn visible_pool_view(tenant_id: &str, visible: VisiblePool) -> Pool {
    let (zones, regions) = zones_and_regions(&visible.pool.provider, &visible.locations);
    let pool = visible.pool;
    Pool {
        capabilities: provider_capabilities(&pool.provider).iter().map(|c| (*c).to_owned()).collect(),
        id: pool.id,
        tenant_id: tenant_id.to_owned(),
        name: pool.name,
        description: pool.description,
        provider: pool.provider,
        provider_account_id: pool.account_id,
        billing_mode: pool.billing_mode,
        state: pool.state.to_string(),
        zones,
        regions,
        own: visible.own,
        offer: visible.offer.map(|(state, excluded_regions)| PoolOffer { state: state.to_string(), excluded_regions }),
        // On `get` only: a list would count every pool's nodes.
        nodes: None,
    }
}

#[tonic::async_trait]
impl pools_server::Pools for Handlers {
    async fn list(&self, request: Request<ListPoolsRequest>) -> Result<Response<ListPoolsResponse>, Status> {
        let ctx = context(&request)?;
        let request = request.into_inner();
        let pools = self.service.pool_list_visible(&ctx, request.clone()).await?;
        Ok(Response::new(ListPoolsResponse {
            pools: pools.into_iter().map(|p| visible_pool_view(&request.tenant_id, p)).collect(),
        }))
    }

    async fn get(&self, request: Request<GetPoolRequest>) -> Result<Response<Pool>, Status> {
        let ctx = context(&request)?;
        let request = request.into_inner();
        let pool = self.service.pool_get_visible(&ctx, request.clone()).await?;
        let nodes = self.service.pool_node_summary(&request.pool_id).await?;
        let view = visible_pool_view(&request.tenant_id, pool);
        Ok(Response::new(Pool { nodes: Some(super::nodes::pool_node_summary_view(nodes)), ..view }))
    }

    async fn check_placement(
        &self,
        request: Request<CheckPlacementRequest>,
    ) -> Result<Response<CheckPlacementResponse>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(self.service.pool_check_placement(&ctx, request.into_inner()).await?))
    }
}
