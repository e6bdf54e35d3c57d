//! `bettercompute.compute.v1.Orphans`: the provider objects forced deletes may have left
//! behind, and an operator's dismissal of one.

use tonic::{Request, Response, Status};

use super::handlers::Handlers;
use super::{context, timestamp};
use crate::proto::compute::{DismissOrphanRequest, ListOrphansRequest, ListOrphansResponse, Orphan, orphans_server};
use crate::store::OrphanRow;

fn orphan_view(row: OrphanRow) -> Orphan {
    Orphan {
        id: row.id,
        tenant_id: row.tenant_id,
        resource_id: row.resource_id,
        resource_kind: row.resource_kind,
        provider: row.provider,
        account_id: row.account_id,
        kind: row.kind,
        name: row.name,
        provider_id: row.provider_id,
        reason: row.reason,
        status: row.status,
        last_error: row.last_error,
        created_at: Some(timestamp(row.created_at)),
        updated_at: Some(timestamp(row.updated_at)),
        location: row.location,
    }
}

#[tonic::async_trait]
impl orphans_server::Orphans for Handlers {
    async fn list(&self, request: Request<ListOrphansRequest>) -> Result<Response<ListOrphansResponse>, Status> {
        let ctx = context(&request)?;
        let rows = self.service.orphan_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListOrphansResponse { orphans: rows.into_iter().map(orphan_view).collect() }))
    }

    async fn dismiss(&self, request: Request<DismissOrphanRequest>) -> Result<Response<Orphan>, Status> {
        let ctx = context(&request)?;
        let row = self.service.orphan_dismiss(&ctx, request.into_inner()).await?;
        Ok(Response::new(orphan_view(row)))
    }
}
