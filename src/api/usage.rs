//! `bettercompute.compute.v1.Usage`: the ledger the worker's metering writes, read-only.

use tonic::{Request, Response, Status};

use super::handlers::Handlers;
use super::{context, timestamp};
use crate::proto::compute::{ListUsageRequest, ListUsageResponse, UsageRecord, usage_server};
use crate::store::UsageRow;

fn usage_record_view(row: UsageRow) -> UsageRecord {
    UsageRecord {
        meter: row.meter,
        resource_id: row.resource_id,
        tenant_id: row.tenant_id,
        hour: Some(timestamp(row.hour)),
        quantity: row.quantity,
    }
}

#[tonic::async_trait]
impl usage_server::Usage for Handlers {
    async fn list(&self, request: Request<ListUsageRequest>) -> Result<Response<ListUsageResponse>, Status> {
        let ctx = context(&request)?;
        let rows = self.service.usage_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListUsageResponse { usage: rows.into_iter().map(usage_record_view).collect() }))
    }
}
